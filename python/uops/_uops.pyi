"""Types of the extension module uops._uops (re-exported by the package uops)."""

import enum
from typing import IO, Any, Callable, Mapping, Sequence, Union

import numpy
import numpy.typing

DTypeLike = Union["DType", str, numpy.typing.DTypeLike]
ArrayLike = numpy.typing.ArrayLike
Shapes = Mapping[str, Sequence[int]]
Params = Mapping[str, int]

class Error(Exception):
    """Bad input to uops: a message naming the culprit, as the C++ uops::Error gives."""

class LimitError(Error):
    """Valid input past a resource limit: the oracle skips such a case."""

class InternalError(RuntimeError):
    """A broken invariant inside uops: a bug in uops, not in the input."""

class DType(enum.Enum):
    """Element types: f32 and f64 carry values, i32 indices."""
    f32: int
    f64: int
    i32: int

f32: DType
f64: DType
i32: DType

class UnaryOp(enum.Enum):
    """The unary uop's operators."""
    neg: int
    abs: int
    exp: int
    log: int
    sqrt: int
    rsqrt: int
    recip: int
    tanh: int
    sigmoid: int
    sin: int
    cos: int
    floor: int

class BinaryOp(enum.Enum):
    """The binary uop's operators."""
    add: int
    sub: int
    mul: int
    div: int
    pow: int
    max: int
    min: int
    eq: int
    ne: int
    lt: int
    le: int

class ReduceOp(enum.Enum):
    """The reduce uop's operators."""
    sum: int
    prod: int
    mean: int
    max: int
    min: int
    argmax: int
    argmin: int

class Node:
    """A node of a Graph: the tensor one uop gives."""
    @property
    def id(self) -> int:
        """The node's position in its graph."""

class Graph:
    """A uop graph: how an op is described (docs/design.md 3.3)."""
    def __init__(self) -> None:
        """An empty graph."""
    def param(self, name: str) -> None:
        """Declares an integer parameter that expressions may use as `$name`."""
    def input(self, name: str, rank: int, dtype: DTypeLike = ...) -> Node:
        """An input tensor of the given rank and dtype."""
    def reindex(self, x: Node, shape: Sequence[str], index: Sequence[str],
                sources: Sequence[Node] = ..., fill: float = 0.0) -> Node:
        """out[i] = x[index(i)], `fill` outside x."""
    def iota(self, shape: Sequence[str], value: str, sources: Sequence[Node] = ...,
             dtype: DTypeLike = ...) -> Node:
        """out[i] = value(i), an index expression over the output axes, sizes and parameters."""
    def cast(self, x: Node, dtype: DTypeLike) -> Node:
        """x converted to `dtype`."""
    def unary(self, op: Union[UnaryOp, str], x: Node) -> Node:
        """op(x) elementwise."""
    def binary(self, op: Union[BinaryOp, str], x: Node, y: Node) -> Node:
        """op(x, y) elementwise over equal shapes."""
    def ternary(self, cond: Node, a: Node, b: Node) -> Node:
        """cond ? a : b elementwise."""
    def reduce(self, op: Union[ReduceOp, str], axes: Sequence[int], x: Node) -> Node:
        """Reduces `axes` of x (they keep size 1)."""
    def select(self, axis: int, x: Node, index: Node) -> Node:
        """out[i] = x[i with `axis` replaced by index[i]]; out-of-range indices read 0."""
    def fill(self, like: Node, value: float) -> Node:
        """A tensor shaped like `like` whose every element is `value`."""
    def stop_gradient(self, x: Node) -> Node:
        """x's value, through which no gradient flows back (JAX's stop_gradient)."""
    def squeeze(self, x: Node, axes: Sequence[int]) -> Node:
        """x without `axes`, each of size 1."""
    def assert_equal(self, a: str, b: str, sources: Sequence[Node] = ...) -> None:
        """Asserts that two shape expressions are equal."""
    def output(self, name: str, x: Node) -> None:
        """Makes x an output."""
    def rank(self, x: Node) -> int:
        """The rank of a node."""
    def shape_text(self, x: Node) -> str:
        """A node's shape over the inputs' sizes."""
    @property
    def outputs(self) -> list[str]:
        """The output names, in order."""
    @property
    def params(self) -> list[str]:
        """The declared parameters."""
    def __len__(self) -> int:
        """The number of nodes."""

class Program:
    """A loop-block program (docs/design.md 3.4)."""
    @property
    def inputs(self) -> list[str]:
        """The input names, in tensor-table order."""
    @property
    def outputs(self) -> list[str]:
        """The output names, in tensor-table order."""
    @property
    def params(self) -> list[str]:
        """The parameters, in order."""
    @property
    def blocks(self) -> int:
        """The number of loop blocks."""

def lower(graph: Graph) -> Program:
    """The graph's loop program, one block per uop."""
def optimize(program: Program, dump_after: str = "", verify: bool = False,
             dump: IO[str] | None = None) -> Program:
    """The optimization pipeline, optionally printing the program after a pass."""
