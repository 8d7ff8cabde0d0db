"""The oracle as pytest assertions.

    import uops.testing

    def test_my_softmax():
        uops.testing.check("softmax", my_softmax)

A failing check raises AssertionError whose message is the oracle's report: the first failing
case, the shrunk one, the worst element, and the replay. Setting UOPS_ORACLE_REPLAY to the
replay text reruns just that case, on the same test, unchanged.
"""

from typing import Any, Callable, Union

from . import _uops

Op = Union[str, _uops.OpDef]


def _report_message(report: _uops.CheckReport, op: Op, fn: Callable[..., Any]) -> str:
    name = op if isinstance(op, str) else op.name
    fn_name = getattr(fn, "__qualname__", None) or repr(fn)
    return (report.message() + f"  replay from Python: uops.testing.replay({name!r}, {fn_name}, "
            f"{report.replay!r})\n")


def check(op: Op, fn: Callable[..., Any], **options: Any) -> _uops.CheckReport:
    """Checks ``fn`` against ``op`` with :func:`uops.check` and the same options.

    Returns the report when every case passed; raises AssertionError whose message is the
    report with its replay otherwise.
    """
    __tracebackhide__ = True
    report = _uops.check(op, fn, **options)
    if not report.passed:
        raise AssertionError(_report_message(report, op, fn))
    return report


def replay(op: Op, fn: Callable[..., Any], case: str, **options: Any) -> _uops.CheckReport:
    """Reruns one case (a report's ``replay`` text) on ``fn`` with :func:`uops.replay`.

    Returns the report when it passes; raises AssertionError with the report otherwise.
    """
    __tracebackhide__ = True
    report = _uops.replay(op, fn, case, **options)
    if not report.passed:
        raise AssertionError(_report_message(report, op, fn))
    return report


def torch_kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, a function of CPU ``torch.Tensor`` s, as one of NumPy arrays for :func:`check`.

    Inputs become tensors sharing the arrays' memory (``torch.from_numpy``); results are taken
    back with ``.detach().numpy()`` (a tuple or a dict of tensors is taken element by element).
    Needs PyTorch, imported on the first call.
    """
    def numpy_fn(*arrays: Any, **params: Any) -> Any:
        import torch

        def back(t: Any) -> Any:
            return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t

        result = fn(*(torch.from_numpy(a) for a in arrays), **params)
        if isinstance(result, dict):
            return {k: back(v) for k, v in result.items()}
        if isinstance(result, (tuple, list)):
            return tuple(back(v) for v in result)
        return back(result)

    numpy_fn.__qualname__ = getattr(fn, "__qualname__", "torch_kernel")
    return numpy_fn
