// Host tensors: dense, row-major, owning their bytes. What programs take and give.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "uops/ir/dtype.h"

namespace uops {

struct Tensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  Tensor() = default;
  // Zero-filled; throws uops::Error for a negative or overflowing size.
  Tensor(DType dtype, std::vector<int64_t> shape);

  int64_t numel() const;
  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  // Element i as a double, and assignment from one (converted to the tensor's dtype).
  double get(int64_t i) const;
  void set(int64_t i, double v);
  std::string shape_text() const;  // "[2, 3]"
};

using TensorMap = std::map<std::string, Tensor>;
using ParamMap = std::map<std::string, int64_t>;

// Number of elements of a shape; throws uops::Error on a negative size or overflow.
int64_t element_count(const std::vector<int64_t>& shape);

}  // namespace uops
