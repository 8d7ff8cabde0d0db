// The CUDA kernel catalogue on a GPU, beside the emulation: where a device is present, every
// correct kernel passes on it and every kernel whose bug shows in values fails on it, as on the
// emulation; a kernel the emulation catches only by a detector (a race that happens to give the
// right values) is reported with both verdicts. Without a device each test skips, saying why.
// Also the device-pointer implementation (oracle::on_device).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backends/cuda/cuda_device.h"
#include "oracle/cuda_kernel_catalogue.h"
#include "uops/error.h"
#include "uops/oracle/cuda_kernel.h"

namespace uops::oracle {
namespace {

std::string no_device() {
  std::string why;
  return cuda::driver_device(&why) ? "" : "no CUDA device: " + why;
}

TEST(CudaKernelDevice, SameVerdictsAsTheEmulation) {
  if (std::string why = no_device(); !why.empty()) GTEST_SKIP() << why;
  int agree = 0, detector_only = 0;
  for (const CudaCatalogueEntry& e : cuda_kernel_catalogue()) {
    CudaKernel k = catalogue_kernel(e);
    const OpDef& op = find_op(e.op);
    CheckReport gpu = check_cuda_kernel(op, k, {}, CudaTarget::device);
    CheckReport emu = check_cuda_kernel(op, k, {}, CudaTarget::emulation);
    EXPECT_EQ(gpu.backend, "cuda");
    std::cout << e.name << ": device " << (gpu.passed ? "pass" : "FAIL") << ", emulation "
              << (emu.passed ? "pass" : "FAIL") << "\n";
    if (!e.wrong() || e.expect == "disagrees") {
      EXPECT_EQ(gpu.passed, emu.passed) << e.name << "\n" << gpu.message() << emu.message();
      agree += gpu.passed == emu.passed;
    } else {
      EXPECT_FALSE(emu.passed) << e.name;
      detector_only += gpu.passed;
    }
  }
  std::cout << agree << " kernels with the same verdict on both; " << detector_only
            << " caught by a detector on the emulation pass on the device\n";
}

// A kernel compiled elsewhere and launched by the user's own code on device pointers.
TEST(CudaKernelDevice, DevicePointerImplementation) {
  if (std::string why = no_device(); !why.empty()) GTEST_SKIP() << why;
  auto device = cuda::driver_device(nullptr);
  const char* relu = R"(
extern "C" __global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
})";
  const void* f = device->load_entry(relu, "relu.cu", "relu");
  auto launch = [&](const DeviceTensorMap& in, const DeviceTensorMap& out, const ParamMap&) {
    unsigned long long x = in.at("x").address, y = out.at("y").address;
    int n = int(in.at("x").shape[0] * in.at("x").shape[1]);
    void* args[] = {&x, &y, &n};
    unsigned grid[3] = {unsigned((n + 255) / 256), 1, 1}, block[3] = {256, 1, 1};
    device->launch_entry(f, grid, block, 0, args, nullptr);
  };
  CheckReport r = check(find_op("relu"), on_device(find_op("relu"), launch));
  EXPECT_TRUE(r.passed) << r.message();
}

TEST(CudaKernelDevice, WithoutAGpuTheDevicePointerImplementationSaysWhy) {
  if (no_device().empty()) GTEST_SKIP() << "a CUDA device is present";
  Implementation impl = on_device(find_op("relu"), [](auto&, auto&, auto&) {});
  TensorMap in;
  in["x"] = Tensor(DType::f32, {2, 2});
  try {
    impl(in, {});
    FAIL() << "ran without a GPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uops::oracle
