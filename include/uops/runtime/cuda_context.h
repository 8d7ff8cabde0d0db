// Eager mode on a CUDA device: Context's contract (context.h) with driver streams instead of
// threads. launch() enqueues the kernel on a stream chosen by the same rules (shared with the
// CPU Context), after making that stream wait on the events of its parents on other streams,
// and records an event behind it; nothing blocks the host. read(b)/write(b) synchronize only
// the events of the computations touching b. A stream counts as free once its last event has
// completed, which launch() checks (event queries) before choosing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uops/runtime/context.h"
#include "uops/runtime/graph.h"

namespace uops::runtime {

struct CudaContextOptions {
  int device = 0;
  std::size_t max_streams = 2;  // at least 1
};

class CudaContext {
 public:
  // Throws Error if the driver or device is unavailable (CudaExecutor::available() says
  // beforehand). Makes the device's primary context current on the calling thread.
  explicit CudaContext(CudaContextOptions options = {});
  // Waits for the device to finish everything launched; errors are dropped.
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  // Enqueues the kernel and returns. Throws Error if it has no kernel. A kernel that throws
  // while enqueueing is recorded; later launches are skipped until sync() rethrows it.
  Launched launch(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                  std::vector<BufferId> writes);

  void read(BufferId b);  // also rethrows the first kernel error, like Context
  void write(BufferId b);
  void sync();

  std::vector<ComputationId> active() const;
  std::size_t stream_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::runtime
