// Runs a Graph's schedule on the CPU: one thread per stream, kept across runs and re-plans so a run
// costs a wake-up per stream rather than a thread start. The calling thread serves as stream 0, and
// runs the nodes of any stream whose worker has not woken up by the time the caller needs
// that stream's work, one node at a time until the worker comes, so a late wake-up never makes
// a run slower than the caller alone would be, and a worker that wakes late still takes the
// rest of its stream (with a device schedule, only device 0's streams: see devices.h).
//
// Unless some node declares a cost, the executor times every node on its first runs and then
// re-plans the schedule from those times and from the measured cost of a hand-off and of a
// wake-up on this machine: nodes cheaper than a hand-off stay on their predecessor's stream,
// and a graph whose parallel branches are all cheaper than a wake-up runs on one stream. When
// that plan still uses several streams, the next runs try it and the same graph on one stream
// (three runs each, in turns, so that a slow spell weighs on both) and keep the faster, since a
// hand-off in a real run costs more than the measured one (the data's cache lines move too).
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
  // the environment's UOPS_SPIN_US, else what a wake-up was measured to cost on this machine,
  // bounded to 20 .. 1,000 microseconds: polling no longer than a wake-up costs wastes at most
  // as much as it can save. Between runs each worker thus burns at most `spin` of CPU.
  std::chrono::microseconds spin = default_spin();
  // Runs timed node by node before the executor re-plans (see above); the re-plan takes each
  // node's fastest time. 0 keeps the graph's schedule. A graph in which some node declares a
  // cost is never re-planned (declared costs win), nor is a device schedule.
  unsigned measured_runs = 1;
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
  // the executor can run again afterwards (a run that failed is not a measurement). Concurrent
  // calls are serialized. When `trace` is given it is filled with one event per node that ran,
  // on the schedule that ran.
  void run(Trace* trace = nullptr);

  // Times the next runs again (options.measured_runs, at least one) and re-plans after them,
  // for instance once the kernels' inputs changed size, or the machine's load did (the trial
  // against one stream is decided by real runs). The hand-off and wake-up costs stay those
  // measured once per process. Does nothing for a graph with declared costs.
  void remeasure();

  // The graph with the schedule the next run follows: after the re-plan, the measured cost of
  // every node and the hand-off and wake-up costs weighed show in it (and in to_dot). Not to be
  // called during run().
  const Graph& graph() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::runtime
