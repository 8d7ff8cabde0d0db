// Eager mode on a CUDA device, with driver memsets and copies as kernels: results equal to a
// sequential run, and GrCUDA's rules where a device makes them observable without gating
// kernels (concurrent readers, covered computations, streams reused once free, host access
// waiting for its buffer's work). Every test that needs a device skips without one.
#include "uops/runtime/cuda_context.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "cuda_test_driver.h"
#include "uops/runtime/cuda_executor.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

using Ids = std::vector<ComputationId>;
class CudaContextTest : public DeviceBuffersTest<6, (1 << 18)> {
 protected:
  CudaKernel fill(int buffer, unsigned value) {
    TestDriver* cu = driver_.get();
    CUdeviceptr dst = buffers_[buffer];
    return [=](CudaStream s) { TestDriver::ok(cu->cuMemsetD32Async(dst, value, kWords, s)); };
  }
  CudaKernel copy(int to, int from) {
    TestDriver* cu = driver_.get();
    CUdeviceptr dst = buffers_[to], src = buffers_[from];
    return [=](CudaStream s) { TestDriver::ok(cu->cuMemcpyDtoDAsync(dst, src, kBytes, s)); };
  }
  BufferId id(int buffer) const { return BufferId(buffers_[buffer]); }
  std::uint32_t last_word(int buffer) {
    std::uint32_t value = 0;
    TestDriver::ok(driver_->cuMemcpyDtoH(&value, buffers_[buffer] + kBytes - 4, 4));
    return value;
  }
};

TEST_F(CudaContextTest, RandomProgramsComputeAsSequentially) {
  std::mt19937 rng(11);
  for (std::size_t max_streams : {1, 2, 3}) {
    CudaContext context(CudaContextOptions{.max_streams = max_streams});
    std::vector<std::uint32_t> expected(buffers_.size(), 0);
    for (int b = 0; b < int(buffers_.size()); ++b) context.launch("zero", fill(b, 0), {}, {id(b)});
    for (int i = 0; i < 60; ++i) {
      const int to = int(rng() % buffers_.size());
      if (rng() % 2 == 0) {
        context.launch("fill", fill(to, unsigned(i)), {}, {id(to)});
        expected[to] = unsigned(i);
      } else {
        const int from = int(rng() % buffers_.size());
        if (from == to) continue;
        context.launch("copy", copy(to, from), {id(from)}, {id(to)});
        expected[to] = expected[from];
      }
      if (rng() % 8 == 0) {
        context.read(id(to));
        ASSERT_EQ(last_word(to), expected[to]) << "launch " << i;
      }
    }
    context.sync();
    for (int b = 0; b < int(buffers_.size()); ++b) EXPECT_EQ(last_word(b), expected[b]) << b;
    EXPECT_TRUE(context.active().empty());
    EXPECT_LE(context.stream_count(), max_streams);
  }
}

// Two copies out of one buffer depend only on its writer and go on different streams.
TEST_F(CudaContextTest, ReadersOfOneBufferGoOnDifferentStreams) {
  CudaContext context(CudaContextOptions{.max_streams = 2});
  Launched writer = context.launch("fill", fill(0, 5), {}, {id(0)});
  Launched a = context.launch("a", copy(1, 0), {id(0)}, {id(1)});
  Launched b = context.launch("b", copy(2, 0), {id(0)}, {id(2)});
  EXPECT_EQ(a.dependencies, Ids{writer.id});
  EXPECT_EQ(b.dependencies, Ids{writer.id});
  EXPECT_EQ(a.stream, writer.stream);
  EXPECT_NE(b.stream, a.stream);
  context.read(id(2));
  EXPECT_EQ(last_word(2), 5u);
  context.sync();
  EXPECT_EQ(last_word(1), 5u);
}

TEST_F(CudaContextTest, CoveredComputationsRetire) {
  CudaContext context(CudaContextOptions{.max_streams = 2});
  Launched a = context.launch("a", copy(1, 0), {id(0)}, {id(1)});
  Launched b = context.launch("b", fill(1, 1), {}, {id(1)});
  EXPECT_EQ(b.dependencies, Ids{a.id});
  EXPECT_EQ(context.active(), (Ids{a.id, b.id}));  // a still reads buffer 0
  Launched c = context.launch("c", fill(0, 2), {}, {id(0)});
  EXPECT_EQ(c.dependencies, Ids{a.id});
  EXPECT_EQ(context.active(), (Ids{b.id, c.id}));
  context.sync();
  EXPECT_TRUE(context.active().empty());
}

// Once the host has seen a stream's work finish, the next independent launch reuses that
// stream instead of making another.
TEST_F(CudaContextTest, FreeStreamIsReusedBeforeANewOne) {
  CudaContext context(CudaContextOptions{.max_streams = 4});
  context.launch("first", fill(0, 1), {}, {id(0)});
  context.read(id(0));
  EXPECT_EQ(context.launch("second", fill(1, 2), {}, {id(1)}).stream, 0u);
  EXPECT_EQ(context.stream_count(), 1u);
  context.sync();
}

// A host read of one buffer returns with that buffer's work done, while other streams may
// still hold theirs; a host write waits for the readers too.
TEST_F(CudaContextTest, HostAccessWaitsForItsBuffer) {
  CudaContext context(CudaContextOptions{.max_streams = 2});
  context.launch("fill", fill(0, 3), {}, {id(0)});
  context.launch("other", fill(3, 4), {}, {id(3)});
  context.launch("copy", copy(1, 0), {id(0)}, {id(1)});
  context.read(id(1));
  EXPECT_EQ(last_word(1), 3u);
  context.write(id(0));  // the copy read it
  context.sync();
  EXPECT_EQ(last_word(3), 4u);
}

TEST_F(CudaContextTest, ThrowingKernelIsReportedAndLaterWorkSkipped) {
  CudaContext context(CudaContextOptions{.max_streams = 2});
  context.launch("fill", fill(1, 8), {}, {id(1)});
  context.sync();
  context.launch("throws", [](CudaStream) { throw std::logic_error("enqueue failed"); }, {},
                 {id(0)});
  context.launch("later", fill(1, 9), {}, {id(1)});
  EXPECT_THROW(context.read(id(1)), std::logic_error);
  EXPECT_THROW(context.sync(), std::logic_error);
  EXPECT_EQ(last_word(1), 8u);
  context.launch("again", fill(1, 9), {}, {id(1)});
  context.sync();
  EXPECT_EQ(last_word(1), 9u);
}

TEST(CudaContextWithoutDevice, ConstructionFailsWithRuntimeError) {
  if (CudaExecutor::available()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_THROW(CudaContext{}, Error);
}

TEST(CudaContextChecks, RejectsMisuse) {
  if (!CudaExecutor::available()) GTEST_SKIP() << "no CUDA device";
  EXPECT_THROW(CudaContext(CudaContextOptions{.max_streams = 0}), Error);
  CudaContext context;
  EXPECT_THROW(context.launch("none", nullptr, {}, {}), Error);
}

}  // namespace
}  // namespace uops::runtime
