#include "backends/cuda/cuda_context.h"

#include <mutex>

#include "uops/error.h"

namespace uops::cuda {

void Driver::check(CUresult r, const char* what) const {
  if (std::string failed = runtime::cuda::failure(*this, r, what); !failed.empty())
    throw Error("CUDA driver: " + failed);
}

namespace {

std::string open_device(Driver& d) {
  std::string why;
  const runtime::cuda::Driver* loaded = runtime::cuda::load_driver(&why);
  if (!loaded) return "no CUDA driver (" + why + ")";
  static_cast<runtime::cuda::Driver&>(d) = *loaded;
  int count = 0;
  if (d.cuDeviceGetCount(&count) != 0 || count == 0) return "no CUDA device";
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
  std::call_once(once, [] { reason = open_device(d); });
  if (!reason.empty()) {
    if (why) *why = reason;
    return nullptr;
  }
  d.check(d.cuCtxSetCurrent(d.context), "cuCtxSetCurrent");
  return &d;
}

}  // namespace uops::cuda