def plan_cpu(program: Program, dump_after: str = "", verify: bool = False,
             dump: IO[str] | None = None) -> Program:
    """The C backend's passes; their decisions show in the loops' plans."""
def fix_params(program: Program, params: Mapping[str, int]) -> Program:
    """`program` for these parameter values: each is asserted, and the C and CUDA backends print
    it as a constant."""
def pass_names() -> list[str]:
    """The pass names `dump_after` accepts: optimize's, then plan_cpu's."""
def gradient(graph: Graph, wrt: Sequence[str], prefix: str = ...,
             saved: Sequence[int] = ...) -> Program:
    """The reverse-mode gradient program of `graph` with respect to the inputs in `wrt`; the
    node ids in `saved` are given as inputs saved<id> instead of recomputed."""
def gradient_graph(graph: Graph, wrt: Sequence[str], prefix: str = ...,
                   saved: Sequence[int] = ...) -> Graph:
    """The reverse-mode gradient as a uop Graph (differentiable again)."""
def gradient_residuals(graph: Graph, wrt: Sequence[str]) -> list[int]:
    """The forward node ids whose values the gradient reads: what to pass as `saved`."""
def with_saved_outputs(graph: Graph, saved: Sequence[int]) -> Graph:
    """`graph` with an output saved<id> per id in `saved`: the forward pass that keeps them."""
def jvp(graph: Graph, wrt: Sequence[str], prefix: str = ...) -> Graph:
    """Forward mode as a Graph: tangents <prefix><input> in, <prefix><output> out."""
def hvp(graph: Graph, wrt: Sequence[str]) -> Graph:
    """The Hessian-vector product as a Graph (forward over reverse)."""
def gradient_program(op: Union[str, OpDef], dtype: DTypeLike = ...) -> Program:
    """The gradient program of a registered op (unoptimized)."""

class Executable:
    """A program prepared by a backend, run on any inputs of matching dtypes."""
    def run(self, inputs: Mapping[str, ArrayLike],
            params: Params = ...) -> dict[str, numpy.ndarray]:
        """Runs the program; returns the outputs as NumPy arrays."""
    @property
    def backend(self) -> str:
        """"interp", "c" or "cuda"."""
    @property
    def program(self) -> Program:
        """The program it runs."""

def compile(program: Program, backend: str = "interp") -> Executable:
    """The program on a backend: "interp", "c" or "cuda"."""
def compile_c(program: Program, *, compiler: str = "", openmp: bool = True, threads: int = 0,
              reassociate: bool = True, vector_math: bool = True, target: str = "native",
              extra_flags: Sequence[str] = ...) -> Executable:
    """The program compiled to C with the given options."""
def emit(program: Program, target: str = "c", *, compiler: str = "", openmp: bool = True,
         threads: int = 0, reassociate: bool = True, vector_math: bool = True,
         arch: str = "native", extra_flags: Sequence[str] = ...) -> str:
    """The source a backend compiles: "c" or "cuda"."""
def available_backends() -> list[str]:
    """The backends that can run here."""
def cuda_unavailable_reason() -> str:
    """Why the CUDA backend cannot run here, or "" when it can."""

class OpInput:
    """An input of an op: its name, rank and kind."""
    def __init__(self, name: str, rank: int, is_index: bool = False,
                 differentiable: bool = True, nonzero: bool = False,
                 values: Callable[[dict[str, list[int]], dict[str, int]],
                                  tuple[int, int]] | None = None) -> None:
        """An input; `values` gives an i32 input's (lo, hi) for a case."""
    @property
    def name(self) -> str:
        """The input's name."""
    @property
    def rank(self) -> int:
        """Its rank."""
    @property
    def is_index(self) -> bool:
        """Whether it is an i32 input."""
    @property
    def differentiable(self) -> bool:
        """Whether it gets a gradient."""
    @property
    def nonzero(self) -> bool:
        """Whether its values are kept away from zero."""

class OpDef:
    """A registered op (read-only)."""
    @property
    def name(self) -> str:
        """The op's name."""
    @property
    def inputs(self) -> list[OpInput]:
        """Its inputs, in order."""
    @property
    def outputs(self) -> list[str]:
        """Its output names, in order."""
    @property
    def params(self) -> list[str]:
        """Its parameter names."""
    @property
    def example_shapes(self) -> dict[str, list[int]]:
        """The example's input shapes."""
    @property
    def example_params(self) -> dict[str, int]:
        """The example's parameters."""
    @property
    def origin(self) -> str:
        """"builtin", "user" or "library"."""
    @property
    def library(self) -> str:
        """The op library that registered it, if any."""
    @property
    def values(self) -> list[str]:
        """The value distributions random cases draw from."""
    def build(self, dtype: DTypeLike = ...) -> Graph:
        """The op's uop graph for a float dtype."""

