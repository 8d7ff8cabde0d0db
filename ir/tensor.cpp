#include "uops/ir/tensor.h"

#include <algorithm>

#include "uops/error.h"
#include "uops/ir/scalar_semantics.h"

namespace uops {

namespace {
// Refuse allocations that no test or realistic op needs and that would only exhaust memory.
constexpr int64_t kMaxBytes = int64_t(1) << 40;
}  // namespace

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw Error("negative size " + std::to_string(d) + " in a shape");
    if (__builtin_mul_overflow(n, d, &n)) throw LimitError("shape has too many elements");
  }
  return n;
}

Tensor::Tensor(DType dt, std::vector<int64_t> s) : Tensor(uninitialized(dt, std::move(s))) {
  std::fill(bytes.begin(), bytes.end(), 0);
}

Tensor Tensor::uninitialized(DType dt, std::vector<int64_t> s) {
  Tensor t;
  t.dtype = dt;
  t.shape = std::move(s);
  int64_t n = element_count(t.shape);
  if (n > kMaxBytes / int64_t(dtype_size(dt)))
    throw LimitError("tensor of shape " + t.shape_text() + " is too large");
  t.bytes.resize(size_t(n) * dtype_size(dt));
  return t;
}

int64_t Tensor::numel() const {
  return element_count(shape);
}

double Tensor::get(int64_t i) const {
  switch (dtype) {
    case DType::f32:
      return data<float>()[i];
    case DType::f64:
      return data<double>()[i];
    case DType::i32:
      return data<int32_t>()[i];
  }
  return 0;
}

void Tensor::set(int64_t i, double v) {
  switch (dtype) {
    case DType::f32:
      data<float>()[i] = float(v);
      break;
    case DType::f64:
      data<double>()[i] = v;
      break;
    case DType::i32:
      data<int32_t>()[i] = to_i32(v);
      break;
  }
}

std::string Tensor::shape_text() const {
  return uops::shape_text(shape);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace uops
