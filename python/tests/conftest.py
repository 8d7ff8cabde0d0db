"""Shared fixtures: NumPy reference kernels, right and wrong."""

import numpy as np
import pytest


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_without_max_shift(x):
    """Overflows on large inputs: the bug the oracle's "large" values are drawn for."""
    e = np.exp(x)
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(autouse=True)
def no_replay_variable(monkeypatch):
    """A UOPS_ORACLE_REPLAY left in the environment would change every check; tests set it."""
    monkeypatch.delenv("UOPS_ORACLE_REPLAY", raising=False)
