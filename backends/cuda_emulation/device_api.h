// The CUDA device API as host C++, for kernels compiled for the emulation (docs/cuda-kernels.md).
// Pasted, after abi.h, in front of every kernel source the emulation compiles; never included by
// the library itself. The module is compiled with the compiler's ThreadSanitizer instrumentation
// but without its runtime: the instrumentation calls the __tsan_* hooks below before every load
// and store of the kernel's own code, and the hooks hand each access to the host (State::access),
// which checks it against device memory, shared memory and the other threads. The functions here
// are not instrumented (UOPS_EMU_RT); the accesses they make on the kernel's behalf (atomics,
// __ldg) they report themselves.
//
// Shared memory: `__shared__` declares a thread_local of the module, tagged in its mangled name
// (abi_tag "uops_shared") so the host finds each array, its size and its name in the module's
// symbol table; the threads of a block are fibers of one OS thread, so they share it. Each array
// is aligned to 64 KiB so the space after it belongs to no other array: an index past its end
// is out of bounds, not a neighbour's element. `extern __shared__` arrays are all linked to
// `uops_emu_dynamic_shared` (the host passes --defsym for each), as on a device they all start
// at the block's dynamic shared memory.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#define UOPS_EMU_RT __attribute__((no_sanitize("thread"), noinline, used))
#define UOPS_EMU_EXPORT extern "C" __attribute__((visibility("default"), no_sanitize("thread")))

extern "C" {
__attribute__((visibility("default"))) uops_emu::State uops_emu_state;
}
alignas(65536) thread_local unsigned char uops_emu_dynamic_shared[232448];
UOPS_EMU_EXPORT void* uops_emu_dynamic_shared_base() {
  return uops_emu_dynamic_shared;
}

// ---- the instrumentation's hooks ----------------------------------------------------------------
// Defined under the __tsan_* symbol names through asm labels (the C++ names differ from the
// compiler's built-in declarations), hidden so that a host that links the real runtime keeps
// its own.
#define UOPS_EMU_HOOK(name, ...)                                                             \
  extern "C"                                                                                 \
      __attribute__((visibility("hidden"), no_sanitize("thread"),                            \
                     used)) void uops_emu_hook_##name(__VA_ARGS__) __asm__("__tsan_" #name); \
  extern "C" void uops_emu_hook_##name(__VA_ARGS__)
#define UOPS_EMU_ACCESS_HOOK(name, bytes, kind)                                                \
  UOPS_EMU_HOOK(name, void* a) {                                                               \
    if (uops_emu_state.access)                                                                 \
      uops_emu_state.access(uops_emu_state.host, a, bytes, kind, __builtin_return_address(0)); \
  }
