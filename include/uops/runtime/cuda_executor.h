// Runs a Graph's schedule on a CUDA device: one driver stream per schedule stream, one event
// per signaled node. The driver is loaded with dlopen("libcuda.so.1") on first use, so this
// builds and links without the CUDA toolkit and fails only at run time without a device.
#pragma once

#include <memory>

#include "uops/runtime/graph.h"
#include "uops/runtime/trace.h"

namespace uops::runtime {

struct CudaOptions {
  int device = 0;
  // Capture the whole schedule once as a CUDA graph on the first run and replay it afterwards:
  // one launch instead of one call per node and signal. Kernels are then called only during
  // capture, so they must enqueue the same work every time.
  bool use_cuda_graph = false;
};

class CudaExecutor {
 public:
  // True when the driver loads, initializes and reports at least one device.
  static bool available();

  // Throws Error if the driver or device is unavailable or some node has no CUDA kernel.
  // Makes the device's primary context current on the calling thread.
  CudaExecutor(Graph graph, CudaOptions options = {});
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  // Enqueues (or replays) the schedule and waits for the device to finish it. A kernel that
  // throws stops enqueueing; the work already enqueued is drained and the exception rethrown.
  // Tracing times each node with events and needs use_cuda_graph == false (Error otherwise).
  void run(Trace* trace = nullptr);

  const Graph& graph() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::runtime
