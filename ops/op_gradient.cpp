#include "uops/ops/op_gradient.h"

#include "uops/autodiff/graph_gradient.h"
#include "uops/error.h"

namespace uops {

using namespace ir;

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

OpDef gradient_op(const OpDef& op) {
  OpDef d;
  d.name = "grad:" + op.name;
  d.inputs = op.inputs;
  for (OpInput& in : d.inputs) in.differentiable = false;
  d.params = op.params;
  d.example_shapes = op.example_shapes;
  d.example_params = op.example_params;
  // d<y> is shaped like y: its example shape is y's at the op's example.
  Program forward = forward_program(op, DType::f32);
  IndexEnv env;
  env.dim = [&](int t, int a) { return op.example_shapes.at(forward.tensors[t].name).at(a); };
  env.param = [&](const std::string& p) { return op.example_params.at(p); };
  for (const std::string& y : op.outputs) {
    const TensorInfo& info = forward.tensors[forward.find_tensor(y)];
    OpInput in{"d" + y, int(info.shape.size()), info.dtype == DType::i32, false};
    // Seeds of moderate size (|v| in [0.5, 1.5]), never shifted by `large` values: a seed of 1000
    // would only measure f32 cancellation (softmax's gradient through its max is a sum that is
    // zero but for rounding).
    in.nonzero = true;
    d.inputs.push_back(in);
    std::vector<int64_t> shape;
    for (auto& e : info.shape) shape.push_back(evaluate(e, env));
    d.example_shapes["d" + y] = shape;
  }
  for (const std::string& x : differentiable_inputs(op)) d.outputs.push_back("d" + x);
  d.build = [op](DType t) { return gradient_graph(op.build(t), differentiable_inputs(op)); };
  d.param_ranges = op.param_ranges;
  d.invalid = op.invalid;
  d.values = op.values;
  return d;
}

}  // namespace uops
