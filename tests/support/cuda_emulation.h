// uops's own CUDA kernels on the CPU, for tests on machines without a GPU: the CUDA backend's
// host side (launch plans, argument packing, zero fills, the error word) runs unchanged against a
// device whose kernels run on the product's emulation (backends/cuda_emulation/emulator.h: every
// global and shared access checked, fibers at barriers, buffers the plan does not zero filled
// with 0xff bytes, shared memory refilled for every block). A fault is a uops::Error starting
// "CUDA emulation: ".
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_device.h"
#include "uops/backends/executable.h"

namespace uops::testing {

// Edits a program's generated CUDA source before it compiles (planted faults); identity if null.
using SourceEdit = std::function<std::string(const std::string&)>;

// The emulation behind the CUDA host side's seam (backends/cuda/cuda_device.h): what the CUDA
// backend's executables and the runtime glue (uops/backends/cuda_runtime_nodes.h) run on where
// there is no GPU. Memory is host memory; every call has finished when it returns (streams are
// ignored), and calls from several threads run one at a time. A kernel's fault is a uops::Error
// from launch.
//
// `max_grid` > 0 launches at most that many blocks, whatever the launch asks: a grid-stride loop
// is correct for any grid, and with few blocks each one takes several rows, as on a device when
// rows outnumber LaunchPlan::max_grid (a cooperative block then reuses its shared buffer). Only
// for kernels launched from a program's plan: a wavefront kernel dispatches on its block index.
std::shared_ptr<cuda::Device> emulated_cuda_device(const SourceEdit& edit = nullptr,
                                                   unsigned max_grid = 0);

// Many programs in one compiler call, on a device of their own; the executables report backend()
// "cuda-emulation" and take uops::run_on_device (on that device's memory).
std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(std::vector<Program> programs,
                                                            const SourceEdit& edit = nullptr,
                                                            unsigned max_grid = 0);
std::unique_ptr<Executable> emulate_cuda(Program p, const SourceEdit& edit = nullptr,
                                         unsigned max_grid = 0);
// The same on a given device (one from emulated_cuda_device, whose memory the test allocates).
std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(
    const std::shared_ptr<cuda::Device>& device, std::vector<Program> programs);

}  // namespace uops::testing
