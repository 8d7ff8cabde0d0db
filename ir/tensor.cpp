#include "uops/ir/tensor.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UOPS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(UOPS_ASAN)
#include <sanitizer/asan_interface.h>
#define UOPS_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UOPS_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define UOPS_POISON(p, n) ((void)(p), (void)(n))
#define UOPS_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#include "uops/error.h"
#include "uops/ir/scalar_semantics.h"

namespace uops {

namespace {
// Refuse allocations that no test or realistic op needs and that would only exhaust memory.
constexpr int64_t kMaxBytes = int64_t(1) << 40;
}  // namespace

namespace detail {

namespace {

constexpr std::align_val_t kAlignment{64};
// Large blocks start on a page, all at the same offset in it: where glibc placed them, a kernel's
// output could sit at any offset from its inputs, and the same kernel ran 15% faster or slower
// from one output block to the next (bench_run_overhead, elementwise and layernorm).
constexpr std::align_val_t kLargeAlignment{4096};
// Blocks of a huge page and more start on one, and ask the kernel to back their whole huge pages
// with huge pages (transparent huge pages, where the system gives them on request: "madvise", the
// setting of many distributions, gives none unasked). Each 2 MiB then costs one TLB entry instead
// of 512: on this project's VM (nested paging) a 16 MiB block's first touch took 2-3 ms instead
// of 9-12 and a memset over it 0.5-0.8 ms instead of 0.9-1.4 (docs/cpu-kernels.md, "Huge pages").
// Only whole huge pages inside the block are asked for, so a block never holds more than it uses.
constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

std::align_val_t large_alignment(std::size_t size) {
  return size >= kHugePageBytes ? std::align_val_t{kHugePageBytes} : kLargeAlignment;
}

void* allocate_large(std::size_t size) {
  void* p = ::operator new(size, large_alignment(size));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (size >= kHugePageBytes) madvise(p, size / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);
#endif
  return p;
}

// Blocks from 1 KiB up to kCachedBlockBytes start 1 to 3 KiB into a page, each 640 bytes (mod 2
// KiB) on from the last: a load whose address matches an older store's in its low 12 bits waits
// for it (4K aliasing), and a kernel's small vectors (a layernorm gradient's dgamma, dbeta, gamma)
// are read and written at the same index as the rows it streams from large blocks, which start on
// a page. At glibc's offsets the layernorm gradient's run() took 1.10-1.26x its kernel on other
// buffers; in a C driver, 3.4 ms with them at the rows' offset, 2.9 at one offset 2 KiB away, 2.7
// spread (docs/cpu-kernels.md, "Small blocks").
constexpr std::size_t kSpreadBlockBytes = 1024;
std::size_t next_spread_offset() {
  static std::atomic<std::size_t> count{0};
  return 1024 + count++ * 640 % 2048;
}

// Large sizes round up to one of 8 steps per power of two.
std::size_t size_class(std::size_t bytes) {
  std::size_t step = (std::size_t(1) << (63 - __builtin_clzll(bytes))) / 8;
  return (bytes + step - 1) / step * step;
}

// Kept blocks, oldest first. Under AddressSanitizer a kept block, and the tail of a reused one
// past the tensor's bytes, are poisoned: a use after free still shows.
struct BlockCache {
  std::mutex mutex;
  std::deque<std::pair<std::size_t, void*>> kept;  // size class, block
  std::size_t bytes = 0, limit = std::size_t(64) << 20, hits = 0;

  // Frees the oldest kept blocks until `room` more bytes fit under the limit (mutex held).
  void evict(std::size_t room) {
    while (!kept.empty() && bytes + room > limit) {
      auto [size, p] = kept.front();
      kept.pop_front();
      bytes -= size;
      UOPS_UNPOISON(p, size);
      ::operator delete(p, large_alignment(size));
    }
  }
};

BlockCache& cache() {
  static BlockCache* c = new BlockCache;  // never destroyed: tensors may outlive statics
  return *c;
}

}  // namespace

void* allocate_block(std::size_t bytes) {
  if (bytes < kSpreadBlockBytes) return ::operator new(bytes, kAlignment);
  if (bytes < kCachedBlockBytes) {
    std::size_t offset = next_spread_offset();
    auto* page = static_cast<char*>(::operator new(bytes + offset, kLargeAlignment));
    UOPS_POISON(page, offset);
    return page + offset;
  }
  std::size_t size = size_class(bytes);
  BlockCache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    // The newest kept block of the class: the likeliest to be in cache and TLB.
    for (auto it = c.kept.rbegin(); it != c.kept.rend(); ++it)
      if (it->first == size) {
        void* p = it->second;
        c.kept.erase(std::next(it).base());
        c.bytes -= size;
        ++c.hits;
        UOPS_UNPOISON(p, bytes);
        return p;
      }
  }
  void* p = allocate_large(size);
  UOPS_POISON(static_cast<char*>(p) + bytes, size - bytes);
  return p;
}

void free_block(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kSpreadBlockBytes) return ::operator delete(p, kAlignment);
  if (bytes < kCachedBlockBytes) {  // the page it starts in (its offset is under a page)
    auto* page = static_cast<char*>(p) - std::uintptr_t(p) % std::size_t(kLargeAlignment);
    UOPS_UNPOISON(page, static_cast<char*>(p) - page);
    return ::operator delete(page, kLargeAlignment);
  }
  std::size_t size = size_class(bytes);
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (size > c.limit) {
    UOPS_UNPOISON(p, size);
    return ::operator delete(p, large_alignment(size));
  }
  c.evict(size);
  try {
    c.kept.emplace_back(size, p);
  } catch (...) {  // no memory to keep it in: free it
    return ::operator delete(p, large_alignment(size));
  }
  UOPS_POISON(p, size);
  c.bytes += size;
}

BlockCacheStats block_cache_stats() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return {c.kept.size(), c.bytes, c.hits};
}

std::size_t set_block_cache_limit(std::size_t bytes) {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::size_t old = c.limit;
  c.limit = bytes;
  c.evict(0);
  return old;
}

}  // namespace detail

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
