// Test tensors: from literal values and back, and a ramp of small values.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "uops/ir/tensor.h"

namespace uops::testing {

inline Tensor make_tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double>& v) {
  Tensor t(dtype, std::move(shape));
  if (int64_t(v.size()) != t.numel())
    throw std::invalid_argument("test tensor: the values do not match the shape");
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}

inline Tensor f32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return make_tensor(DType::f32, std::move(shape), v);
}
inline Tensor f64(std::vector<int64_t> shape, const std::vector<double>& v) {
  return make_tensor(DType::f64, std::move(shape), v);
}
inline Tensor i32(std::vector<int64_t> shape, const std::vector<double>& v) {
  return make_tensor(DType::i32, std::move(shape), v);
}

inline std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.get(i));
  return out;
}

// 0.25 * ((i * 7) % 11) - 1 at element i: small values of both signs, repeating irregularly.
inline Tensor ramp(DType t, std::vector<int64_t> shape, double scale = 0.25) {
  Tensor x(t, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, scale * double((i * 7) % 11) - 1.0);
  return x;
}

}  // namespace uops::testing
