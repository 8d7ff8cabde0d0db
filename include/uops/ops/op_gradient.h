// The gradient program of an op (docs/design.md §4): gradient(op.build(dtype), its differentiable
// inputs), unoptimized. It takes d<output> for every output plus the forward inputs the gradient
// reads (its `inputs()`; callers pass only those) and gives d<input> for every differentiable
// input. Run passes/pipeline.h `optimize` on it for the backends.
#pragma once

#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/ops/registry.h"

namespace uops {

// The inputs of `op` that get a gradient, in the op's order.
std::vector<std::string> differentiable_inputs(const OpDef& op);

// Throws uops::Error when `dtype` is not a float type.
Program gradient_program(const OpDef& op, DType dtype);

}  // namespace uops
