// Where CUDA kernels run, as the host sees it: the CUDA driver's device, or the CPU emulation of
// the tests (tests/support/cuda_emulation.h). The CUDA backend's executables and the runtime glue
// (uops/backends/cuda_runtime_nodes.h) do all their host work through this interface, and
// launch_program takes every launch fact from the kernel plan (backends/codegen/kernel_plan.h),
// so the real device and the emulation run the same host code.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/codegen/kernel_plan.h"
#include "uops/ir/binding.h"

namespace uops {
struct CudaWavefronts;
}

namespace uops::cuda {

using namespace ir;

using codegen::DeviceAddress;
using Stream = void*;  // a CUstream; null: the default stream

// A program's kernels as one device loaded them: its launch plan (arguments filled) and per
// kernel of the plan the device's handle.
struct LoadedProgram {
  codegen::LaunchPlan plan;
  std::vector<const void*> kernels;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string backend() const = 0;  // what an Executable on it reports

  // Compiles and loads the programs' kernels.
  virtual std::vector<LoadedProgram> load(const std::vector<Program>& programs) = 0;
  // Compiles CUDA source and gives the handles of its `extern "C"` kernels of these names.
  virtual std::vector<const void*> load_source(const std::string& source,
                                               const std::vector<std::string>& kernels) = 0;

  // Uninitialized memory (at least one byte); `name` and `element` (its element's size)
  // label the emulation's reports.
  virtual DeviceAddress allocate(size_t bytes, const std::string& name, size_t element) = 0;
  virtual void release(DeviceAddress address) noexcept = 0;

  // Copies between host and device wait for all work on the device.
  virtual void copy_to_device(DeviceAddress to, const void* from, size_t bytes) = 0;
  virtual void copy_to_host(void* to, DeviceAddress from, size_t bytes) = 0;

  // Enqueued on `stream`.
  virtual void copy(DeviceAddress to, DeviceAddress from, size_t bytes, Stream stream) = 0;
  virtual void zero(DeviceAddress address, size_t bytes, Stream stream) = 0;
  // `args` as codegen::pack_args gives them, `dims` as codegen::launch_dims. Only the plan's
  // name, cooperative and argument count are read.
  virtual void launch(const codegen::KernelPlan& plan, const void* kernel, codegen::LaunchDims dims,
                      void** args, Stream stream) = 0;
  virtual void synchronize(Stream stream) = 0;

  // A user's kernel from its own source (docs/cuda-kernels.md): `entry` is the C++ name of a
  // __global__ function or of a template's instance. Only the driver's device has them.
  virtual const void* load_entry(const std::string& source, const std::string& file,
                                 const std::string& entry);
  // `args`: one pointer per kernel parameter to a value of its type (cuLaunchKernel's).
  virtual void launch_entry(const void* kernel, const unsigned grid[3], const unsigned block[3],
                            unsigned shared_bytes, void** args, Stream stream);
};

// The driver's current device with kernels compiled by NVRTC, or null with `why` set when this
// build has no NVRTC or the machine no driver or device. One per process.
std::shared_ptr<Device> driver_device(std::string* why);

// PTX of CUDA source through NVRTC and the kernel cache (compile_cuda_ptx's path); `arch`
// empty: the device's.
std::string compile_ptx(const std::string& source, const std::string& arch, std::string* log);
// PTX of a user's source and the lowered (mangled) name of `entry` in it, through NVRTC and the
// kernel cache; `file` names the source in NVRTC's messages.
std::string compile_entry_ptx(const std::string& source, const std::string& file,
                              const std::string& entry, std::string* lowered);

// One launch of a program's kernel, everything from the plan: packed arguments, grid and block.
void launch_kernel(Device& device, const LoadedProgram& program, size_t kernel, const Binding& b,
                   const std::vector<DeviceAddress>& buffers, DeviceAddress error_word,
                   Stream stream);

// The bytes of program tensor t under binding b.
size_t tensor_bytes(const Program& p, const Binding& b, int t);

// Enqueues the zero-fill the plan asks for, then every kernel in order: buffers[t] holds program
// tensor t (inputs already there) and `error_word` an int that starts at zero.
void launch_program(Device& device, const Program& p, const LoadedProgram& program,
                    const Binding& b, const std::vector<DeviceAddress>& buffers,
                    DeviceAddress error_word, Stream stream);

// Runs a chain's wavefront kernels (uops/backends/wavefront.h) in order: every buffer they name
// is copied from its tensor before the first launch and back after the last; error bits throw
// the kernel's error.
void run_wavefronts(Device& device, const CudaWavefronts& kernels);

}  // namespace uops::cuda