def register_op(name: str, build: Callable[[DType], Graph], inputs: Sequence[OpInput],
                outputs: Sequence[str], params: Sequence[str] = ...,
                example_shapes: Shapes = ..., example_params: Params = ...,
                param_ranges: Mapping[str, tuple[int, int]] = ...,
                invalid: Callable[[dict[str, list[int]], dict[str, int]], str | None] | None = None,
                values: Sequence[str] = ...) -> OpDef:
    """Registers an op described in Python."""
def find_op(name: str) -> OpDef:
    """The registered op of that name."""
def all_ops() -> list[OpDef]:
    """Every registered op."""
def forward_program(op: Union[str, OpDef], dtype: DTypeLike = ...) -> Program:
    """The op's canonical forward program (lowered, unoptimized)."""
def differentiable_inputs(op: Union[str, OpDef]) -> list[str]:
    """The inputs of the op that get a gradient, in order."""
def load_op_library(path: str) -> None:
    """Loads a shared library of ops and registers its ops."""

class Case:
    """One case of an op: shapes, parameters and a seed."""
    @property
    def op(self) -> str:
        """The op's name."""
    @property
    def dtype(self) -> DType:
        """The float dtype."""
    @property
    def seed(self) -> int:
        """Picks the sizes and parameters, then values."""
    @property
    def shapes(self) -> dict[str, list[int]]:
        """The inputs' shapes."""
    @property
    def params(self) -> dict[str, int]:
        """The parameters."""

class Mismatch:
    """The worst element of a failed comparison."""
    @property
    def output(self) -> str:
        """The output's name."""
    @property
    def index(self) -> list[int]:
        """The element's index."""
    @property
    def expected(self) -> float:
        """The canonical value."""
    @property
    def got(self) -> float:
        """The implementation's value."""
    @property
    def abs_error(self) -> float:
        """|got - expected|."""
    @property
    def scaled_error(self) -> float:
        """The error in units of the tolerance (> 1 fails)."""

class CheckReport:
    """What uops.check found."""
    op: str
    backend: str
    dtype: DType
    cases: int
    skipped: int
    passed: bool
    has_reference: bool
    worst_error: float
    reference_error: float
    seconds: float
    culprit: str
    original: Case
    shrunk: Case
    mismatch: Mismatch | None
    problem: str
    error: str
    replay: str
    repro: str
    def message(self) -> str:
        """The report in a few lines, as the C++ oracle says it."""

class CudaTarget(enum.Enum):
    """Where a CUDA kernel runs: the GPU where there is one, the GPU, or the CPU emulation."""
    automatic: int
    device: int
    emulation: int

CudaTargetLike = Union[CudaTarget, str]

class CudaKernel:
    """A hand-written CUDA kernel for an op, with its launch rule."""
    def __init__(self, *, source: str = "", file: str = "", entry: str = "",
                 args: Sequence[str] = ..., grid: str = "1", block: str = "1",
                 shared_bytes: str = "0") -> None:
        """A kernel; every field is a keyword argument."""
    source: str
    file: str
    entry: str
    args: list[str]
    grid: str
    block: str
    shared_bytes: str

class Implementation:
    """An implementation of an op in C++, such as a CUDA kernel."""
    @property
    def op(self) -> str:
        """The op's name."""
    @property
    def backend(self) -> str:
        """Where it runs: "cuda" or "cuda-emulation"."""
    def __call__(self, *inputs: ArrayLike,
                 **params: int) -> numpy.ndarray | dict[str, numpy.ndarray]:
        """Runs it on the inputs, in the op's order, and the parameters by name."""

Kernel = Union[Callable[..., Any], Implementation]

def check(op: Union[str, OpDef], fn: Kernel, *, dtype: DTypeLike = ..., trials: int = 50,
          seed: int = 1, shrink: bool = True, against_eigen: bool = True, backend: str = "",
          max_elements: int = ...) -> CheckReport:
    """Checks `fn` against the op on random cases."""
def replay(op: Union[str, OpDef], fn: Kernel, case: str, *, dtype: DTypeLike = ...,
           trials: int = 50, seed: int = 1, shrink: bool = True, against_eigen: bool = True,
           backend: str = "", max_elements: int = ...) -> CheckReport:
    """Reruns one case, given as a report's `replay` text, on `fn`."""
def case_inputs(op: Union[str, OpDef], case: Union[Case, str]) -> dict[str, numpy.ndarray]:
    """The input arrays of a case, as the oracle gives them to fn."""
def cuda_kernel(op: Union[str, OpDef], kernel: CudaKernel,
                target: CudaTargetLike = "auto") -> Implementation:
    """The implementation that runs `kernel` for the op, for check and replay."""
def check_cuda_kernel(op: Union[str, OpDef], kernel: CudaKernel, target: CudaTargetLike = "auto",
                      *, dtype: DTypeLike = ..., trials: int = 50, seed: int = 1,
                      shrink: bool = True, against_eigen: bool = True, backend: str = "",
                      max_elements: int = ...) -> CheckReport:
    """Checks a hand-written CUDA kernel against the op on random cases."""
def cuda_kernel_backend(target: CudaTargetLike = "auto") -> str:
    """Where a CUDA kernel for `target` runs here: "cuda" or "cuda-emulation"."""
