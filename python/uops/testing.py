"""The oracle as pytest assertions.

    import uops.testing

    def test_my_softmax():
        uops.testing.check("softmax", my_softmax)

A failing check raises AssertionError whose message is the oracle's report: the first failing
case, the shrunk one, the worst element, and the replay. Setting UOPS_ORACLE_REPLAY to the
replay text reruns just that case, on the same test, unchanged.

A hand-written CUDA kernel is checked the same way, on the GPU or on the CPU emulation of CUDA
with its detectors (out of bounds, races, missed barriers, unwritten shared memory):

    def test_my_softmax_kernel():
        uops.testing.check_cuda("softmax", path="softmax.cu", entry="softmax_rows",
                                args=["x", "y", "x_n0", "x_n1"], grid="min(x_n0, 1024)",
                                block="256")
"""

import os
from typing import Any, Callable, Optional, Sequence, Union

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


Target = Union[str, _uops.CudaTarget]


def _cuda_kernel(source: Optional[str], path: Optional[Union[str, "os.PathLike[str]"]],
                 file: Optional[str], entry: str, args: Sequence[str], grid: str, block: str,
                 shared_bytes: str) -> _uops.CudaKernel:
    if (source is None) == (path is None):
        raise TypeError("give the kernel's source or its path, not both or neither")
    if path is not None:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        if file is None:
            file = os.fspath(path)
    return _uops.CudaKernel(source=source, file=file or "", entry=entry, args=list(args),
                            grid=grid, block=block, shared_bytes=shared_bytes)


def _cuda_replay_line(op: Op, kernel: _uops.CudaKernel, path: Any, target: Target,
                      case: str) -> str:
    """A call of replay_cuda that reruns ``kernel`` on ``case``: the source by its path where
    the path (or ``file``) holds it, else by value."""
    name = op if isinstance(op, str) else op.name
    where = os.fspath(path) if path is not None else kernel.file
    try:
        with open(where, encoding="utf-8") as f:
            by_path = f.read() == kernel.source
    except (OSError, ValueError):
        by_path = False
    source = f"path={where!r}" if by_path else f"source={kernel.source!r}, file={kernel.file!r}"
    target_name = target if isinstance(target, str) else target.name
    shared = f", shared_bytes={kernel.shared_bytes!r}" if kernel.shared_bytes != "0" else ""
    return (f"uops.testing.replay_cuda({name!r}, {case!r}, {source}, entry={kernel.entry!r}, "
            f"args={list(kernel.args)!r}, grid={kernel.grid!r}, block={kernel.block!r}{shared}, "
            f"target={target_name!r})")


def check_cuda(op: Op, source: Optional[str] = None, *,
               path: Optional[Union[str, "os.PathLike[str]"]] = None, file: Optional[str] = None,
               entry: str, args: Sequence[str], grid: str = "1", block: str = "1",
               shared_bytes: str = "0", target: Target = "auto",
               **options: Any) -> _uops.CheckReport:
    """Checks a hand-written CUDA kernel against ``op`` with :func:`uops.check_cuda_kernel`.

    The kernel is ``source`` (named ``file`` in messages) or the file at ``path`` (``file``
    defaults to it); ``entry``, ``args``, ``grid``, ``block`` and ``shared_bytes`` are
    :class:`uops.CudaKernel` 's, ``target`` a :class:`uops.CudaTarget` or its name ("auto",
    "device", "emulation"), and ``options`` those of :func:`uops.check`. Returns the report when
    every case passed; raises AssertionError whose message is the report (with what a detector of
    the emulation found) and a ``replay_cuda`` call that reruns the kernel on the shrunk case
    otherwise. A malformed launch rule or argument raises uops.Error.
    """
    __tracebackhide__ = True
    kernel = _cuda_kernel(source, path, file, entry, args, grid, block, shared_bytes)
    report = _uops.check_cuda_kernel(op, kernel, target, **options)
    if not report.passed:
        raise AssertionError(report.message() + "  replay from Python: " +
                             _cuda_replay_line(op, kernel, path, target, report.replay) + "\n")
    return report


def replay_cuda(op: Op, case: str, source: Optional[str] = None, *,
                path: Optional[Union[str, "os.PathLike[str]"]] = None, file: Optional[str] = None,
                entry: str, args: Sequence[str], grid: str = "1", block: str = "1",
                shared_bytes: str = "0", target: Target = "auto",
                **options: Any) -> _uops.CheckReport:
    """Reruns one case (a report's ``replay`` text) on a CUDA kernel given as to
    :func:`check_cuda`, with :func:`uops.replay`.

    Returns the report when it passes; raises AssertionError with the report otherwise.
    """
    __tracebackhide__ = True
    kernel = _cuda_kernel(source, path, file, entry, args, grid, block, shared_bytes)
    report = _uops.replay(op, _uops.cuda_kernel(op, kernel, target), case, **options)
    if not report.passed:
        raise AssertionError(report.message() + "  replay from Python: " +
                             _cuda_replay_line(op, kernel, path, target, report.replay) + "\n")
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
