// The glue's CUDA sibling (see runtime_nodes.h): a chain of programs whose kernels become nodes
// of the scheduled runtime, on device buffers bound by name.
//
// Steps bind their tensors to buffers exactly as for ChainNodes, with the same checks and errors
// before anything runs. Every buffer lives in device memory: the chain's inputs are copied in
// once, at construction, and the host sees a buffer only through read() and write(). Each kernel
// (one per block) becomes a node whose reads and writes are the buffers its block loads and
// stores; each step's first node zero-fills the buffers the kernel plan marks
// (backends/codegen/kernel_plan.h), no others. A kernel's error bits (division by zero, an index
// out of range) go to a word per step, which read() checks.
//
// Nodes carry both kinds of kernel. On the CudaExecutor they enqueue on their stream (and with
// CudaOptions::use_cuda_graph, the whole chain is captured once and replayed). On the
// CpuExecutor they run on the device's default stream and wait for it: that is how the tests run
// a chain through the CPU emulation of a device (tests/support/cuda_emulation.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/runtime_nodes.h"

namespace uops {

namespace cuda {
class Device;  // backends/cuda/cuda_device.h
}

class CudaChainNodes {
 public:
  // On the CUDA driver's device, kernels compiled by NVRTC; a uops::Error says why when this
  // build or machine cannot (see cuda_unavailable_reason).
  CudaChainNodes(std::vector<ChainStep> steps, TensorMap inputs);
  // On another implementation of the device (the tests' emulation).
  CudaChainNodes(std::vector<ChainStep> steps, TensorMap inputs,
                 std::shared_ptr<cuda::Device> device);

  // Adds every step's nodes to `builder`, in step order.
  void add_to(runtime::GraphBuilder& builder) const;

  // Copies a buffer to the host, after all work on the device (never while a graph built from
  // these nodes is running). Throws the first step's kernel error of the last run, if any.
  Tensor read(const std::string& buffer) const;
  // Overwrites a buffer from the host; `value` must have its dtype and shape.
  void write(const std::string& buffer, const Tensor& value);
  // A buffer's device memory, for run_on_device or the caller's own kernels.
  DeviceTensor device_tensor(const std::string& buffer) const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace uops
