// What the backend tests share: random inputs for a program, comparing two backends' outputs
// element by element, and whether the build is sanitized.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops::testing {

using namespace ir;

// Under ASan or TSan every access costs several times more: the longest tests check fewer cases
// there, the sanitizers' concern being the host code those cases share (the release build checks
// them all).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// Inputs for `p` with the given shapes: floats uniform in [-2, 2], i32 values in [-1, limit].
inline TensorMap random_inputs(const Program& p,
                               const std::map<std::string, std::vector<int64_t>>& shapes,
                               uint64_t seed, int64_t limit = 8) {
  std::mt19937_64 rng(seed);
  TensorMap in;
  for (int t : p.inputs()) {
    const TensorInfo& info = p.tensors[t];
    Tensor x(info.dtype, shapes.at(info.name));
    for (int64_t i = 0; i < x.numel(); ++i)
      x.set(i, info.dtype == DType::i32
                   ? double(std::uniform_int_distribution<int64_t>(-1, limit)(rng))
                   : std::uniform_real_distribution<double>(-2, 2)(rng));
    in[info.name] = std::move(x);
  }
  return in;
}

// random_inputs with `percent` of the elements drawn from a few values instead: -1, -0, +0, 0.5
// and 2 (many ties) and, for one element in twenty, -inf, +inf or NaN.
inline TensorMap few_values(const Program& p,
                            const std::map<std::string, std::vector<int64_t>>& shapes,
                            uint64_t seed, int percent = 100) {
  const double inf = std::numeric_limits<double>::infinity();
  const double values[] = {-1, -0.0, 0.0, 0.5, 2, -inf, inf, std::nan("")};
  std::mt19937_64 rng(seed);
  TensorMap in = random_inputs(p, shapes, seed);
  for (auto& [name, t] : in)
    for (int64_t i = 0; i < t.numel(); ++i) {
      size_t at = std::uniform_int_distribution<size_t>(0, 99)(rng);
      if (at + size_t(percent) >= 100) t.set(i, values[at < 95 ? at % 5 : 5 + at % 3]);
    }
  return in;
}

// Tensors shaped like `like`'s, every byte 0xff (NaN for floats): outputs for run_into in
// which an element the kernel should have written and did not shows.
inline TensorMap nan_like(const TensorMap& like) {
  TensorMap out;
  for (auto& [name, t] : like) {
    out[name] = Tensor::uninitialized(t.dtype, t.shape);
    std::fill(out[name].bytes.begin(), out[name].bytes.end(), 0xff);
  }
  return out;
}

// Equal within `tolerance` relative to the larger magnitude (0: bit-exact up to NaN payloads).
inline ::testing::AssertionResult same_outputs(const TensorMap& expected, const TensorMap& actual,
                                               double tolerance = 0.0) {
  if (expected.size() != actual.size())
    return ::testing::AssertionFailure() << "output counts differ";
  for (auto& [name, e] : expected) {
    auto it = actual.find(name);
    if (it == actual.end()) return ::testing::AssertionFailure() << "missing output " << name;
    const Tensor& a = it->second;
    if (a.dtype != e.dtype || a.shape != e.shape)
      return ::testing::AssertionFailure() << name << ": shape or dtype differs";
    for (int64_t i = 0; i < e.numel(); ++i) {
      double x = e.get(i), y = a.get(i);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (x == y) continue;
      double scale = std::max({1.0, std::fabs(x), std::fabs(y)});
      if (std::fabs(x - y) <= tolerance * scale) continue;
      return ::testing::AssertionFailure()
             << name << "[" << i << "]: expected " << x << ", got " << y;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace uops::testing
