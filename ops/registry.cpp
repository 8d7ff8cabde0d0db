#include "uops/ops/registry.h"

#include "ops/families.h"
#include "uops/error.h"
#include "uops/ir/lower.h"

namespace uops {

const std::vector<OpDef>& all_ops() {
  static const std::vector<OpDef> ops = [] {
    std::vector<OpDef> v;
    ops::add_elementwise(v);
    ops::add_linear_algebra(v);
    ops::add_convolution(v);
    ops::add_pooling(v);
    ops::add_normalization(v);
    ops::add_reductions(v);
    ops::add_indexing(v);
    ops::add_losses(v);
    return v;
  }();
  return ops;
}

const OpDef& find_op(const std::string& name) {
  std::string names;
  for (const OpDef& op : all_ops()) {
    if (op.name == name) return op;
    names += (names.empty() ? "" : ", ") + op.name;
  }
  throw Error("unknown op '" + name + "'; the ops are: " + names);
}

Program forward_program(const OpDef& op, DType dtype) {
  if (!is_float(dtype))
    throw Error("op '" + op.name + "': the dtype must be f32 or f64, not " + dtype_name(dtype));
  return lower(op.build(dtype));
}

}  // namespace uops
