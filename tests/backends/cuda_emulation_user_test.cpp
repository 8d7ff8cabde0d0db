// The CUDA emulation on kernels written the way people write them: each construct of the device
// API runs right, and each detector fires on the bug it is for, with the thread and the line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cuda_emulation/emulator.h"
#include "backends/cuda_emulation/module.h"
#include "uops/error.h"

namespace uops::cuda_emulation {
namespace {

// Runs `entry` of `source` on float buffers (inputs copied in, every buffer read back) and
// int arguments; gives the fault text ("" when it ran clean).
struct Result {
  std::vector<std::vector<float>> buffers;
  std::string fault;
};

Result run(const std::string& source, const std::string& entry,
           std::vector<std::vector<float>> bufs, std::vector<int> ints, uops_emu::Dim3 grid,
           uops_emu::Dim3 block, size_t dynamic = 0) {
  auto m = load_module(source, "test.cu", {entry});
  Emulator emu;
  std::vector<uintptr_t> addresses;
  for (size_t i = 0; i < bufs.size(); ++i) {
    uintptr_t a = emu.allocate(bufs[i].size() * 4, "buf" + std::to_string(i), 4, 0xff);
    std::memcpy(emu.host(a, bufs[i].size() * 4), bufs[i].data(), bufs[i].size() * 4);
    addresses.push_back(a);
  }
  std::vector<void*> args;
  for (auto& a : addresses) args.push_back(&a);
  for (auto& i : ints) args.push_back(&i);
  Launch l;
  l.module = m.get();
  l.entry = m->entries[0].call;
  l.args = args.data();
  l.grid = grid;
  l.block = block;
  l.dynamic_shared = dynamic;
  l.kernel = entry;
  Result out;
  try {
    emu.launch(l);
  } catch (const Error& e) {
    out.fault = e.what();
  }
  for (size_t i = 0; i < bufs.size(); ++i) {
    std::memcpy(bufs[i].data(), emu.host(addresses[i], bufs[i].size() * 4), bufs[i].size() * 4);
  }
  out.buffers = std::move(bufs);
  return out;
}

std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[size_t(i)] = float(i % 7) - 3.0f;
  return v;
}

const char* kSum = R"(
template <int B>
__global__ void row_sum(const float* __restrict__ x, float* y, int cols) {
  __shared__ float part[B];
  float s = 0;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += x[blockIdx.x * cols + c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int h = B / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}
)";

TEST(CudaEmulationUser, SharedMemoryReductionIsRight) {
  int rows = 3, cols = 100;
  Result r = run(kSum, "row_sum<64>", {ramp(rows * cols), std::vector<float>(3)}, {cols}, {3, 1, 1},
                 {64, 1, 1});
  ASSERT_EQ(r.fault, "");
  for (int i = 0; i < rows; ++i) {
    float want = 0;
    for (int c = 0; c < cols; ++c) want += ramp(rows * cols)[size_t(i * cols + c)];
    EXPECT_FLOAT_EQ(r.buffers[1][size_t(i)], want);
  }
}

// Thread 0 runs first and reads what thread 32 has not written yet.
TEST(CudaEmulationUser, MissingBarrierReadsUnwrittenSharedMemory) {
  std::string src = kSum;
  src.replace(src.find("__syncthreads();\n  for"), 16, "");
  Result r =
      run(src, "row_sum<64>", {ramp(300), std::vector<float>(3)}, {100}, {3, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("uninitialised shared memory: shared memory row_sum<64>::part[32]"),
            std::string::npos)
      << r.fault;
  EXPECT_NE(r.fault.find("__syncthreads missing"), std::string::npos) << r.fault;
  EXPECT_NE(r.fault.find("at test.cu:10"), std::string::npos) << r.fault;
  EXPECT_NE(r.fault.find("block (0,0,0)"), std::string::npos) << r.fault;
}

TEST(CudaEmulationUser, SharedArrayOneShortIsOutOfBounds) {
  std::string src = kSum;
  src.replace(src.find("part[B]"), 7, "part[B - 1]");
  Result r =
      run(src, "row_sum<64>", {ramp(300), std::vector<float>(3)}, {100}, {3, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("out of bounds: write of shared memory row_sum<64>::part[63]"),
            std::string::npos)
      << r.fault;
}

TEST(CudaEmulationUser, GlobalOutOfBoundsNeverHappens) {
  const char* src = R"(
__global__ void copy(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) y[i] = x[i];
}
)";
  Result r =
      run(src, "copy", {ramp(64), std::vector<float>(64, 5.0f)}, {64}, {2, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("out of bounds: read of buf0[64], which has 64 elements"),
            std::string::npos)
      << r.fault;
  EXPECT_NE(r.fault.find("test.cu:4"), std::string::npos) << r.fault;
}

const char* kWarp = R"(
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
__global__ void sums(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) atomicAdd(y, v);
}
)";

