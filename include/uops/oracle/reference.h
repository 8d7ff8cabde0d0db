// Independent references for every op, written with Eigen's Tensor module (contractions,
// strided slices of padded tensors, reductions, shuffles) rather than with uops. They compute in
// f64 whatever the inputs' float type and give outputs in that float type (i32 for argmax).
#pragma once

#include <string>

#include "uops/ir/tensor.h"

namespace uops::oracle {

// Whether `op` (a built-in op's name) has a reference.
bool has_reference(const std::string& op);
// Throws uops::Error for an op without a reference.
TensorMap reference(const std::string& op, const TensorMap& inputs, const ParamMap& params);

}  // namespace uops::oracle
