// The whole user-facing API of uops: describe (ir, parser), optimize (passes), differentiate
// (autodiff), run and generate (backends), and the op library (ops). The oracle
// (uops/oracle/*.h, library uops_oracle, needs Eigen) and the runtime (uops/runtime/runtime.h,
// library uops_runtime, usable on its own) have their own headers.
#pragma once

#include "uops/autodiff/gradient.h"
#include "uops/backends/backends.h"
#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/executable.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/dtype.h"
#include "uops/ir/graph.h"
#include "uops/ir/index_expr.h"
#include "uops/ir/lower.h"
#include "uops/ir/ops.h"
#include "uops/ir/printer.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"
#include "uops/ir/value_expr.h"
#include "uops/ir/verifier.h"
#include "uops/ops/gradient.h"
#include "uops/ops/registry.h"
#include "uops/parser/parser.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/stats.h"