TEST(CudaEmulationUser, WarpShufflesAndAtomicsAreRight) {
  Result r =
      run(kWarp, "sums", {ramp(200), std::vector<float>(1, 0.0f)}, {200}, {4, 1, 1}, {64, 1, 1});
  ASSERT_EQ(r.fault, "");
  float want = 0;
  for (float v : ramp(200)) want += v;
  EXPECT_FLOAT_EQ(r.buffers[1][0], want);
}

TEST(CudaEmulationUser, FullMaskInAPartialWarp) {
  Result r =
      run(kWarp, "sums", {ramp(200), std::vector<float>(1, 0.0f)}, {200}, {5, 1, 1}, {48, 1, 1});
  EXPECT_NE(r.fault.find("__shfl_down_sync: the mask 0xffffffff names lane 16, which does not "
                         "exist"),
            std::string::npos)
      << r.fault;
}

TEST(CudaEmulationUser, PlainAccumulatorIsARace) {
  std::string src = kWarp;
  src.replace(src.find("atomicAdd(y, v)"), 15, "*y += v");
  Result r =
      run(src, "sums", {ramp(200), std::vector<float>(1, 0.0f)}, {200}, {4, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("race on buf1[0]"), std::string::npos) << r.fault;
}

TEST(CudaEmulationUser, UninitialisedSharedRead) {
  const char* src = R"(
__global__ void k(const float* x, float* y, int n) {
  __shared__ float s[64];
  if (threadIdx.x < 32) s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = s[63 - threadIdx.x];
}
)";
  Result r = run(src, "k", {ramp(64), std::vector<float>(64)}, {64}, {1, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("uninitialised shared memory: shared memory k::s[63]"), std::string::npos)
      << r.fault;
}

TEST(CudaEmulationUser, EarlyReturnBeforeABarrier) {
  const char* src = R"(
__global__ void k(const float* x, float* y, int n) {
  __shared__ float s[64];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = x[i];
  __syncthreads();
  y[i] = s[n - 1 - i];
}
)";
  Result r = run(src, "k", {ramp(64), std::vector<float>(64)}, {40}, {1, 1, 1}, {64, 1, 1});
  EXPECT_NE(r.fault.find("__syncthreads not reached by every thread"), std::string::npos)
      << r.fault;
}

TEST(CudaEmulationUser, DynamicSharedMemoryAnd2DBlocks) {
  const char* src = R"(
#include <cuda_runtime.h>
__global__ void transpose(const float* x, float* y, int rows, int cols) {
  extern __shared__ float tile[];
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y * blockDim.x + threadIdx.x] = x[r * cols + c];
  __syncthreads();
  if (r < rows && c < cols) y[c * rows + r] = tile[threadIdx.y * blockDim.x + threadIdx.x];
}
)";
  int rows = 5, cols = 9;
  Result r = run(src, "transpose", {ramp(rows * cols), std::vector<float>(size_t(rows * cols))},
                 {rows, cols}, {3, 2, 1}, {4, 4, 1}, 16 * 4);
  ASSERT_EQ(r.fault, "");
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      EXPECT_EQ(r.buffers[1][size_t(j * rows + i)], ramp(rows * cols)[size_t(i * cols + j)]);
  // Too little dynamic shared memory for the tile.
  Result small = run(src, "transpose", {ramp(rows * cols), std::vector<float>(size_t(rows * cols))},
                     {rows, cols}, {3, 2, 1}, {4, 4, 1}, 15 * 4);
  EXPECT_NE(small.fault.find("out of bounds: write of shared memory dynamic shared memory"),
            std::string::npos)
      << small.fault;
}

