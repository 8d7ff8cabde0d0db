// Host tensors: dense, row-major, owning their bytes. What programs take and give.
#pragma once

#include <cstddef>
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

// Where tensors' bytes live: blocks aligned to a cache line (a vector load straddling two lines
// costs bandwidth; large blocks from malloc start 16 bytes into a page: an elementwise kernel ran
// at 0.85 of a memcpy, which aligns its own accesses), large ones to a page. A large block
// (kCachedBlockBytes and up) that a tensor frees is kept, rounded up to its size class (at most 1/8
// larger), for the next tensor of that class, up to block_cache_limit() bytes in all (the oldest go
// first). Without it run()'s fresh outputs came from glibc's malloc, which gives large freed blocks
// back to the system or keeps them depending on the process's heap (its thread, what ran before):
// where it gave them back, every run faulted its outputs' pages in again, 40 ms for softmax's 16 MB
// on a 2 ms kernel (issue 30; docs/cpu-kernels.md "run() and its kernel"). Blocks of 2 MiB and
// more start on a huge page and ask for huge pages over their whole ones ("Huge pages"). Blocks
// from 1 KiB up to kCachedBlockBytes start 1 to 3 KiB into a page, consecutive ones at different
// offsets, so that a kernel's loads from them do not wait on its stores to a large block or to
// each other ("Small blocks"). Thread-safe.
constexpr std::size_t kCachedBlockBytes = std::size_t(256) << 10;
void* allocate_block(std::size_t bytes);
void free_block(void* p, std::size_t bytes) noexcept;
struct BlockCacheStats {
  std::size_t blocks = 0, bytes = 0;  // kept now
  std::size_t hits = 0;               // allocations served from the kept blocks, ever
};
BlockCacheStats block_cache_stats();
// Default 64 MiB; returns the previous limit. Lowering it frees kept blocks down to the new one.
std::size_t set_block_cache_limit(std::size_t bytes);

// Leaves the elements a vector grows by uninitialized (value-initialization is still explicit),
// so that an output a kernel writes in full is not zeroed first: for an elementwise kernel that
// zeroing is a quarter of the run.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_block(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { free_block(p, n * sizeof(T)); }
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
