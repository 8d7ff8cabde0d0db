// Host tensors: dense, row-major, owning their bytes. What programs take and give.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "uops/ir/dtype.h"

namespace uops {

namespace detail {

// Leaves the elements a vector grows by uninitialized (value-initialization is still explicit),
// so that an output a kernel writes in full is not zeroed first: for an elementwise kernel that
// zeroing is a quarter of the run. And aligns them to a cache line: a vector load straddling two
// lines costs bandwidth (large blocks from malloc start 16 bytes into a page; an elementwise
// kernel ran at 0.85 of a memcpy, which aligns its own accesses).
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  static constexpr std::align_val_t kAlignment{64};
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <typename U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace detail

struct Tensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<unsigned char, detail::UninitializedAllocator<unsigned char>> bytes;

  Tensor() = default;
  // Zero-filled; throws uops::Error for a negative or overflowing size.
  Tensor(DType dtype, std::vector<int64_t> shape);
  // The same without the zeroing: for outputs that are written in full before anything reads them.
  static Tensor uninitialized(DType dtype, std::vector<int64_t> shape);

  int64_t numel() const;
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  // Element i as a double, and assignment from one (converted to the tensor's dtype).
  double get(int64_t i) const;
  void set(int64_t i, double v);
  std::string shape_text() const;  // "[2, 3]"
};

using TensorMap = std::map<std::string, Tensor>;
using ParamMap = std::map<std::string, int64_t>;

// Number of elements of a shape; throws uops::Error on a negative size or overflow.
int64_t element_count(const std::vector<int64_t>& shape);
// "[2, 3]"
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace uops
