"""The examples in examples/python run to the end (each asserts what it shows)."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"


@pytest.mark.parametrize("name", ["softmax_numpy.py", "torch_function.py", "describe_op.py"])
def test_example_runs(name):
    result = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                            env=dict(os.environ), timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout or "skipped: PyTorch is not installed" in result.stdout
