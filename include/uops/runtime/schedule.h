// The static multi-stream schedule of a DAG, computed once when a graph is built.
//
// Each node is placed on one stream; a stream runs its nodes in order. An edge between nodes
// on different streams becomes a Signal: the waiting stream blocks until the producer has
// finished. Signals are deduplicated per (producer, waiting stream), and a wait is dropped
// when an earlier wait of the same stream already implies it (tracked with vector clocks),
// so executors do the minimum of cross-stream synchronization.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace uops::runtime {

using NodeIndex = std::uint32_t;
using StreamIndex = std::uint32_t;
using DeviceIndex = std::uint32_t;

// Stream `stream` waits until `producer` (on another stream) has finished, before running
// `consumer`.
struct Signal {
  NodeIndex producer;
  NodeIndex consumer;
  StreamIndex stream;
};

struct Schedule {
  // streams[s] lists the nodes stream s runs, in order.
  std::vector<std::vector<NodeIndex>> streams;
  std::vector<StreamIndex> stream_of;  // per node
  std::vector<std::uint32_t> rank;     // per node: 1 + max rank of its successors
  // A topological order that also respects every stream's order; an executor that enqueues
  // work from one thread (CUDA) must follow it so every signal is recorded before it is waited on.
  std::vector<NodeIndex> order;
  std::vector<Signal> signals;
  // waits[n]: indices into `signals` that node n's stream waits on right before running n.
  std::vector<std::vector<std::uint32_t>> waits;
  // signaled[n]: some other stream waits on n, so the executor must publish n's completion.
  std::vector<bool> signaled;
  // What a signal and the wake-up of a stream were weighed at, in nanoseconds; 0 when the
  // schedule was made without costs.
  double handoff_ns = 0;
  double wakeup_ns = 0;
  // Non-zero for make_device_schedule's: streams belong to devices in groups of this many, and
  // an executor runs no stream on another device's thread and never re-plans.
  std::size_t streams_per_device = 0;
};

// Schedules the DAG given by its successor lists onto at most `max_streams` streams (at least
// one). Edges implied by other paths change nothing: the schedule is that of the transitive
// reduction.
//
// Without costs it uses as many streams as the graph's parallelism allows. With `cost_ns` (one
// estimate per node, e.g. nanoseconds) it simulates the placements on 1 .. max_streams streams,
// charging `handoff_ns` per signal and per woken stream, and keeps the fewest streams with the
// smallest estimated makespan: cheap kernels with fine-grained cross edges stay on one stream
// instead of handing off at every node.
//
// Ties between streams equally good for a node (two streams ending with one of its
// predecessors, or two free streams) go to a stream that already ran a node of the same
// `command` (one id per node; equal ids are the same kernel), as in NNC, where kernels of one
// command share workspace and context; then to the lowest index.
// Throws Error if the graph has a cycle or `cost_ns` or `command` has the wrong size.
Schedule make_schedule(const std::vector<std::vector<NodeIndex>>& successors,
                       std::size_t max_streams, std::span<const double> cost_ns = {},
                       double handoff_ns = 0, std::span<const std::uint32_t> command = {});

// The same placement with every node bound to a device: device d owns streams
// d * streams_per_device .. (d + 1) * streams_per_device - 1, and a node goes only on its own
// device's streams. All those streams exist, some possibly empty. Throws Error on zero devices
// or streams, a device index out of range, a size mismatch or a cycle.
Schedule make_device_schedule(const std::vector<std::vector<NodeIndex>>& successors,
                              std::span<const DeviceIndex> device_of, std::size_t devices,
                              std::size_t streams_per_device,
                              std::span<const std::uint32_t> command = {});

}  // namespace uops::runtime
