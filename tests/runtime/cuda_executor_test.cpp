// The CUDA executor on a real device, with driver memsets and copies as kernels. Every test
// that needs a device skips without one; the driver is loaded here the same way the runtime
// does, so this builds without the CUDA toolkit.
#include "uops/runtime/cuda_executor.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "cuda_test_driver.h"
#include "uops/runtime/builder.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

class CudaExecutorTest : public DeviceBuffersTest<4, (1 << 20)> {
 protected:
  // fill a=7; b=a and c=a in parallel; fill a=9 (after both copies); d=a. Expect b=c=7, d=9.
  Graph copy_graph(bool fail = false) {
    auto [a, b, c, d] = buffers_;
    TestDriver* cu = driver_.get();
    auto fill = [cu](CUdeviceptr dst, unsigned value) {
      return [=](CudaStream s) { TestDriver::ok(cu->cuMemsetD32Async(dst, value, kWords, s)); };
    };
    auto copy = [cu](CUdeviceptr dst, CUdeviceptr src) {
      return [=](CudaStream s) { TestDriver::ok(cu->cuMemcpyDtoDAsync(dst, src, kBytes, s)); };
    };
    GraphBuilder g;
    g.add_cuda("fill a", fill(a, 7), {}, {a});
    g.add_cuda("b = a", copy(b, a), {a}, {b});
    g.add_cuda("c = a", copy(c, a), {a}, {c});
    if (fail)
      g.add_cuda("fail", [](CudaStream) { throw std::logic_error("enqueue failed"); }, {}, {a});
    g.add_cuda("fill a again", fill(a, 9), {}, {a});
    g.add_cuda("d = a", copy(d, a), {a}, {d});
    return std::move(g).build(BuildOptions{.max_streams = 3});
  }

  void clear_outputs() {
    for (int i = 1; i < 4; ++i) TestDriver::ok(driver_->cuMemsetD32(buffers_[i], 0, kWords));
  }

  std::uint32_t word(int buffer, std::size_t index) {
    std::uint32_t value = 0;
    TestDriver::ok(driver_->cuMemcpyDtoH(&value, buffers_[buffer] + index * 4, 4));
    return value;
  }

  void expect_results() {
    for (std::size_t index : {std::size_t{0}, kWords - 1}) {
      EXPECT_EQ(word(1, index), 7u);
      EXPECT_EQ(word(2, index), 7u);
      EXPECT_EQ(word(3, index), 9u);
    }
  }
};

TEST_F(CudaExecutorTest, EagerRunsRepeatedly) {
  CudaExecutor executor(copy_graph());
  ASSERT_GE(executor.graph().schedule().signals.size(), 1u);
  for (int run = 0; run < 3; ++run) {
    clear_outputs();
    executor.run();
    expect_results();
  }
}

TEST_F(CudaExecutorTest, GraphReplayRunsRepeatedly) {
  CudaExecutor executor(copy_graph(), CudaOptions{.use_cuda_graph = true});
  for (int run = 0; run < 3; ++run) {
    clear_outputs();
    executor.run();
    expect_results();
  }
  Trace trace;
  EXPECT_THROW(executor.run(&trace), Error);
}

TEST_F(CudaExecutorTest, TracedRunTimesEveryNode) {
  CudaExecutor executor(copy_graph());
  Trace trace;
  clear_outputs();
  executor.run(&trace);
  expect_results();
  EXPECT_EQ(trace.events.size(), executor.graph().size());
  for (const TraceEvent& e : trace.events) EXPECT_GE(e.duration_us, 0.0);
}

TEST_F(CudaExecutorTest, ThrowingKernelIsRethrownInBothModes) {
  for (bool use_graph : {false, true}) {
    CudaExecutor executor(copy_graph(true), CudaOptions{.use_cuda_graph = use_graph});
    EXPECT_THROW(executor.run(), std::logic_error) << use_graph;
    EXPECT_THROW(executor.run(), std::logic_error) << use_graph;
  }
}

TEST(CudaExecutorWithoutDevice, ConstructionFailsWithRuntimeError) {
  if (CudaExecutor::available()) GTEST_SKIP() << "a CUDA device is present";
  GraphBuilder b;
  b.add_cuda("k", [](CudaStream) {}, {}, {});
  EXPECT_THROW(CudaExecutor(std::move(b).build()), Error);
}

TEST(CudaExecutorChecks, RejectsNodesWithoutCudaKernel) {
  if (!CudaExecutor::available()) GTEST_SKIP() << "no CUDA device";
  GraphBuilder b;
  b.add("cpu only", [] {}, {}, {});
  EXPECT_THROW(CudaExecutor(std::move(b).build()), Error);
}

}  // namespace
}  // namespace uops::runtime
