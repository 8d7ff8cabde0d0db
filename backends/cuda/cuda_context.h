// The CUDA backend's device: device 0 of the driver (runtime/cuda_driver.h, the project's one
// loader) through its primary context, with its compute capability.
#pragma once

#include <string>

#include "runtime/cuda_driver.h"

namespace uops::cuda {

using runtime::cuda::CUcontext;
using runtime::cuda::CUdevice;
using runtime::cuda::CUdeviceptr;
using runtime::cuda::CUfunction;
using runtime::cuda::CUmodule;
using runtime::cuda::CUresult;
using runtime::cuda::CUstream;

struct Driver : runtime::cuda::Driver {
  CUdevice device = 0;
  CUcontext context = nullptr;
  int major = 0, minor = 0;

  // Throws uops::Error naming `what` and the driver's error unless r is success.
  void check(CUresult r, const char* what) const;
};

// The loaded driver with device 0's primary context current on the calling thread, or null with
// `why` set (no driver, no device).
const Driver* driver(std::string* why);

}  // namespace uops::cuda
