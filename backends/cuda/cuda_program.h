// A program compiled for a CUDA device (backends/cuda/cuda_device.h): what compile_cuda returns on
// the driver's device and the tests' emulation returns on the CPU. run() copies inputs in and
// outputs out around launch_program; run_on_device works on the caller's device memory.
#pragma once

#include <memory>

#include "backends/cuda/cuda_device.h"
#include "uops/backends/cuda/cuda_backend.h"

namespace uops::cuda {

using namespace ir;

class CudaProgram : public Executable {
 public:
  CudaProgram(std::shared_ptr<Device> device, Program p, LoadedProgram loaded);

  TensorMap run(const TensorMap& inputs, const ParamMap& params) const override;
  // See uops::run_on_device (uops/backends/cuda/cuda_backend.h).
  void run_on_device(const DeviceTensorMap& tensors, const ParamMap& params, Stream stream) const;
  std::string backend() const override { return device_->backend(); }
  const Program& program() const override { return p_; }

 private:
  // Enqueues the program on `stream` over `buffers` with a fresh error word, waits, and throws
  // the kernels' error, if any.
  void launch_and_check(const Binding& b, const std::vector<DeviceAddress>& buffers,
                        Stream stream) const;

  std::shared_ptr<Device> device_;
  Program p_;
  LoadedProgram loaded_;
};

}  // namespace uops::cuda
