// The one place the oracle's tolerances live (docs/design.md §3.9). An element passes when
// |got - expected| <= abs + rel * |expected|; equal infinities and two NaNs match; integer
// (i32) outputs must match exactly.
//
// The base tolerance is the dtype's (or the op's own, `OpDef::tolerance`, or the check's,
// `CheckOptions::tolerance`). A case widens it by what its description runs:
//  - a reduction of length L: rounding grows like sqrt(L), so abs and rel grow by sqrt(L / 128)
//    past 128 terms;
//  - magnitudes: where the canonical implementation is held to the Eigen reference, abs grows
//    with the largest input magnitude M (by M / 4 past 4: x - max(x) at x near 1000 keeps only
//    ulps of 1000), and so does rel when the description has a transcendental function
//    (exp(a), sin(a) carry the absolute error of a);
//  - the case's own conditioning: an implementation is allowed 4 times the canonical one's own
//    distance from the f64 evaluation of the same description on the same inputs (the Eigen
//    reference for a built-in op, the f64 interpreter for a user's op in f32), taken per output.
//    This covers what no formula knows: sin(65535 * theta) in f32 is off by 1e-3 in any
//    correct kernel, a softmax of 4,096 columns is not.
#pragma once

#include <cstdint>

#include "uops/ir/dtype.h"
#include "uops/ops/registry.h"

namespace uops::oracle {

using uops::Tolerance;

// The dtype's base.
Tolerance tolerance(DType dtype);

// `base` widened for a case whose longest reduction is `reduction` terms and whose largest input
// magnitude is `magnitude` (0: not widened for magnitudes).
Tolerance widen(Tolerance base, int64_t reduction, double magnitude, bool transcendental);

// |got - expected| in units of the allowed error: <= 1 passes. Infinite when one side is NaN or
// infinite and the other is not the same.
double scaled_error(double expected, double got, const Tolerance& tol);

}  // namespace uops::oracle
