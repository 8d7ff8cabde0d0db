#include "dependencies.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>

namespace uops::runtime {

Adjacency infer_dependencies(const std::vector<Node>& nodes) {
  struct BufferState {
    std::optional<NodeIndex> last_writer;
    std::vector<NodeIndex> readers_since_write;
  };
  std::unordered_map<BufferId, BufferState> buffers;
  Adjacency successors(nodes.size());
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    const Node& node = nodes[n];
    auto depend_on = [&](NodeIndex earlier) {
      if (earlier != n) successors[earlier].push_back(n);
    };
    for (BufferId b : node.reads) {
      if (auto it = buffers.find(b); it != buffers.end() && it->second.last_writer) {
        depend_on(*it->second.last_writer);
      }
    }
    for (BufferId b : node.writes) {
      BufferState& state = buffers[b];
      if (state.last_writer) depend_on(*state.last_writer);
      for (NodeIndex reader : state.readers_since_write) depend_on(reader);
      state.last_writer = n;
      state.readers_since_write.clear();
    }
    // Registered after the writes so that a node reading and writing one buffer is recorded
    // as its writer only; a later writer depends on it through write-after-write.
    for (BufferId b : node.reads) {
      if (std::find(node.writes.begin(), node.writes.end(), b) == node.writes.end()) {
        buffers[b].readers_since_write.push_back(n);
      }
    }
  }
  for (auto& list : successors) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return successors;
}

TopologicalOrder topological_order(const Adjacency& successors) {
  const std::size_t n = successors.size();
  std::vector<std::uint32_t> indegree(n, 0);
  for (const auto& list : successors) {
    for (NodeIndex s : list) ++indegree[s];
  }
  std::priority_queue<NodeIndex, std::vector<NodeIndex>, std::greater<>> ready;
  for (NodeIndex v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
  TopologicalOrder result;
  result.order.reserve(n);
  while (!ready.empty()) {
    NodeIndex v = ready.top();
    ready.pop();
    result.order.push_back(v);
    for (NodeIndex s : successors[v]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (result.order.size() == n) return result;
  // Every node left has an unfinished predecessor that is also left; walking predecessors
  // backwards from any of them must revisit a node, and that node lies on a cycle.
  Adjacency predecessors = predecessors_of(successors);
  NodeIndex v = 0;
  while (indegree[v] == 0) ++v;
  std::vector<bool> seen(n, false);
  while (!seen[v]) {
    seen[v] = true;
    v = *std::find_if(predecessors[v].begin(), predecessors[v].end(),
                      [&](NodeIndex p) { return indegree[p] != 0; });
  }
  result.on_cycle = v;
  return result;
}

Adjacency transitive_reduction(const Adjacency& successors, const std::vector<NodeIndex>& order) {
  const std::size_t n = successors.size();
  const std::size_t words = (n + 63) / 64;
  std::vector<std::uint32_t> position(n);
  for (std::uint32_t i = 0; i < n; ++i) position[order[i]] = i;
  // reach[v]: nodes reachable from v by a path of one or more edges.
  std::vector<std::uint64_t> reach(n * words, 0);
  auto test = [&](const std::uint64_t* bits, NodeIndex v) {
    return (bits[v / 64] >> (v % 64)) & 1;
  };

  Adjacency reduced(n);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const NodeIndex v = *it;
    std::vector<NodeIndex> targets = successors[v];
    // A successor can only be reached through successors that come earlier in the order, so
    // by visiting them in order every redundant edge is already covered when we reach it.
    std::sort(targets.begin(), targets.end(),
              [&](NodeIndex a, NodeIndex b) { return position[a] < position[b]; });
    std::uint64_t* covered = &reach[v * words];
    for (NodeIndex s : targets) {
      if (test(covered, s)) continue;
      reduced[v].push_back(s);
      covered[s / 64] |= std::uint64_t{1} << (s % 64);
      const std::uint64_t* from_s = &reach[s * words];
      for (std::size_t w = 0; w < words; ++w) covered[w] |= from_s[w];
    }
  }
  return reduced;
}

Adjacency predecessors_of(const Adjacency& successors) {
  Adjacency predecessors(successors.size());
  for (NodeIndex v = 0; v < successors.size(); ++v) {
    for (NodeIndex s : successors[v]) predecessors[s].push_back(v);
  }
  return predecessors;
}

}  // namespace uops::runtime
