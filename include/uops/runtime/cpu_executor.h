// Runs a Graph's schedule on the CPU: one thread per stream, kept across runs so a run costs a
// wake-up per stream rather than a thread start. The calling thread serves as stream 0.
#pragma once

#include <chrono>
#include <memory>

#include "uops/runtime/graph.h"
#include "uops/runtime/trace.h"

namespace uops::runtime {

struct CpuExecutorOptions {
  // How long a thread that has run out of work (a worker between runs, a stream waiting on a
  // signal, the caller waiting for the other streams) keeps polling before it sleeps on a
  // futex. Polling hands work over in well under a microsecond, where waking a sleeping thread
  // takes tens to hundreds; it keeps the core busy meanwhile (yielding it to other runnable
  // threads). Zero is the passive setting for shared machines: sleep at once. The default is
  // 200 microseconds, or the environment's UOPS_SPIN_US.
  std::chrono::microseconds spin = default_spin();
  static std::chrono::microseconds default_spin();
};

class CpuExecutor {
 public:
  // Throws Error if some node has no CPU kernel.
  explicit CpuExecutor(Graph graph, CpuExecutorOptions options = {});
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  // Runs every node once, respecting all dependencies. If a kernel throws, nodes not yet
  // started are skipped, and the first exception is rethrown once every stream has stopped;
  // the executor can run again afterwards. Concurrent calls are serialized. When `trace` is
  // given it is filled with one event per node that ran.
  void run(Trace* trace = nullptr);

  const Graph& graph() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::runtime
