// Chrome-trace JSON parses back with the expected structure; DOT output names every node.
#include "uops/runtime/trace.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/cpu_executor.h"

namespace uops::runtime {
namespace {

// Just enough JSON to check the trace: objects, arrays, strings (with escapes), numbers.
// Parsing fails the test (via `ok`) on anything malformed.
struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  double number = 0;
  std::string text;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool parse(Json& out) {
    bool ok = value(out);
    skip();
    return ok && i_ == s_.size();
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool string(std::string& out) {
    if (!eat('"')) return false;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        if (e == 'u') {
          if (i_ + 4 > s_.size()) return false;
          c = static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
        } else if (e == '"' || e == '\\' || e == '/') {
          c = e;
        } else {
          return false;
        }
      }
      out += c;
    }
    return eat('"');
  }
  bool value(Json& out) {
    skip();
    if (i_ >= s_.size()) return false;
    if (s_[i_] == '{') {
      out.kind = Json::kObject;
      ++i_;
      if (eat('}')) return true;
      do {
        std::string key;
        if (!string(key) || !eat(':') || !value(out.fields[key])) return false;
      } while (eat(','));
      return eat('}');
    }
    if (s_[i_] == '[') {
      out.kind = Json::kArray;
      ++i_;
      if (eat(']')) return true;
      do {
        out.items.emplace_back();
        if (!value(out.items.back())) return false;
      } while (eat(','));
      return eat(']');
    }
    if (s_[i_] == '"') {
      out.kind = Json::kString;
      return string(out.text);
    }
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    out.number = std::strtod(begin, &end);
    if (end == begin) return false;
    out.kind = Json::kNumber;
    i_ += static_cast<std::size_t>(end - begin);
    return true;
  }

  const std::string& s_;
  std::size_t i_ = 0;
};

Graph fork_join_graph() {
  GraphBuilder b;
  b.add("load \"input\"", [] {}, {}, {1});
  b.add("left\\branch", [] {}, {1}, {2});
  b.add("right", [] {}, {1}, {3});
  b.add("join", [] {}, {2, 3}, {4});
  return std::move(b).build(BuildOptions{.max_streams = 2});
}

TEST(Trace, ChromeJsonParsesBack) {
  Graph graph = fork_join_graph();
  CpuExecutor executor(graph);
  Trace trace;
  executor.run(&trace);
  Json root;
  ASSERT_TRUE(Parser(to_chrome_json(trace)).parse(root));
  ASSERT_EQ(root.kind, Json::kObject);
  const Json& events = root.fields["traceEvents"];
  ASSERT_EQ(events.kind, Json::kArray);

  std::map<std::string, const Json*> complete;
  int thread_names = 0;
  for (const Json& e : events.items) {
    ASSERT_EQ(e.kind, Json::kObject);
    const std::string& ph = e.fields.at("ph").text;
    if (ph == "M") {
      EXPECT_EQ(e.fields.at("name").text, "thread_name");
      ++thread_names;
      continue;
    }
    ASSERT_EQ(ph, "X");
    for (const char* key : {"ts", "dur", "tid", "pid"}) {
      ASSERT_EQ(e.fields.count(key), 1u) << key;
      EXPECT_EQ(e.fields.at(key).kind, Json::kNumber) << key;
    }
    EXPECT_GE(e.fields.at("dur").number, 0.0);
    EXPECT_LT(e.fields.at("tid").number, graph.schedule().streams.size());
    complete[e.fields.at("name").text] = &e;
  }
  EXPECT_EQ(thread_names, 2);
  ASSERT_EQ(complete.size(), 4u);
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    ASSERT_EQ(complete.count(graph.node(n).name), 1u) << graph.node(n).name;
    EXPECT_EQ(complete[graph.node(n).name]->fields.at("tid").number, graph.schedule().stream_of[n]);
  }
  const Json& first = *complete["load \"input\""];
  const Json& last = *complete["join"];
  EXPECT_GE(last.fields.at("ts").number,
            first.fields.at("ts").number + first.fields.at("dur").number - 0.002);
}

TEST(Trace, ChromeJsonFileMatchesString) {
  CpuExecutor executor(fork_join_graph());
  Trace trace;
  executor.run(&trace);
  const std::string path = ::testing::TempDir() + "uops_runtime_trace.json";
  write_chrome_json(trace, path);
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  EXPECT_EQ(contents.str(), to_chrome_json(trace));
}

TEST(Trace, DotHasEveryNodeAndDashedSignals) {
  Graph graph = fork_join_graph();
  const std::string dot = to_dot(graph);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    std::string declaration = "n";
    declaration += std::to_string(n);
    EXPECT_NE(dot.find(declaration + " [label="), std::string::npos) << n;
  }
  EXPECT_NE(dot.find(R"(label="load \"input\"")"), std::string::npos);
  EXPECT_NE(dot.find(R"(label="left\\branch")"), std::string::npos);
  for (StreamIndex s = 0; s < graph.schedule().streams.size(); ++s) {
    EXPECT_NE(dot.find("cluster_stream" + std::to_string(s)), std::string::npos);
  }
  std::size_t dashed = 0;
  for (std::size_t at = 0; (at = dot.find("style=dashed", at)) != std::string::npos; ++at) ++dashed;
  EXPECT_EQ(dashed, graph.schedule().signals.size());
  EXPECT_EQ(graph.schedule().signals.size(), 2u);
}

// After the executor's measured re-plan, the trace and the DOT output carry what it weighed:
// each node's measured cost and the hand-off and wake-up costs of this machine.
TEST(Trace, MeasuredPlanShowsInTraceAndDot) {
  CpuExecutor executor(fork_join_graph());
  executor.run();
  Trace trace;
  executor.run(&trace);
  EXPECT_GT(trace.handoff_ns, 0.0);
  EXPECT_GT(trace.wakeup_ns, 0.0);
  Json root;
  ASSERT_TRUE(Parser(to_chrome_json(trace)).parse(root));
  const Json& other = root.fields["otherData"];
  ASSERT_EQ(other.kind, Json::kObject);
  EXPECT_NEAR(other.fields.at("handoff_ns").number, trace.handoff_ns, 0.001);
  EXPECT_NEAR(other.fields.at("wakeup_ns").number, trace.wakeup_ns, 0.001);

  const Graph& graph = executor.graph();
  const std::string dot = to_dot(graph);
  EXPECT_NE(dot.find("label=\"planned with a signal at "), std::string::npos) << dot;
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    ASSERT_TRUE(graph.node(n).cost_ns.has_value()) << n;
    char cost[32];
    std::snprintf(cost, sizeof cost, " (%.0f ns)\"", *graph.node(n).cost_ns);
    EXPECT_NE(dot.find(cost), std::string::npos) << cost;
  }
}

}  // namespace
}  // namespace uops::runtime
