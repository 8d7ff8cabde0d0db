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

// The gradient of `op` as an op of its own, "grad:<name>", that the oracle checks like any other
// (`uopc check grad:softmax`): its graph is gradient_graph(op.build(dtype), its differentiable
// inputs); it takes the op's inputs, then d<y> for every output y (shaped like y, so random cases
// compute those sizes rather than draw them), and gives d<x> for every differentiable input x.
// Parameters, their ranges, the validity rule and value distributions are the op's. A user's
// backward kernel is checked against it, with shrinking and replay:
//   oracle::check(gradient_op(find_op("softmax")), my_softmax_backward)
// It has no Eigen reference: the interpreter on its description is the canonical one.
OpDef gradient_op(const OpDef& op);

}  // namespace uops
