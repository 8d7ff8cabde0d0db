// The immutable executable graph that GraphBuilder::build() produces: nodes with their
// kernels and declared buffer accesses, the transitively reduced dependency edges (an implied
// edge whose ends lie more than 4,096 nodes apart in topological order may stay; it changes
// nothing in the schedule), and the static schedule. Copies share the same data, so handing a
// Graph to several executors is cheap.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uops/runtime/schedule.h"

namespace uops::runtime {

// Buffers are opaque to the runtime: any integer or address that identifies one. Two accesses
// conflict exactly when their ids are equal, so aliasing views must share an id.
using BufferId = std::uintptr_t;
inline BufferId buffer_id(const void* address) {
  return reinterpret_cast<BufferId>(address);
}

// Matches the driver's CUstream (a pointer to an opaque struct) without needing cuda.h.
using CudaStream = void*;

using CpuKernel = std::function<void()>;
// Enqueues the node's work on the given stream; it must not synchronize the stream.
using CudaKernel = std::function<void(CudaStream)>;

// A node may carry a kernel for either executor or both; an executor rejects a graph in which
// some node lacks its kind of kernel.
struct Node {
  std::string name;
  CpuKernel cpu;
  CudaKernel cuda;
  std::vector<BufferId> reads;
  std::vector<BufferId> writes;
  // Estimated run time in nanoseconds, if known; the schedule weighs it against hand-offs.
  std::optional<double> cost_ns = {};
};

struct BuildOptions {
  // Upper bound on streams; the schedule uses fewer when the graph has less parallelism. On the
  // CPU each stream is a thread, so more streams than cores only adds switching.
  std::size_t max_streams = 4;
  // What a cross-stream hand-off (a signal, or waking a stream's worker) is assumed to cost, in
  // nanoseconds. It is weighed against declared costs only: when no node declares one, the
  // schedule uses all the parallelism it finds. A node without a declared cost next to ones
  // with a cost counts as 10 hand-offs.
  double handoff_ns = 2000;
  // What waking a sleeping stream's worker is assumed to cost, if not handoff_ns. The CPU
  // executor re-plans with both measured on this machine (see CpuExecutorOptions).
  std::optional<double> wakeup_ns = {};
};

class Graph {
 public:
  struct Data {
    std::vector<Node> nodes;
    std::vector<std::vector<NodeIndex>> successors;  // reduced, see above
    std::vector<std::vector<NodeIndex>> predecessors;
    Schedule schedule;
  };

  explicit Graph(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

  std::size_t size() const { return data_->nodes.size(); }
  const Node& node(NodeIndex n) const { return data_->nodes[n]; }
  std::span<const NodeIndex> successors(NodeIndex n) const { return data_->successors[n]; }
  std::span<const NodeIndex> predecessors(NodeIndex n) const { return data_->predecessors[n]; }
  std::size_t edge_count() const;
  const Schedule& schedule() const { return data_->schedule; }
  // The same nodes and edges, scheduled anew for these per-node costs (nanoseconds; for
  // instance measured ones, see durations_ns in trace.h). Throws Error on a size mismatch.
  Graph rescheduled(std::span<const double> cost_ns, const BuildOptions& options = {}) const;

 private:
  std::shared_ptr<const Data> data_;
};

}  // namespace uops::runtime
