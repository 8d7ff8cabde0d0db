// What a user of uops needs to describe an op, differentiate it, optimize it and run it:
//
//   describe     Graph, the op vocabularies and dtypes (uops/ir/graph.h), or an op of the library
//                (find_op, register_op, load_op_library: uops/ops/registry.h)
//   lower        lower(graph) gives a Program; gradient(graph, wrt) and gradient_program(op)
//                give its reverse-mode gradient as one
//   optimize     optimize(program)
//   run          make_backend / interpret / compile_c / compile_cuda on host Tensors
//   check        oracle::check, a kernel against the op's definition (link uops::uops_oracle)
//
// Every refusal is a uops::Error. The IR a Program is made of (namespace uops::ir) and the passes
// one by one are uops/ir.h's; the runtime (uops/runtime.h, library uops_runtime, usable on its
// own) has its own header.
#pragma once

#include "uops/autodiff/forward_mode.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/backends/backends.h"
#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/executable.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/dtype.h"
#include "uops/ir/fixed_params.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"
#include "uops/ir/memory_budget.h"
#include "uops/ir/ops.h"
#include "uops/ir/tensor.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/oracle/harness.h"
#include "uops/passes/pipeline.h"
