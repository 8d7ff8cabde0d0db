// Random small f64 cases for the ops of the registry, for gradient checks: every axis of the
// op's example shapes scaled down to 1..4, parameters drawn from small ranges, rejected until
// the shapes fit the op, every output is non-empty and finite. Values are uniform in [-1, 1]
// (distinct, so max, relu and maxpool are away from ties and kinks), in [0.5, 2] for log and
// div, and i32 indices in [-1, 4] (some out of range).
#pragma once

#include <cstdint>

#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"

namespace uops::testing {

struct OpCase {
  TensorMap inputs;
  ParamMap params;
};

OpCase random_op_case(const OpDef& op, DType dtype, uint64_t seed);

}  // namespace uops::testing