UOPS_EMU_ACCESS_HOOK(read1, 1, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(read2, 2, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(read4, 4, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(read8, 8, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(read16, 16, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(write1, 1, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(write2, 2, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(write4, 4, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(write8, 8, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(write16, 16, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(unaligned_read2, 2, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(unaligned_read4, 4, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(unaligned_read8, 8, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(unaligned_read16, 16, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(unaligned_write2, 2, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(unaligned_write4, 4, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(unaligned_write8, 8, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(unaligned_write16, 16, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(volatile_read1, 1, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(volatile_read2, 2, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(volatile_read4, 4, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(volatile_read8, 8, uops_emu::kRead)
UOPS_EMU_ACCESS_HOOK(volatile_write1, 1, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(volatile_write2, 2, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(volatile_write4, 4, uops_emu::kWrite)
UOPS_EMU_ACCESS_HOOK(volatile_write8, 8, uops_emu::kWrite)
UOPS_EMU_HOOK(read_range, void* a, unsigned long n) {
  uops_emu_state.access(uops_emu_state.host, a, n, uops_emu::kRead, __builtin_return_address(0));
}
UOPS_EMU_HOOK(write_range, void* a, unsigned long n) {
  uops_emu_state.access(uops_emu_state.host, a, n, uops_emu::kWrite, __builtin_return_address(0));
}
UOPS_EMU_HOOK(func_entry, void*) {}
UOPS_EMU_HOOK(func_exit) {}
UOPS_EMU_HOOK(init) {}
UOPS_EMU_HOOK(vptr_update, void*, void*) {}
UOPS_EMU_HOOK(vptr_read, void*) {}
// -fsanitize=integer-divide-by-zero: a device gives some value; a host would trap.
extern "C" __attribute__((visibility("hidden"), no_sanitize("thread"), used)) void
uops_emu_divide_by_zero(void*, void*, void*) __asm__("__ubsan_handle_divrem_overflow");
extern "C" void uops_emu_divide_by_zero(void*, void*, void*) {
  uops_emu_state.fault(uops_emu_state.host, "integer division by zero",
                       __builtin_return_address(0));
}

// A device assert or trap stops the kernel with an error, as on a device; the host's would abort
// the process. glibc's assert calls __assert_fail, defined here for the module alone.
extern "C" __attribute__((visibility("hidden"), no_sanitize("thread"), used, noreturn)) void
uops_emu_assert_fail(const char* what, const char* file, unsigned line,
                     const char*) __asm__("__assert_fail");
extern "C" void uops_emu_assert_fail(const char* what, const char* file, unsigned line,
                                     const char*) {
  char text[512];
  std::snprintf(text, sizeof text, "assertion failed: %s (%s:%u)", what, file, line);
  uops_emu_state.fault(uops_emu_state.host, text, __builtin_return_address(0));
  __builtin_unreachable();
}
__attribute__((no_sanitize("thread"), noinline, noreturn)) inline void __trap() {
  uops_emu_state.fault(uops_emu_state.host, "__trap()", __builtin_return_address(0));
  __builtin_unreachable();
}

// ---- qualifiers and built-in variables ----------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ thread_local __attribute__((abi_tag("uops_shared"), aligned(65536)))
#define __managed__ uops_emulation_does_not_support_managed_memory
#define __CUDACC__ 1
#define __CUDA_ARCH__ 900
#define warpSize 32

using dim3 = uops_emu::Dim3;
namespace uops_emu {
UOPS_EMU_RT inline Dim3 thread_idx() {
  return uops_emu_state.thread;
}
UOPS_EMU_RT inline Dim3 block_idx() {
  return uops_emu_state.block;
}
UOPS_EMU_RT inline Dim3 block_dim() {
  return uops_emu_state.block_dim;
}
UOPS_EMU_RT inline Dim3 grid_dim() {
  return uops_emu_state.grid_dim;
}
// `pc`: where in the kernel's code the access is made.
template <class T>
UOPS_EMU_RT void report(const volatile T* p, int kind, const void* pc) {
  uops_emu_state.access(uops_emu_state.host, (const void*)p, sizeof(T), kind, pc);
}
}  // namespace uops_emu
#define threadIdx (uops_emu::thread_idx())
#define blockIdx (uops_emu::block_idx())
#define blockDim (uops_emu::block_dim())
#define gridDim (uops_emu::grid_dim())

// ---- vector types -------------------------------------------------------------------------------
#define UOPS_EMU_VEC2(T, name, align)             \
  struct __attribute__((aligned(align))) name {   \
    T x, y;                                       \
  };                                              \
  UOPS_EMU_RT inline name make_##name(T x, T y) { \
    return name{x, y};                            \
  }
#define UOPS_EMU_VEC3(T, name)                         \
  struct name {                                        \
    T x, y, z;                                         \
  };                                                   \
  UOPS_EMU_RT inline name make_##name(T x, T y, T z) { \
    return name{x, y, z};                              \
  }
#define UOPS_EMU_VEC4(T, name, align)                       \
  struct __attribute__((aligned(align))) name {             \
    T x, y, z, w;                                           \
  };                                                        \
  UOPS_EMU_RT inline name make_##name(T x, T y, T z, T w) { \
    return name{x, y, z, w};                                \
  }
UOPS_EMU_VEC2(float, float2, 8)
UOPS_EMU_VEC3(float, float3)
UOPS_EMU_VEC4(float, float4, 16)
UOPS_EMU_VEC2(double, double2, 16)
UOPS_EMU_VEC4(double, double4, 32)
UOPS_EMU_VEC2(int, int2, 8)
UOPS_EMU_VEC3(int, int3)
UOPS_EMU_VEC4(int, int4, 16)
UOPS_EMU_VEC2(unsigned, uint2, 8)
UOPS_EMU_VEC3(unsigned, uint3)
UOPS_EMU_VEC4(unsigned, uint4, 16)
UOPS_EMU_VEC2(long long, longlong2, 16)
UOPS_EMU_VEC4(signed char, char4, 4)
UOPS_EMU_VEC4(unsigned char, uchar4, 4)
UOPS_EMU_VEC2(short, short2, 4)

// ---- synchronization ----------------------------------------------------------------------------
UOPS_EMU_RT inline void __syncthreads() {
  uops_emu_state.barrier(uops_emu_state.host, 0, __builtin_return_address(0));
}
UOPS_EMU_RT inline int __syncthreads_count(int p) {
  return uops_emu_state.barrier(uops_emu_state.host, p != 0, __builtin_return_address(0));
}
UOPS_EMU_RT inline int __syncthreads_and(int p) {
  return uops_emu_state.barrier(uops_emu_state.host, p != 0, __builtin_return_address(0)) ==
         int(uops_emu_state.block_dim.x * uops_emu_state.block_dim.y * uops_emu_state.block_dim.z);
}
UOPS_EMU_RT inline int __syncthreads_or(int p) {
  return uops_emu_state.barrier(uops_emu_state.host, p != 0, __builtin_return_address(0)) > 0;
}
UOPS_EMU_RT inline void __threadfence() {
  uops_emu_state.fence(uops_emu_state.host);
}
UOPS_EMU_RT inline void __threadfence_block() {
  uops_emu_state.fence(uops_emu_state.host);
}
UOPS_EMU_RT inline void __threadfence_system() {
  uops_emu_state.fence(uops_emu_state.host);
}
UOPS_EMU_RT inline void __nanosleep(unsigned) {
  uops_emu_state.yield(uops_emu_state.host);
}
UOPS_EMU_RT inline long long clock64() {
  static long long ticks = 0;
  return ticks += 1000;
}

// ---- warp intrinsics ----------------------------------------------------------------------------
namespace uops_emu {
template <class T>
UOPS_EMU_RT T warp(int op, unsigned mask, T v, int operand, int width) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>,
                "warp shuffles take values of at most 8 bytes");
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = uops_emu_state.warp(uops_emu_state.host, op, mask, bits, operand, width,
                             __builtin_return_address(0));
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
}  // namespace uops_emu
template <class T>
UOPS_EMU_RT T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return uops_emu::warp(uops_emu::kShfl, mask, v, src, width);
}
template <class T>
UOPS_EMU_RT T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return uops_emu::warp(uops_emu::kShflUp, mask, v, int(delta), width);
}
template <class T>
UOPS_EMU_RT T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return uops_emu::warp(uops_emu::kShflDown, mask, v, int(delta), width);
}
template <class T>
UOPS_EMU_RT T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return uops_emu::warp(uops_emu::kShflXor, mask, v, lane_mask, width);
}
UOPS_EMU_RT inline unsigned __ballot_sync(unsigned mask, int p) {
  return uops_emu::warp(uops_emu::kBallot, mask, unsigned(p != 0), 0, 32);
}
UOPS_EMU_RT inline int __any_sync(unsigned mask, int p) {
  return uops_emu::warp(uops_emu::kAny, mask, int(p != 0), 0, 32);
}
UOPS_EMU_RT inline int __all_sync(unsigned mask, int p) {
  return uops_emu::warp(uops_emu::kAll, mask, int(p != 0), 0, 32);
}
UOPS_EMU_RT inline void __syncwarp(unsigned mask = 0xffffffffu) {
  uops_emu::warp(uops_emu::kSyncWarp, mask, 0, 0, 32);
}
UOPS_EMU_RT inline unsigned __activemask() {
  return uops_emu::warp(uops_emu::kActiveMask, 0u, 0u, 0, 32);
}
// The forms without a mask are gone since CUDA 9 (undefined under independent scheduling).
#define UOPS_EMU_GONE(name) \
  template <class... A>     \
  void name(A...) = delete;
UOPS_EMU_GONE(__shfl)
UOPS_EMU_GONE(__shfl_up)
UOPS_EMU_GONE(__shfl_down)
UOPS_EMU_GONE(__shfl_xor)
UOPS_EMU_GONE(__ballot)
UOPS_EMU_GONE(__any)
UOPS_EMU_GONE(__all)

// ---- atomics: fibers of one OS thread, so plain read-modify-writes, reported as atomic ----------
namespace uops_emu {
template <class T, class F>
UOPS_EMU_RT T atomic(T* p, F f, const void* pc) {
  report(p, kAtomic, pc);
  T old = *p;
  *p = f(old);
  return old;
}
}  // namespace uops_emu
#define UOPS_EMU_ATOMIC(name, T, expr)                                                \
  UOPS_EMU_RT inline T name(T* p, T v) {                                              \
    return uops_emu::atomic(                                                          \
        p, [v](T old) { return static_cast<T>(expr); }, __builtin_return_address(0)); \
  }                                                                                   \
  UOPS_EMU_RT inline T name##_block(T* p, T v) {                                      \
    return name(p, v);                                                                \
  }                                                                                   \
  UOPS_EMU_RT inline T name##_system(T* p, T v) {                                     \
    return name(p, v);                                                                \
  }
#define UOPS_EMU_ATOMIC_ARITH(T)                   \
  UOPS_EMU_ATOMIC(atomicAdd, T, old + v)           \
  UOPS_EMU_ATOMIC(atomicExch, T, v)                \
  UOPS_EMU_ATOMIC(atomicMax, T, old < v ? v : old) \
  UOPS_EMU_ATOMIC(atomicMin, T, v < old ? v : old)
#define UOPS_EMU_ATOMIC_BITS(T)          \
  UOPS_EMU_ATOMIC(atomicSub, T, old - v) \
  UOPS_EMU_ATOMIC(atomicAnd, T, old& v)  \
  UOPS_EMU_ATOMIC(atomicOr, T, old | v)  \
  UOPS_EMU_ATOMIC(atomicXor, T, old ^ v)
UOPS_EMU_ATOMIC_ARITH(int)
UOPS_EMU_ATOMIC_ARITH(unsigned)
UOPS_EMU_ATOMIC_ARITH(unsigned long long)
UOPS_EMU_ATOMIC_ARITH(long long)
UOPS_EMU_ATOMIC(atomicAdd, float, old + v)
UOPS_EMU_ATOMIC(atomicExch, float, v)
UOPS_EMU_ATOMIC(atomicAdd, double, old + v)
UOPS_EMU_ATOMIC_BITS(int)
UOPS_EMU_ATOMIC_BITS(unsigned)
UOPS_EMU_ATOMIC_BITS(unsigned long long)
UOPS_EMU_ATOMIC(atomicInc, unsigned, old >= v ? 0 : old + 1)
UOPS_EMU_ATOMIC(atomicDec, unsigned, (old == 0 || old > v) ? v : old - 1)
#define UOPS_EMU_CAS(T)                                                                          \
  UOPS_EMU_RT inline T atomicCAS(T* p, T expected, T desired) {                                  \
    return uops_emu::atomic(                                                                     \
        p, [=](T old) { return old == expected ? desired : old; }, __builtin_return_address(0)); \
  }                                                                                              \
  UOPS_EMU_RT inline T atomicCAS_block(T* p, T e, T d) {                                         \
    return atomicCAS(p, e, d);                                                                   \
  }                                                                                              \
  UOPS_EMU_RT inline T atomicCAS_system(T* p, T e, T d) {                                        \
    return atomicCAS(p, e, d);                                                                   \
  }
UOPS_EMU_CAS(int)
UOPS_EMU_CAS(unsigned)
UOPS_EMU_CAS(unsigned long long)
UOPS_EMU_CAS(unsigned short)

// ---- loads through the read-only path, and reinterpretations
// --------------------------------------
#define UOPS_EMU_LOAD(name)                                            \
  template <class T>                                                   \
  UOPS_EMU_RT T name(const T* p) {                                     \
    uops_emu::report(p, uops_emu::kRead, __builtin_return_address(0)); \
    return *p;                                                         \
  }
#define UOPS_EMU_STORE(name)                                            \
  template <class T>                                                    \
  UOPS_EMU_RT void name(T* p, T v) {                                    \
    uops_emu::report(p, uops_emu::kWrite, __builtin_return_address(0)); \
    *p = v;                                                             \
  }
UOPS_EMU_LOAD(__ldg)
UOPS_EMU_LOAD(__ldcs)
UOPS_EMU_LOAD(__ldcg)
UOPS_EMU_LOAD(__ldca)
UOPS_EMU_LOAD(__ldlu)
UOPS_EMU_STORE(__stcs)
UOPS_EMU_STORE(__stcg)
UOPS_EMU_STORE(__stwt)
namespace uops_emu {
template <class To, class From>
UOPS_EMU_RT To bits(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To out;
  std::memcpy(&out, &v, sizeof out);
  return out;
}
}  // namespace uops_emu
UOPS_EMU_RT inline float __int_as_float(int v) {
  return uops_emu::bits<float>(v);
}
UOPS_EMU_RT inline int __float_as_int(float v) {
  return uops_emu::bits<int>(v);
}
UOPS_EMU_RT inline float __uint_as_float(unsigned v) {
  return uops_emu::bits<float>(v);
}
UOPS_EMU_RT inline unsigned __float_as_uint(float v) {
  return uops_emu::bits<unsigned>(v);
}
UOPS_EMU_RT inline double __longlong_as_double(long long v) {
  return uops_emu::bits<double>(v);
}
UOPS_EMU_RT inline long long __double_as_longlong(double v) {
  return uops_emu::bits<long long>(v);
}

// ---- integer intrinsics -------------------------------------------------------------------------
UOPS_EMU_RT inline int __popc(unsigned v) {
  return __builtin_popcount(v);
}
UOPS_EMU_RT inline int __popcll(unsigned long long v) {
  return __builtin_popcountll(v);
}
UOPS_EMU_RT inline int __clz(int v) {
  return v == 0 ? 32 : __builtin_clz(unsigned(v));
}
UOPS_EMU_RT inline int __clzll(long long v) {
  return v == 0 ? 64 : __builtin_clzll((unsigned long long)v);
}
UOPS_EMU_RT inline int __ffs(int v) {
  return __builtin_ffs(v);
}
UOPS_EMU_RT inline int __ffsll(long long v) {
  return __builtin_ffsll(v);
}
UOPS_EMU_RT inline unsigned __brev(unsigned v) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
UOPS_EMU_RT inline int __mul24(int a, int b) {
  return a * b;
}
UOPS_EMU_RT inline unsigned __umul24(unsigned a, unsigned b) {
  return a * b;
}
UOPS_EMU_RT inline int __mulhi(int a, int b) {
  return int(((long long)a * b) >> 32);
}
UOPS_EMU_RT inline unsigned __umulhi(unsigned a, unsigned b) {
  return unsigned(((unsigned long long)a * b) >> 32);
}

// ---- math: the host's <cmath>, and the device's fast and rounding forms -------------------------
#define UOPS_EMU_MINMAX(T)             \
  UOPS_EMU_RT inline T max(T a, T b) { \
    return a < b ? b : a;              \
  }                                    \
  UOPS_EMU_RT inline T min(T a, T b) { \
    return b < a ? b : a;              \
  }
UOPS_EMU_MINMAX(int)
UOPS_EMU_MINMAX(unsigned)
UOPS_EMU_MINMAX(long long)
UOPS_EMU_MINMAX(unsigned long long)
UOPS_EMU_MINMAX(long)
UOPS_EMU_MINMAX(unsigned long)
UOPS_EMU_RT inline float max(float a, float b) {
  return fmaxf(a, b);
}
UOPS_EMU_RT inline float min(float a, float b) {
  return fminf(a, b);
}
UOPS_EMU_RT inline double max(double a, double b) {
  return fmax(a, b);
}
UOPS_EMU_RT inline double min(double a, double b) {
  return fmin(a, b);
}
// The fast forms: the host's full-precision function of the same name without the underscores.
#define UOPS_EMU_FAST(f)                    \
  UOPS_EMU_RT inline float __##f(float x) { \
    return f(x);                            \
  }
UOPS_EMU_FAST(expf)
UOPS_EMU_FAST(logf)
UOPS_EMU_FAST(log2f)
UOPS_EMU_FAST(log10f)
UOPS_EMU_FAST(sinf)
UOPS_EMU_FAST(cosf)
UOPS_EMU_FAST(tanf)
UOPS_EMU_RT inline float __exp10f(float x) {
  return powf(10.0f, x);
}
UOPS_EMU_RT inline float __powf(float x, float y) {
  return powf(x, y);
}
UOPS_EMU_RT inline void __sincosf(float x, float* s, float* c) {
  *s = sinf(x);
  *c = cosf(x);
}
UOPS_EMU_RT inline float __fdividef(float a, float b) {
  return a / b;
}
UOPS_EMU_RT inline float rsqrtf(float x) {
  return 1.0f / sqrtf(x);
}
UOPS_EMU_RT inline double rsqrt(double x) {
  return 1.0 / sqrt(x);
}
UOPS_EMU_RT inline float rcbrtf(float x) {
  return 1.0f / cbrtf(x);
}
UOPS_EMU_RT inline float exp10f(float x) {
  return powf(10.0f, x);
}
UOPS_EMU_RT inline float __saturatef(float x) {
  return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
}
#define UOPS_EMU_ROUNDED(T, s)                     \
  UOPS_EMU_RT inline T __fadd_##s(T a, T b) {      \
    return a + b;                                  \
  }                                                \
  UOPS_EMU_RT inline T __fsub_##s(T a, T b) {      \
    return a - b;                                  \
  }                                                \
  UOPS_EMU_RT inline T __fmul_##s(T a, T b) {      \
    return a * b;                                  \
  }                                                \
  UOPS_EMU_RT inline T __fdiv_##s(T a, T b) {      \
    return a / b;                                  \
  }                                                \
  UOPS_EMU_RT inline T __fmaf_##s(T a, T b, T c) { \
    return std::fma(a, b, c);                      \
  }                                                \
  UOPS_EMU_RT inline T __frcp_##s(T a) {           \
    return T(1) / a;                               \
  }                                                \
  UOPS_EMU_RT inline T __fsqrt_##s(T a) {          \
    return std::sqrt(a);                           \
  }
UOPS_EMU_ROUNDED(float, rn)
UOPS_EMU_RT inline double __dadd_rn(double a, double b) {
  return a + b;
}
UOPS_EMU_RT inline double __dmul_rn(double a, double b) {
  return a * b;
}
UOPS_EMU_RT inline double __fma_rn(double a, double b, double c) {
  return std::fma(a, b, c);
}
UOPS_EMU_RT inline int __float2int_rn(float x) {
  return int(nearbyintf(x));
}
UOPS_EMU_RT inline int __float2int_rz(float x) {
  return int(x);
}
UOPS_EMU_RT inline float __int2float_rn(int x) {
  return float(x);
}
UOPS_EMU_RT inline int __double2int_rn(double x) {
  return int(nearbyint(x));
}

// ---- cooperative groups: a thread block and its tiles (grid-wide groups are not supported)
// -------
namespace cooperative_groups {
struct thread_block {
  UOPS_EMU_RT void sync() const { __syncthreads(); }
  UOPS_EMU_RT unsigned thread_rank() const {
    uops_emu::Dim3 t = threadIdx, d = blockDim;
    return (t.z * d.y + t.y) * d.x + t.x;
  }
  UOPS_EMU_RT unsigned size() const {
    uops_emu::Dim3 d = blockDim;
    return d.x * d.y * d.z;
  }
  UOPS_EMU_RT unsigned num_threads() const { return size(); }
  UOPS_EMU_RT dim3 group_index() const { return blockIdx; }
  UOPS_EMU_RT dim3 thread_index() const { return threadIdx; }
  UOPS_EMU_RT dim3 group_dim() const { return blockDim; }
  UOPS_EMU_RT dim3 dim_threads() const { return blockDim; }
};
UOPS_EMU_RT inline thread_block this_thread_block() {
  return {};
}
// A tile's tile.shfl_X(v, o) is __shfl_X_sync(the tile's mask, v, o, N).
#define UOPS_EMU_TILE_SHUFFLE(name, Operand) \
  template <class T>                         \
  UOPS_EMU_RT T name(T v, Operand o) const { \
    return __##name##_sync(mask(), v, o, N); \
  }
template <unsigned N>
struct thread_block_tile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile is a power of two up to 32");
  UOPS_EMU_RT unsigned lane() const { return this_thread_block().thread_rank() % 32; }
  UOPS_EMU_RT unsigned mask() const {
    unsigned m = N == 32 ? 0xffffffffu : ((1u << N) - 1u);
    return m << (lane() / N * N);
  }
  UOPS_EMU_RT void sync() const { __syncwarp(mask()); }
  UOPS_EMU_RT unsigned thread_rank() const { return lane() % N; }
  UOPS_EMU_RT unsigned meta_group_rank() const { return this_thread_block().thread_rank() / N; }
  UOPS_EMU_RT unsigned meta_group_size() const { return (this_thread_block().size() + N - 1) / N; }
  static constexpr unsigned size() { return N; }
  static constexpr unsigned num_threads() { return N; }
  UOPS_EMU_RT unsigned ballot(int p) const { return __ballot_sync(mask(), p) >> (lane() / N * N); }
  UOPS_EMU_RT int any(int p) const { return __any_sync(mask(), p); }
  UOPS_EMU_RT int all(int p) const { return __all_sync(mask(), p); }
  UOPS_EMU_TILE_SHUFFLE(shfl, int)
  UOPS_EMU_TILE_SHUFFLE(shfl_down, unsigned)
  UOPS_EMU_TILE_SHUFFLE(shfl_up, unsigned)
  UOPS_EMU_TILE_SHUFFLE(shfl_xor, int)
};
template <unsigned N, class Parent>
UOPS_EMU_RT thread_block_tile<N> tiled_partition(const Parent&) {
  return {};
}
UOPS_EMU_RT inline void sync(const thread_block& g) {
  g.sync();
}
template <unsigned N>
UOPS_EMU_RT void sync(const thread_block_tile<N>& g) {
  g.sync();
}
struct grid_group {};
grid_group this_grid() = delete;  // grid-wide synchronization is not emulated
}  // namespace cooperative_groups

// ---- the entry point's parameters and its call
// ----------------------------------------------------
namespace uops_emu {
template <class P>
constexpr char kind_of() {
  if constexpr (std::is_floating_point_v<P>)
    return 'f';
  else if constexpr (std::is_integral_v<P>)
    return std::is_signed_v<P> ? 'i' : 'u';
  else
    return 'v';
}
template <class P>
UOPS_EMU_RT Param param() {
  Param out;
  if constexpr (std::is_pointer_v<P>) {
    using E = std::remove_cv_t<std::remove_pointer_t<P>>;
    out.kind = 'p';
    out.bytes = sizeof(P);
    out.pointee = kind_of<E>();
    if constexpr (!std::is_void_v<E>) out.pointee_bytes = sizeof(E);
  } else {
    out.kind = std::is_arithmetic_v<P> ? kind_of<P>() : 's';
    out.bytes = sizeof(P);
  }
  return out;
}
template <class... P>
UOPS_EMU_RT int describe(void (*)(P...), Param* out, int max) {
  Param all[] = {param<P>()..., Param{}};
  for (int i = 0; i < int(sizeof...(P)) && i < max; ++i) out[i] = all[i];
  return int(sizeof...(P));
}
template <class... P, size_t... I>
UOPS_EMU_RT void call(void (*f)(P...), void** a, std::index_sequence<I...>) {
  f(*static_cast<std::remove_reference_t<P>*>(a[I])...);
}
template <class... P>
UOPS_EMU_RT void call(void (*f)(P...), void** a) {
  call(f, a, std::index_sequence_for<P...>{});
}
}  // namespace uops_emu
