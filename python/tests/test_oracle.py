"""The oracle on Python callables: caught, shrunk and replayed on the same callable."""

import numpy as np
import pytest

import uops
import uops.testing
from conftest import softmax, softmax_without_max_shift


def test_a_correct_numpy_softmax_passes():
    report = uops.check("softmax", softmax, trials=30)
    assert report.passed and report.cases == 30 and report.has_reference
    assert report.worst_error < 1
    assert "30 cases passed" in report.message()
    uops.testing.check("softmax", softmax, dtype="f64", trials=30)


def test_a_wrong_numpy_softmax_is_caught_shrunk_and_replayed():
    shapes_seen = []

    def kernel(x):
        shapes_seen.append(x.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            return softmax_without_max_shift(x)

    report = uops.check("softmax", kernel, trials=50)
    assert not report.passed and report.culprit == "implementation"
    # Shrunk: never larger than the first failing case, and here all the way down.
    original, shrunk = report.original.shapes["x"], report.shrunk.shapes["x"]
    assert np.prod(shrunk) <= np.prod(original)
    assert shrunk == [1, 1]
    assert report.mismatch is not None and report.mismatch.output == "y"
    assert report.replay == str(report.shrunk) and report.replay.startswith("softmax f32 seed=")
    assert "shrunk: x=1,1" in report.message()

    # The replay reruns the same callable on the shrunk case, and it fails the same way.
    shapes_seen.clear()
    again = uops.replay("softmax", kernel, report.replay)
    assert shapes_seen[0] == (1, 1)
    assert not again.passed and again.cases == 1 and again.replay == report.replay
    # The inputs it failed on, to debug with.
    x = uops.case_inputs("softmax", report.replay)["x"]
    assert x.shape == (1, 1) and x.dtype == np.float32
    assert uops.check("softmax", softmax, trials=1).passed  # and the right one passes


def test_testing_check_raises_an_assertion_with_the_report_and_its_replay():
    def kernel(x):
        return x * 0

    with pytest.raises(AssertionError) as failure:
        uops.testing.check("relu", kernel, trials=20)
    message = str(failure.value)
    assert "relu on the implementation (f32): the implementation disagrees" in message
    assert "shrunk: x=1,1" in message
    assert "UOPS_ORACLE_REPLAY='relu f32 seed=" in message
    assert "uops.testing.replay('relu', test_testing_check_raises_an_assertion_with_the_report_and_its_replay.<locals>.kernel, 'relu f32 seed=" in message


def test_the_replay_variable_runs_that_case_first(monkeypatch):
    shapes = []

    def kernel(x):
        shapes.append(x.shape)
        return np.maximum(x, 0)

    monkeypatch.setenv("UOPS_ORACLE_REPLAY", "relu f32 seed=7 x=[3,5]")
    report = uops.testing.check("relu", kernel, trials=40)
    # The replayed case runs before the random ones and never replaces them.
    assert shapes[0] == (3, 5) and report.cases == len(shapes) > 1
    # Another op's case leaves this op's checks alone.
    shapes.clear()
    assert uops.check("softmax", softmax, trials=3).cases == 3


def test_an_exception_in_the_kernel_fails_the_case_with_its_type_and_message():
    def kernel(x):
        raise ValueError("my kernel is not done")

    report = uops.check("relu", kernel, trials=5)
    assert not report.passed
    assert report.error == "the implementation threw: ValueError: my kernel is not done"
    assert report.shrunk.shapes["x"] == [1, 1]


def test_a_result_of_the_wrong_dtype_or_shape_fails_clearly():
    report = uops.check("argmax", lambda x: np.argmax(x, axis=1, keepdims=True), trials=3)
    assert not report.passed and "output 'y' has dtype int64, which uops has no type for" in report.error
    right = uops.check("argmax", lambda x: np.argmax(x, axis=1, keepdims=True).astype(np.int32))
    assert right.passed, right.message()
    assert not uops.check("relu", lambda x: np.maximum(x, 0).astype(np.float64)).passed
    report = uops.check("relu", lambda x: np.maximum(x, 0)[:, :1], trials=3)
    assert not report.passed and "is f32 [1, 1], expected f32 [1, 2]" in report.problem


def test_parameters_are_keyword_arguments_and_outputs_may_be_dicts_or_tuples():
    def pad2d(x, pad):
        return {"y": np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))}

    uops.testing.check("pad2d", pad2d, trials=20)
    uops.testing.check("relu", lambda x: (np.maximum(x, 0),), trials=5)
    report = uops.check("relu", lambda x: (x, x), trials=1)
    assert "returned 2 values; relu has 1 outputs" in report.error


def test_a_limit_error_from_the_kernel_skips_the_case():
    def kernel(x):
        raise uops.LimitError("too big for me")

    report = uops.check("relu", kernel, trials=4)
    assert report.passed and report.cases == 0 and report.skipped == 4


def test_a_keyboard_interrupt_in_the_kernel_stops_the_check():
    def kernel(x):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        uops.check("relu", kernel, trials=5)


def test_bad_options_and_cases_are_errors():
    with pytest.raises(uops.Error, match="trials must be at least 1"):
        uops.check("relu", lambda x: x, trials=0)
    with pytest.raises(uops.Error, match="unknown op 'nope'|nope"):
        uops.check("nope", lambda x: x)
    with pytest.raises(uops.Error):
        uops.replay("relu", lambda x: x, "softmax f32 seed=1 x=[2,2]")
    with pytest.raises(uops.LimitError, match="too large"):
        uops.replay("relu", lambda x: x, "relu f32 seed=1 x=[100000,100000]")


def test_non_contiguous_results_are_taken_as_their_values():
    # x.T and a reversed view are views with strides, not copies: compared by value all the same.
    uops.testing.check("transpose", lambda x: x.T, trials=30)
    report = uops.check("transpose", lambda x: x.T[::-1], trials=30)
    assert not report.passed and report.shrunk.shapes["x"] == [1, 2]


def test_fn_must_be_callable():
    with pytest.raises(TypeError, match="fn must be callable"):
        uops.check("relu", 3)
