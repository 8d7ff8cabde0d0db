#include "uops/oracle/tolerance.h"

#include <cmath>
#include <limits>

namespace uops::oracle {

Tolerance tolerance(DType dtype) {
  switch (dtype) {
    // f32 values are compared against f64 references: a few hundred ulps of the sums the
    // generated cases produce (reductions of up to ~100 terms, logsumexp of shifted values).
    case DType::f32:
      return {2e-4, 2e-4};
    case DType::f64:
      return {1e-9, 1e-9};
    case DType::i32:
      return {0.0, 0.0};
  }
  return {};
}

double scaled_error(double expected, double got, const Tolerance& tol) {
  if (std::isnan(expected) || std::isnan(got))
    return std::isnan(expected) && std::isnan(got) ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(expected) || std::isinf(got))
    return expected == got ? 0.0 : std::numeric_limits<double>::infinity();
  double diff = std::fabs(got - expected);
  double allowed = tol.abs + tol.rel * std::fabs(expected);
  if (allowed == 0.0) return diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return diff / allowed;
}

}  // namespace uops::oracle
