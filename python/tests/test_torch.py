"""PyTorch CPU functions under the oracle, and tensors as inputs. Optional: skipped without torch."""

import numpy as np
import pytest

import uops
import uops.testing

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: python3-torch)")


def test_a_torch_softmax_passes_and_a_wrong_one_is_caught():
    uops.testing.check("softmax", uops.testing.torch_kernel(lambda x: torch.softmax(x, dim=1)),
                       trials=30)
    wrong = uops.testing.torch_kernel(lambda x: torch.softmax(x, dim=0))
    with pytest.raises(AssertionError, match="shrunk: x=(1,2|2,1)"):
        uops.testing.check("softmax", wrong, trials=30)


def test_a_torch_conv2d_with_parameters_is_checked():
    def conv2d(x, w, stride, pad, dilation):
        # uops' conv2d is NHWC with OHWI weights; torch's is NCHW with OIHW.
        y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2),
                                       stride=stride, padding=pad, dilation=dilation)
        return y.permute(0, 2, 3, 1).contiguous()

    report = uops.check("conv2d", uops.testing.torch_kernel(conv2d), trials=20, dtype="f64")
    assert report.passed, report.message()


def test_cpu_tensors_are_taken_as_run_inputs():
    p = uops.optimize(uops.forward_program("transpose", "f32"))
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = uops.compile(p).run({"x": x})
    np.testing.assert_array_equal(out["y"], x.numpy().T)
    with pytest.raises(uops.Error, match="input 'x' has dtype int64"):
        uops.compile(p).run({"x": torch.arange(6).reshape(2, 3)})
