#include "uops/ops/op_gradient.h"

#include "uops/autodiff/graph_gradient.h"
#include "uops/error.h"

namespace uops {

std::vector<std::string> differentiable_inputs(const OpDef& op) {
  std::vector<std::string> names;
  for (const OpInput& in : op.inputs)
    if (in.differentiable && !in.is_index) names.push_back(in.name);
  return names;
}

Program gradient_program(const OpDef& op, DType dtype) {
  if (!is_float(dtype))
    throw Error("op '" + op.name + "': the dtype must be f32 or f64, not " + dtype_name(dtype));
  return gradient(op.build(dtype), differentiable_inputs(op));
}

}  // namespace uops
