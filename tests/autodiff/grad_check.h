// Checking gradient programs: central finite differences in f64 of the scalar
// L = sum over the float outputs y of sum(dy * y), whose gradient with respect to an input is
// exactly what the gradient program computes from the random seeds dy.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops::testing {

Tensor random_tensor(DType dtype, const std::vector<int64_t>& shape, std::mt19937_64& rng,
                     double lo, double hi);

// Runs `p` with the inputs it declares, taken from `available` (which may hold more).
TensorMap run_with(const Program& p, const TensorMap& available, const ParamMap& params);

// d<name> in [-1, 1] for every output of `forward` on `inputs` (zeros for i32 outputs).
TensorMap random_output_grads(const Program& forward, const TensorMap& inputs,
                              const ParamMap& params, uint64_t seed);

// Compares d<x> of `grad` (run on `inputs` and `output_grads`) with finite differences of L for
// every x in `wrt`. An element passes when |analytic - numeric| <= tol * (1 + |numeric|).
// Returns "" when every element passes, else what failed first. When `unreliable` is given, an
// element where the differences themselves have not converged (steps h and 2h disagree, as on
// sin(t^t) with t near 6), or where rounding in outputs far larger than the loss's change can
// move the difference by more than it disagrees (an output of 1e10 changes by a few units in its
// last place for h = 1e-6, so the difference sees nothing of it), or where the gradient itself
// moves across the step [x - h, x + h] by as much as it disagrees (the function is not smooth
// at the step's scale, as cos(u) for u of 1e14), is counted there instead of failing.
std::string compare_with_finite_differences(const Program& forward, const Program& grad,
                                            const TensorMap& inputs, const TensorMap& output_grads,
                                            const ParamMap& params,
                                            const std::vector<std::string>& wrt, double tol = 1e-6,
                                            int* unreliable = nullptr);

// Whether every element of every float tensor of `m` is finite.
bool all_finite(const TensorMap& m);

// Largest |a - b| / (1 + |b|) over the outputs `a` and `b` share; infinite on a shape mismatch
// or a NaN on one side only.
double max_difference(const TensorMap& a, const TensorMap& b);

}  // namespace uops::testing
