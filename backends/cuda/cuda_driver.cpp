#include "backends/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

#include "uops/error.h"

namespace uops::cuda {

void Driver::check(CUresult r, const char* what) const {
  if (r == 0) return;
  const char* msg = nullptr;
  if (cuGetErrorString) cuGetErrorString(r, &msg);
  throw Error(std::string("CUDA driver: ") + what + " failed: " + (msg ? msg : std::to_string(r)));
}

namespace {

template <typename F>
bool load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

std::string init(Driver& d) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "no CUDA driver (libcuda.so.1 not found)";
  bool ok = load(lib, "cuInit", d.cuInit) && load(lib, "cuDeviceGetCount", d.cuDeviceGetCount) &&
            load(lib, "cuDeviceGet", d.cuDeviceGet) &&
            load(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
            load(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain) &&
            load(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
            load(lib, "cuModuleLoadData", d.cuModuleLoadData) &&
            load(lib, "cuModuleGetFunction", d.cuModuleGetFunction) &&
            load(lib, "cuMemAlloc_v2", d.cuMemAlloc) && load(lib, "cuMemFree_v2", d.cuMemFree) &&
            load(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
            load(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH) &&
            load(lib, "cuMemsetD8_v2", d.cuMemsetD8) &&
            load(lib, "cuMemsetD8Async", d.cuMemsetD8Async) &&
            load(lib, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync) &&
            load(lib, "cuStreamSynchronize", d.cuStreamSynchronize) &&
            load(lib, "cuLaunchKernel", d.cuLaunchKernel) &&
            load(lib, "cuCtxSynchronize", d.cuCtxSynchronize) &&
            load(lib, "cuGetErrorString", d.cuGetErrorString);
  if (!ok) return "the CUDA driver lacks an entry point uops needs";
  int count = 0;
  if (d.cuInit(0) != 0 || d.cuDeviceGetCount(&count) != 0 || count == 0) return "no CUDA device";
  if (d.cuDeviceGet(&d.device, 0) != 0 || d.cuDevicePrimaryCtxRetain(&d.context, d.device) != 0)
    return "cannot open CUDA device 0";
  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR
  d.cuDeviceGetAttribute(&d.major, 75, d.device);
  d.cuDeviceGetAttribute(&d.minor, 76, d.device);
  return "";
}

}  // namespace

const Driver* driver(std::string* why) {
  static Driver d{};
  static std::string reason;
  static std::once_flag once;
  std::call_once(once, [] { reason = init(d); });
  if (!reason.empty()) {
    if (why) *why = reason;
    return nullptr;
  }
  d.check(d.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  return &d;
}

}  // namespace uops::cuda
