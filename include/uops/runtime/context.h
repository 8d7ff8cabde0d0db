// Eager mode, GrCUDA style: no build phase. launch() returns at once; each computation's
// dependencies are inferred when it is launched, against the computations still active, by the
// same rule GraphBuilder applies (see builder.h): a read waits for the buffer's last writer, a
// write also for the readers since, and two reads never order each other.
//
// Streams are threads, as in CpuExecutor. A launch goes on the stream of a parent that is the
// last computation of its stream (so that edge is stream order, not a wait); otherwise on the
// stream that became free (ran out of work) earliest; a new stream is made only when none is
// free and fewer than max_streams exist; else on the stream with the least pending work.
//
// A computation stays active until later writes have covered every buffer it accesses or
// sync() retires it; the host's read(b)/write(b) wait only for the computations touching b.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "uops/runtime/cpu_executor.h"
#include "uops/runtime/graph.h"

namespace uops::runtime {

using ComputationId = std::uint64_t;

struct ContextOptions {
  std::size_t max_streams = 2;                                          // at least 1
  std::chrono::microseconds spin = CpuExecutorOptions::default_spin();  // see CpuExecutorOptions
};

// What launch() decided: the stream, and the earlier computations it waits for (ascending).
struct Launched {
  ComputationId id;
  StreamIndex stream;
  std::vector<ComputationId> dependencies;
};

class Context {
 public:
  explicit Context(ContextOptions options = {});
  // Waits for every launched computation; an error no sync() reported is dropped.
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Enqueues the kernel and returns without waiting for it. Throws Error if it has no kernel.
  // After a kernel throws, later computations are skipped until sync() reports the error.
  Launched launch(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
                  std::vector<BufferId> writes);

  // Block until the host may read (write) buffer b: its last writer has finished (and, for
  // write, every reader since). Other work keeps running. Rethrow the first kernel error.
  void read(BufferId b);
  void write(BufferId b);

  // Waits for everything launched, retires it, and rethrows the first kernel error if any.
  void sync();

  // Active computations (see above), ascending.
  std::vector<ComputationId> active() const;
  std::size_t stream_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::runtime
