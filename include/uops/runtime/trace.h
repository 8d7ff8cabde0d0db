// What a run did and when, for Chrome's trace viewer (chrome://tracing, Perfetto), and the
// schedule as Graphviz DOT for reading how nodes were placed on streams.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

struct TraceEvent {
  std::string name;
  NodeIndex node;
  StreamIndex stream;
  double start_us;  // since the start of the run
  double duration_us;
};

// Nodes skipped because an earlier kernel failed have no event.
struct Trace {
  std::size_t stream_count = 0;
  std::vector<TraceEvent> events;
  // What the schedule that ran weighed a signal and a stream's wake-up at (Schedule::handoff_ns
  // and wakeup_ns): after the CPU executor's re-plan, the costs it measured; 0 without costs.
  double handoff_ns = 0;
  double wakeup_ns = 0;
};

// Each node's measured run time in nanoseconds, for Graph::rescheduled; nodes without an event
// count as 0.
std::vector<double> durations_ns(const Trace& trace, std::size_t node_count);

// {"traceEvents": [...], "otherData": {...}} with one complete ("X") event per node, one row
// (tid) per stream, and the hand-off and wake-up costs the schedule was planned with.
std::string to_chrome_json(const Trace& trace);
void write_chrome_json(const Trace& trace, const std::string& path);

// One cluster per stream; edges within a stream solid, edges that became signals dashed,
// cross-stream edges already implied by an earlier signal dotted. A node with a cost (declared,
// or measured by the CPU executor) shows it after its name, and the graph's label tells the
// hand-off and wake-up costs the schedule weighed.
std::string to_dot(const Graph& graph);
void write_dot(const Graph& graph, const std::string& path);

}  // namespace uops::runtime
