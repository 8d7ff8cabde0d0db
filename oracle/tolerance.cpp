#include "uops/oracle/tolerance.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace uops::oracle {

Tolerance tolerance(DType dtype) {
  switch (dtype) {
    // f32 values are compared against f64 references: abs covers cancellation in short sums
    // (a few hundred ulps of values near 1), rel a few hundred ulps; longer sums, larger
    // magnitudes and ill-conditioned cases widen it (widen, and the per-output term in compare).
    case DType::f32:
      return {2e-4, 2e-5};
    case DType::f64:
      return {1e-9, 1e-9};
    case DType::i32:
      return {0.0, 0.0};
  }
  return {};
}

Tolerance widen(Tolerance base, int64_t reduction, double magnitude, bool transcendental) {
  double r = std::max(1.0, std::sqrt(double(reduction) / 128.0));
  double m = std::max(1.0, magnitude / 4.0);
  return {base.abs * r * m, base.rel * r * (transcendental ? m : 1.0)};
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
