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

#include <memory>
#include <string>

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

}  // namespace uops
