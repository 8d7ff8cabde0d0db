"""Hand-written CUDA kernels under the oracle, on the CPU emulation of CUDA: the example passes,
wrong kernels of the catalogue (tests/oracle/cuda_kernels) are caught with what is wrong, and the
Python replay line in the message reruns the same kernel on the same case."""

import pathlib
import re

import numpy as np
import pytest

import uops
import uops.testing

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cuda" / "softmax.cu"
KERNELS = ROOT / "tests" / "oracle" / "cuda_kernels"

ROWS = ["x", "y", "x_n0", "x_n1"]
FLAT = ["x", "y", "x_n0 * x_n1"]


def replay_line(message):
    """The Python replay call an AssertionError's message ends with."""
    found = re.search(r"replay from Python: (uops\.testing\.replay_cuda\(.*\))$", message,
                      re.MULTILINE)
    assert found, message
    return found.group(1)


def test_the_example_softmax_kernel_passes_on_the_emulation():
    report = uops.testing.check_cuda("softmax", path=EXAMPLE, entry="softmax_rows", args=ROWS,
                                     grid="min(x_n0, 1024)", block="256", target="emulation",
                                     trials=20)
    assert report.passed and report.cases == 20 and report.backend == "cuda-emulation"
    # The same, its source given as text, and with the enum for the target.
    report = uops.testing.check_cuda("softmax", source=EXAMPLE.read_text(), file="softmax.cu",
                                     entry="softmax_rows", args=ROWS, grid="min(x_n0, 1024)",
                                     block="96", target=uops.CudaTarget.emulation, trials=5)
    assert report.passed and report.cases == 5


def test_an_out_of_bounds_shared_write_is_caught_and_replayed():
    path = KERNELS / "softmax_shared_one_short.cu"
    launch = dict(path=path, entry="softmax_warp<128>", args=ROWS, grid="x_n0", block="128",
                  target="emulation")
    with pytest.raises(AssertionError) as failure:
        uops.testing.check_cuda("softmax", **launch)
    message = str(failure.value)
    assert "CUDA emulation: " in message and "out of bounds" in message
    assert "softmax_shared_one_short.cu" in message
    line = replay_line(message)
    assert line.startswith(f"uops.testing.replay_cuda('softmax', 'softmax f32 seed=")
    assert f"path={str(path)!r}" in line and "entry='softmax_warp<128>'" in line
    # The replay reruns the kernel on the shrunk case, and it fails the same way.
    with pytest.raises(AssertionError) as again:
        eval(line, {"uops": uops})
    assert "out of bounds" in str(again.value)
    assert replay_line(str(again.value)) == line


def test_a_launch_rule_that_drops_the_tail_disagrees_and_a_source_replays_by_value():
    source = (KERNELS / "relu.cu").read_text()
    with pytest.raises(AssertionError) as failure:
        uops.testing.check_cuda("relu", source=source, file="relu.cu", entry="relu_kernel",
                                args=FLAT, grid="max(x_n0 * x_n1 / 256, 1)", block="256",
                                target="emulation")
    message = str(failure.value)
    assert "relu on cuda-emulation (f32): the implementation disagrees" in message
    assert "CUDA emulation: " not in message  # no detector: the values alone are wrong
    line = replay_line(message)
    # relu.cu is not a file here: the replay carries the source itself.
    assert f"source={source!r}, file='relu.cu'" in line
    with pytest.raises(AssertionError) as again:
        eval(line, {"uops": uops})
    assert "disagrees" in str(again.value)
    # The right launch rule passes.
    uops.testing.check_cuda("relu", source=source, file="relu.cu", entry="relu_kernel", args=FLAT,
                            grid="(x_n0 * x_n1 + 255) / 256", block="256", target="emulation",
                            trials=10)


def test_a_kernel_is_an_implementation_for_check_replay_and_calls():
    kernel = uops.CudaKernel(source=(KERNELS / "relu.cu").read_text(), file="relu.cu",
                             entry="relu_kernel", args=FLAT, grid="(x_n0 * x_n1 + 255) / 256",
                             block="256")
    assert kernel.args == FLAT and kernel.shared_bytes == "0" and "relu_kernel" in repr(kernel)
    impl = uops.cuda_kernel("relu", kernel, "emulation")
    assert impl.op == "relu" and impl.backend == "cuda-emulation"
    report = uops.check("relu", impl, trials=5)
    assert report.passed and report.backend == "cuda-emulation"
    assert uops.replay("relu", impl, "relu f32 seed=3 x=[5,300]").passed
    x = np.linspace(-2, 2, 600, dtype=np.float32).reshape(2, 300)
    np.testing.assert_array_equal(impl(x), np.maximum(x, 0))
    with pytest.raises(uops.Error, match="one of relu, not of softmax"):
        uops.check("softmax", impl)
    with pytest.raises(uops.Error, match="takes 1 inputs, got 2"):
        impl(x, x)
    # check_cuda_kernel is the same check in one call.
    assert uops.check_cuda_kernel("relu", kernel, target="emulation", trials=3).passed


def test_a_malformed_launch_rule_or_target_is_an_error():
    launch = dict(path=EXAMPLE, entry="softmax_rows", args=ROWS, block="256", target="emulation")
    with pytest.raises(uops.Error, match="grid"):
        uops.testing.check_cuda("softmax", grid="min(x_n0, ", **launch)
    with pytest.raises(uops.Error, match="unknown type 'i8'"):
        uops.testing.check_cuda("softmax", path=EXAMPLE, entry="softmax_rows",
                                args=["x", "y", "x_n0:i8", "x_n1"], grid="x_n0", block="256")
    with pytest.raises(uops.Error, match="unknown CUDA target 'gpu'"):
        uops.cuda_kernel_backend("gpu")
    with pytest.raises(TypeError, match="source or its path"):
        uops.testing.check_cuda("softmax", entry="softmax_rows", args=ROWS)
    assert uops.cuda_kernel_backend("emulation") == "cuda-emulation"
    assert uops.cuda_kernel_backend() in ("cuda", "cuda-emulation")
    if uops.cuda_kernel_backend() == "cuda-emulation":
        with pytest.raises(uops.Error, match="no CUDA device"):
            uops.cuda_kernel_backend("device")
