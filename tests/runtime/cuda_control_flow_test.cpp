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

constexpr std::size_t kWords = 1 << 16;

class CudaControlFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!CudaExecutor::available()) GTEST_SKIP() << "no CUDA device";
    driver_ = std::make_unique<TestDriver>();
    TestDriver::ok(driver_->cuMemAlloc(&counter_, kWords * 4));
  }
  void TearDown() override {
    if (counter_) driver_->cuMemFree(counter_);
  }
  std::uint32_t counter() {
    std::uint32_t value = 0;
    TestDriver::ok(driver_->cuMemcpyDtoH(&value, counter_ + (kWords - 1) * 4, 4));
    return value;
  }
  // A kernel that sets the device counter to `value()` (decided when it is enqueued).
  template <typename Value>
  CudaKernel set_counter(Value value) {
    TestDriver* cu = driver_.get();
    CUdeviceptr at = counter_;
    return [=](CudaStream s) { TestDriver::ok(cu->cuMemsetD32Async(at, value(), kWords, s)); };
  }

  std::unique_ptr<TestDriver> driver_;
  CUdeviceptr counter_ = 0;
};

// Each iteration writes the next count to the device; the condition reads it back.
TEST_F(CudaControlFlowTest, WhileRunsUntilTheDeviceCounterReachesItsBound) {
  auto iterations = std::make_shared<std::uint32_t>(0);
  GraphBuilder body;
  body.add_cuda("count", set_counter([iterations] { return ++*iterations; }), {counter_},
                {counter_});
  GraphBuilder b;
  b.add_cuda("start", set_counter([] { return 0u; }), {}, {counter_});
  b.add(cuda_while_node(
      "loop", counter_, [this] { return counter() < 5; }, std::move(body).build(), 10));
  CudaExecutor executor(std::move(b).build());
  executor.run();
  EXPECT_EQ(counter(), 5u);
  EXPECT_EQ(*iterations, 5u);
}

TEST_F(CudaControlFlowTest, CaseRunsTheBranchTheDeviceSelects) {
  auto branch = [&](std::uint32_t value) {
    GraphBuilder g;
    g.add_cuda("set", set_counter([value] { return value; }), {}, {counter_});
    return std::move(g).build();
  };
  GraphBuilder b;
  b.add_cuda("select 1", set_counter([] { return 1u; }), {}, {counter_});
  b.add(cuda_case_node("pick", counter_, [this] { return std::size_t(counter()); },
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
