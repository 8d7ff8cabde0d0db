// while and case nodes on a CUDA device, by host-side evaluation: the condition reads device
// memory after the work before it has finished. Skips without a device.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "cuda_test_driver.h"
#include "uops/runtime/builder.h"
#include "uops/runtime/control_flow.h"
#include "uops/runtime/cuda_executor.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

class CudaControlFlowTest : public DeviceBuffersTest<1, (1 << 16)> {
 protected:
  std::uint32_t counter() {
    std::uint32_t value = 0;
    TestDriver::ok(driver_->cuMemcpyDtoH(&value, buffers_[0] + (kWords - 1) * 4, 4));
    return value;
  }
  // A kernel that sets the device counter to `value()` (decided when it is enqueued).
  template <typename Value>
  CudaKernel set_counter(Value value) {
    TestDriver* cu = driver_.get();
    CUdeviceptr at = buffers_[0];
    return [=](CudaStream s) { TestDriver::ok(cu->cuMemsetD32Async(at, value(), kWords, s)); };
  }
};

// Each iteration writes the next count to the device; the condition reads it back.
TEST_F(CudaControlFlowTest, WhileRunsUntilTheDeviceCounterReachesItsBound) {
  auto iterations = std::make_shared<std::uint32_t>(0);
  GraphBuilder body;
  body.add_cuda("count", set_counter([iterations] { return ++*iterations; }), {buffers_[0]},
                {buffers_[0]});
  GraphBuilder b;
  b.add_cuda("start", set_counter([] { return 0u; }), {}, {buffers_[0]});
  b.add(cuda_while_node(
      "loop", buffers_[0], [this] { return counter() < 5; }, std::move(body).build(), 10));
  CudaExecutor executor(std::move(b).build());
  executor.run();
  EXPECT_EQ(counter(), 5u);
  EXPECT_EQ(*iterations, 5u);
}

TEST_F(CudaControlFlowTest, CaseRunsTheBranchTheDeviceSelects) {
  auto branch = [&](std::uint32_t value) {
    GraphBuilder g;
    g.add_cuda("set", set_counter([value] { return value; }), {}, {buffers_[0]});
    return std::move(g).build();
  };
  GraphBuilder b;
  b.add_cuda("select 1", set_counter([] { return 1u; }), {}, {buffers_[0]});
  b.add(cuda_case_node("pick", buffers_[0], [this] { return std::size_t(counter()); },
                       {branch(10), branch(20)}));
  CudaExecutor executor(std::move(b).build());
  executor.run();
  EXPECT_EQ(counter(), 20u);
}

TEST(CudaControlFlowWithoutDevice, NodesFailWithRuntimeError) {
  if (CudaExecutor::available()) GTEST_SKIP() << "a CUDA device is present";
  GraphBuilder body;
  body.add_cuda("k", [](CudaStream) {}, {}, {1});
  EXPECT_THROW(cuda_while_node(
                   "w", 1, [] { return false; }, std::move(body).build(), 1),
               Error);
}

}  // namespace
}  // namespace uops::runtime
