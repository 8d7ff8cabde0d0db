"""uops from Python: describe tensor ops with micro-ops, generate and run kernels, check kernels.

Everything is the C++ library's (see README.md and docs/design.md); this package only converts
between Python and C++ values. ``uops.testing`` turns oracle checks into pytest assertions.
"""

from ._uops import (
    BinaryOp,
    Case,
    CheckReport,
    CudaKernel,
    CudaTarget,
    DType,
    Error,
    Executable,
    Graph,
    Implementation,
    InternalError,
    LimitError,
    Mismatch,
    Node,
    OpDef,
    OpInput,
    Program,
    ReduceOp,
    UnaryOp,
    all_ops,
    available_backends,
    case_inputs,
    check,
    check_cuda_kernel,
    compile,
    compile_c,
    cuda_kernel,
    cuda_kernel_backend,
    cuda_unavailable_reason,
    differentiable_inputs,
    emit,
    f32,
    f64,
    find_op,
    forward_program,
    gradient,
    gradient_graph,
    gradient_program,
    hvp,
    jvp,
    i32,
    load_op_library,
    lower,
    optimize,
    pass_names,
    plan_cpu,
    register_op,
    replay,
)

from . import testing

__all__ = [
    "BinaryOp", "Case", "CheckReport", "CudaKernel", "CudaTarget", "DType", "Error", "Executable",
    "Graph", "Implementation", "InternalError", "LimitError", "Mismatch", "Node", "OpDef",
    "OpInput", "Program", "ReduceOp", "UnaryOp", "all_ops", "available_backends", "case_inputs",
    "check", "check_cuda_kernel", "compile", "compile_c", "cuda_kernel", "cuda_kernel_backend",
    "cuda_unavailable_reason", "differentiable_inputs", "emit", "f32", "f64", "find_op",
    "forward_program", "gradient", "gradient_graph", "gradient_program", "hvp", "jvp", "i32", "load_op_library", "lower",
    "optimize", "pass_names", "plan_cpu", "register_op", "replay", "testing",
]