TEST(CudaEmulationUser, CooperativeGroupsTilesAndVectorLoads) {
  const char* src = R"(
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float* __restrict__ x, float* y, int n4) {
  cg::thread_block b = cg::this_thread_block();
  auto tile = cg::tiled_partition<16>(b);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0;
  if (i < n4) {
    float4 q = reinterpret_cast<const float4*>(x)[i];
    v = q.x + q.y + q.z + q.w;
  }
  for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
  if (tile.thread_rank() == 0) atomicAdd(&y[0], v);
}
)";
  Result r = run(src, "k", {ramp(128), std::vector<float>(1, 0.0f)}, {32}, {1, 1, 1}, {32, 1, 1});
  ASSERT_EQ(r.fault, "");
  float want = 0;
  for (float v : ramp(128)) want += v;
  EXPECT_FLOAT_EQ(r.buffers[1][0], want);
}

// A 3-D grid of 3-D blocks, each thread adding its linear index into a double with a CAS loop
// (the idiom for atomics a type lacks), and the maximum of a float through atomicCAS on its bits.
TEST(CudaEmulationUser, CasLoopsOnA3DGrid) {
  const char* src = R"(
__device__ double add_double(double* p, double v) {
  unsigned long long* a = reinterpret_cast<unsigned long long*>(p);
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
  } while (assumed != old);
  return __longlong_as_double(old);
}
__device__ void max_float(float* p, float v) {
  int* a = reinterpret_cast<int*>(p);
  int old = *a;
  while (__int_as_float(old) < v) {
    int seen = atomicCAS(a, old, __float_as_int(v));
    if (seen == old) break;
    old = seen;
  }
}
__global__ void k(float* out, int n) {
  unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  unsigned i = block * blockDim.x * blockDim.y * blockDim.z + t;
  add_double(reinterpret_cast<double*>(out), double(i));
  max_float(out + 2, float(i));
}
)";
  std::vector<float> out = {0.0f, 0.0f, -1.0f};
  Result r = run(src, "k", {out}, {0}, {2, 2, 2}, {4, 2, 3});
  ASSERT_EQ(r.fault, "");
  double sum = 0;
  std::memcpy(&sum, r.buffers[0].data(), sizeof sum);
  int n = 8 * 24;
  EXPECT_EQ(sum, double(n) * (n - 1) / 2);
  EXPECT_EQ(r.buffers[0][2], float(n - 1));
}

TEST(CudaEmulationUser, DeviceAssertIsAFaultNotAnAbort) {
  const char* src = R"(
#include <cassert>
__global__ void k(const float* x, float* y, int n) {
  assert(threadIdx.x < 3);
  y[threadIdx.x] = x[threadIdx.x];
}
)";
  Result r = run(src, "k", {ramp(4), std::vector<float>(4)}, {0}, {1, 1, 1}, {4, 1, 1});
  EXPECT_NE(r.fault.find("assertion failed: threadIdx.x < 3"), std::string::npos) << r.fault;
  EXPECT_NE(r.fault.find("thread (3,0,0)"), std::string::npos) << r.fault;
}

TEST(CudaEmulationUser, IntegerDivisionByZeroIsAFault) {
  const char* src = R"(
__global__ void k(const float* x, float* y, int n) {
  y[threadIdx.x] = float(int(threadIdx.x) / n);
}
)";
  Result r = run(src, "k", {ramp(4), std::vector<float>(4)}, {0}, {1, 1, 1}, {4, 1, 1});
  EXPECT_NE(r.fault.find("integer division by zero"), std::string::npos) << r.fault;
}

TEST(CudaEmulationUser, UnsupportedConstructIsACompileError) {
  const char* src = R"(
__global__ void k(float* y) { y[0] = __shfl(y[1], 0); }
)";
  try {
    load_module(src, "old.cu", {"k"});
    FAIL() << "compiled";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("old.cu:2"), std::string::npos) << what;
    EXPECT_NE(what.find("__shfl"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace uops::cuda_emulation
