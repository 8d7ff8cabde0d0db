// The driver's memory functions the CUDA tests need beyond what the runtime uses, loaded with
// dlopen the way the runtime loads the driver, so the tests build without the CUDA toolkit.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "uops/runtime/cuda_executor.h"

namespace uops::runtime {

using CUdeviceptr = unsigned long long;
using CUresult = int;

// Memory functions the tests need beyond what the executor uses.
struct TestDriver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGet)(int*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(void**, int);
  CUresult (*cuCtxSetCurrent)(void*);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, std::size_t);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, std::size_t, void*);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, std::size_t, void*);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t);

  template <typename F>
  static void resolve(void* library, const char* name, F& f) {
    f = reinterpret_cast<F>(dlsym(library, name));
    if (!f) throw std::runtime_error(name);
  }

  // Makes device 0's primary context current, the one the executor uses too.
  TestDriver() {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) throw std::runtime_error("libcuda.so.1");
    resolve(library, "cuInit", cuInit);
    resolve(library, "cuDeviceGet", cuDeviceGet);
    resolve(library, "cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain);
    resolve(library, "cuCtxSetCurrent", cuCtxSetCurrent);
    resolve(library, "cuMemAlloc_v2", cuMemAlloc);
    resolve(library, "cuMemFree_v2", cuMemFree);
    resolve(library, "cuMemsetD32_v2", cuMemsetD32);
    resolve(library, "cuMemsetD32Async", cuMemsetD32Async);
    resolve(library, "cuMemcpyDtoDAsync_v2", cuMemcpyDtoDAsync);
    resolve(library, "cuMemcpyDtoH_v2", cuMemcpyDtoH);
    int device = 0;
    void* context = nullptr;
    ok(cuInit(0));
    ok(cuDeviceGet(&device, 0));
    ok(cuDevicePrimaryCtxRetain(&context, device));
    ok(cuCtxSetCurrent(context));
  }

  static void ok(CUresult result) {
    if (result != 0) throw std::runtime_error("driver error " + std::to_string(result));
  }
};

// A fixture that skips without a device, and otherwise holds N device buffers of `Words`
// 32-bit words each.
template <std::size_t N, std::size_t Words>
class DeviceBuffersTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kWords = Words;
  static constexpr std::size_t kBytes = Words * 4;

  void SetUp() override {
    if (!CudaExecutor::available()) GTEST_SKIP() << "no CUDA device";
    driver_ = std::make_unique<TestDriver>();
    for (CUdeviceptr& buffer : buffers_) TestDriver::ok(driver_->cuMemAlloc(&buffer, kBytes));
  }
  void TearDown() override {
    for (CUdeviceptr buffer : buffers_) {
      if (buffer) driver_->cuMemFree(buffer);
    }
  }

  std::unique_ptr<TestDriver> driver_;
  std::array<CUdeviceptr, N> buffers_{};
};

}  // namespace uops::runtime
