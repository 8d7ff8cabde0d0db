#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include "uops/runtime/error.h"

namespace uops::runtime::cuda {
namespace {

struct Loaded {
  Driver driver{};
  std::string error;
};

template <typename F>
bool resolve(void* library, const char* symbol, F& function, std::string& error) {
  function = reinterpret_cast<F>(dlsym(library, symbol));
  if (!function) error = std::string("libcuda.so.1 has no symbol ") + symbol;
  return function != nullptr;
}

Loaded load() {
  Loaded loaded;
  // Never closed: the driver does not support being unloaded while the process runs.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    // The common case in short (no driver installed); anything else with the loader's words.
    const char* text = dlerror();
    std::string reason = text ? text : "unknown";
    loaded.error = reason.find("No such file") != std::string::npos
                       ? "libcuda.so.1 not found"
                       : "cannot load libcuda.so.1: " + reason;
    return loaded;
  }
  Driver& d = loaded.driver;
  std::string& e = loaded.error;
  const bool ok =
      resolve(library, "cuInit", d.cuInit, e) &&
      resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, e) &&
      resolve(library, "cuDeviceGet", d.cuDeviceGet, e) &&
      resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, e) &&
      resolve(library, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease, e) &&
      resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, e) &&
      resolve(library, "cuStreamCreate", d.cuStreamCreate, e) &&
      resolve(library, "cuStreamDestroy_v2", d.cuStreamDestroy, e) &&
      resolve(library, "cuStreamSynchronize", d.cuStreamSynchronize, e) &&
      resolve(library, "cuStreamWaitEvent", d.cuStreamWaitEvent, e) &&
      resolve(library, "cuEventCreate", d.cuEventCreate, e) &&
      resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, e) &&
      resolve(library, "cuEventRecord", d.cuEventRecord, e) &&
      resolve(library, "cuEventQuery", d.cuEventQuery, e) &&
      resolve(library, "cuEventSynchronize", d.cuEventSynchronize, e) &&
      resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, e) &&
      resolve(library, "cuStreamBeginCapture_v2", d.cuStreamBeginCapture, e) &&
      resolve(library, "cuStreamEndCapture", d.cuStreamEndCapture, e) &&
      resolve(library, "cuGraphInstantiateWithFlags", d.cuGraphInstantiate, e) &&
      resolve(library, "cuGraphLaunch", d.cuGraphLaunch, e) &&
      resolve(library, "cuGraphExecDestroy", d.cuGraphExecDestroy, e) &&
      resolve(library, "cuGraphDestroy", d.cuGraphDestroy, e) &&
      resolve(library, "cuGetErrorName", d.cuGetErrorName, e) &&
      resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, e) &&
      resolve(library, "cuCtxSynchronize", d.cuCtxSynchronize, e) &&
      resolve(library, "cuModuleLoadData", d.cuModuleLoadData, e) &&
      resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, e) &&
      resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, e) &&
      resolve(library, "cuMemFree_v2", d.cuMemFree, e) &&
      resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, e) &&
      resolve(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, e) &&
      resolve(library, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync, e) &&
      resolve(library, "cuMemsetD8Async", d.cuMemsetD8Async, e) &&
      resolve(library, "cuLaunchKernel", d.cuLaunchKernel, e);
  if (!ok) return loaded;
  if (CUresult result = d.cuInit(0); result != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(result, &name);
    e = std::string("cuInit failed: ") + (name ? name : std::to_string(result));
  }
  return loaded;
}

}  // namespace

const Driver* load_driver(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) {
    if (why) *why = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

std::string failure(const Driver& driver, CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return "";
  const char* name = nullptr;
  driver.cuGetErrorName(result, &name);
  return std::string(call) + " failed: " + (name ? name : std::to_string(result));
}

void check(const Driver& driver, CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) throw Error(failure(driver, result, call));
}

}  // namespace uops::runtime::cuda
