// The CUDA backend (docs/design.md §3.7): one __global__ kernel per block. A block's outer loops
// whose iterations are independent (or collide only in accumulations, which become atomics) map to
// the grid through a flattened grid-stride loop; the rest run per thread. A block that reduces
// into the scalars of its last grid loop gets one thread block per grid element, whose threads
// split the reduced loops and combine their partial results in shared memory.
//
// Kernel arguments: the tensors it touches, the axis sizes and parameters it reads (int64_t),
// then `int *error` (the bits of uops/backends/c/c_backend.h). NVRTC compiles the source to PTX
// for the device's architecture (compute_80 when there is no device); the PTX goes into the
// kernel cache. The driver API is loaded with dlopen("libcuda.so.1") at run time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uops/backends/executable.h"

namespace uops {

std::string emit_cuda(const Program& p);

// PTX for `p` (through the kernel cache); `arch` like "compute_80", empty: the device's, or
// compute_80 without one. Throws uops::Error with NVRTC's log on failure, or when this build
// has no NVRTC. `log` receives NVRTC's log (warnings) when given.
std::string compile_cuda_ptx(const Program& p, const std::string& arch = "",
                             std::string* log = nullptr);

// Throws uops::Error when NVRTC or a CUDA device is not available, saying which.
std::unique_ptr<Executable> compile_cuda(Program p);

// Why the CUDA backend cannot run here, or empty when it can.
std::string cuda_unavailable_reason();

// A tensor in device memory the caller owns: its address (a CUdeviceptr), dtype and shape.
struct DeviceTensor {
  unsigned long long address = 0;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};
using DeviceTensorMap = std::map<std::string, DeviceTensor>;

// Runs an executable from compile_cuda on caller-owned device memory, with no host copy.
// `tensors` names every input and every output of the program: inputs are read (bound and
// checked as run() binds host tensors, so the same errors), outputs are overwritten and must have
// the dtype and shape the binding gives them; none may alias another. Temporaries and the error
// word are allocated on the device for the call. The work is enqueued on `stream` (a CUstream;
// null: the default stream) and waited for, so a kernel's error is the uops::Error run() raises
// (the outputs' contents are then unspecified). Throws uops::Error when `executable` does not
// run on a CUDA device.
void run_on_device(const Executable& executable, const DeviceTensorMap& tensors,
                   const ParamMap& params = {}, void* stream = nullptr);

}  // namespace uops
