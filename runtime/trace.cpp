#include "uops/runtime/trace.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

// Node names are user text; JSON and DOT strings both need quotes, backslashes and control
// characters escaped.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", c);
      out += escape;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  if (!file.flush()) throw Error("cannot write '" + path + "'");
}

std::string nanoseconds(double ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f ns", ns);
  return text;
}

std::string planned_with(const Schedule& schedule) {
  return "planned with a signal at " + nanoseconds(schedule.handoff_ns) + " and a wake-up at " +
         nanoseconds(schedule.wakeup_ns);
}

// Colors cycle for schedules with more streams than entries; the cluster label still tells.
constexpr const char* kStreamColors[] = {"lightblue", "palegreen", "lightsalmon", "khaki",
                                         "plum",      "lightcyan", "pink",        "wheat"};

}  // namespace

std::vector<double> durations_ns(const Trace& trace, std::size_t node_count) {
  std::vector<double> result(node_count, 0);
  for (const TraceEvent& event : trace.events) {
    if (event.node < node_count) result[event.node] = event.duration_us * 1000;
  }
  return result;
}

std::string to_chrome_json(const Trace& trace) {
  std::ostringstream out;
  out.precision(3);
  out << std::fixed << "{\"traceEvents\":[";
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",";
    first = false;
    out << "\n";
  };
  for (std::size_t s = 0; s < trace.stream_count; ++s) {
    separator();
    out << R"({"name":"thread_name","ph":"M","pid":0,"tid":)" << s << R"(,"args":{"name":"stream )"
        << s << "\"}}";
  }
  for (const TraceEvent& e : trace.events) {
    separator();
    out << "{\"name\":" << quoted(e.name) << R"(,"ph":"X","pid":0,"tid":)" << e.stream
        << ",\"ts\":" << e.start_us << ",\"dur\":" << e.duration_us
        << ",\"args\":{\"node\":" << e.node << "}}";
  }
  out << "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{\"handoff_ns\":" << trace.handoff_ns
      << ",\"wakeup_ns\":" << trace.wakeup_ns << "}}\n";
  return out.str();
}

void write_chrome_json(const Trace& trace, const std::string& path) {
  write_file(path, to_chrome_json(trace));
}

std::string to_dot(const Graph& graph) {
  const Schedule& schedule = graph.schedule();
  std::ostringstream out;
  out << "digraph schedule {\n  rankdir=TB;\n  node [shape=box, style=filled];\n";
  if (schedule.handoff_ns != 0 || schedule.wakeup_ns != 0) {
    out << "  label=" << quoted(planned_with(schedule)) << ";\n";
  }
  for (StreamIndex s = 0; s < schedule.streams.size(); ++s) {
    const char* color = kStreamColors[s % std::size(kStreamColors)];
    out << "  subgraph cluster_stream" << s << " {\n    label=\"stream " << s << "\";\n";
    for (NodeIndex n : schedule.streams[s]) {
      std::string label = graph.node(n).name;
      if (const auto& cost = graph.node(n).cost_ns) label += " (" + nanoseconds(*cost) + ")";
      out << "    n" << n << " [label=" << quoted(label) << ", fillcolor=" << color << "];\n";
    }
    out << "  }\n";
  }
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    for (NodeIndex s : graph.successors(n)) {
      const char* style = "solid";
      if (schedule.stream_of[n] != schedule.stream_of[s]) {
        style = "dotted";
        for (std::uint32_t w : schedule.waits[s]) {
          if (schedule.signals[w].producer == n) style = "dashed";
        }
      }
      out << "  n" << n << " -> n" << s << " [style=" << style << "];\n";
    }
  }
  out << "}\n";
  return out.str();
}

void write_dot(const Graph& graph, const std::string& path) {
  write_file(path, to_dot(graph));
}

}  // namespace uops::runtime
