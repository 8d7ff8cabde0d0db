// Comparing two sets of outputs element by element under the oracle's tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uops/ir/tensor.h"
#include "uops/oracle/tolerance.h"

namespace uops::oracle {

struct Mismatch {
  std::string output;          // the output's name
  std::vector<int64_t> index;  // the worst element
  double expected = 0.0, got = 0.0;
  double abs_error = 0.0;
  double scaled_error = 0.0;  // in units of the tolerance: > 1 fails
};

struct Comparison {
  bool ok = true;
  std::string problem;  // a missing output, a shape or dtype that differs
  Mismatch worst;       // the element with the largest scaled error
};

// Every output of `expected` must be in `got` with the same dtype and shape. Float outputs are
// held to `tol`, widened per output by 4 times the largest distance of `expected` from `truth`
// (an f64 evaluation of the same inputs, when given: tolerance.h); i32 outputs must match
// exactly.
Comparison compare(const TensorMap& expected, const TensorMap& got, const Tolerance& tol,
                   const TensorMap* truth = nullptr);
// The same with the dtype's base tolerance.
Comparison compare(const TensorMap& expected, const TensorMap& got, DType dtype);

std::string index_text(const std::vector<int64_t>& index);  // "[1, 0, 2]"

}  // namespace uops::oracle
