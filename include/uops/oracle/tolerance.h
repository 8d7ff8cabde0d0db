// The one place the oracle's tolerances live. An element passes when
// |got - expected| <= abs + rel * |expected|; equal infinities and two NaNs match; integer
// (i32) outputs must match exactly.
#pragma once

#include "uops/ir/dtype.h"

namespace uops::oracle {

struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
};

Tolerance tolerance(DType dtype);

// |got - expected| in units of the allowed error: <= 1 passes. Infinite when one side is NaN or
// infinite and the other is not the same.
double scaled_error(double expected, double got, const Tolerance& tol);

}  // namespace uops::oracle
