#include "dependencies.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <string_view>
#include <unordered_map>

namespace uops::runtime {

Adjacency infer_dependencies(const std::vector<Node>& nodes) {
  AccessTracker<NodeIndex> tracker;
  Adjacency successors(nodes.size());
  auto ignore = [](NodeIndex) {};
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    tracker.add(
        n, nodes[n].reads, nodes[n].writes,
        [&](NodeIndex earlier) {
          if (earlier != n) successors[earlier].push_back(n);
        },
        ignore, ignore);
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
  std::vector<std::uint32_t> position(n);
  for (std::uint32_t i = 0; i < n; ++i) position[order[i]] = i;
  Adjacency reduced(n);
  for (NodeIndex v = 0; v < n; ++v) {
    reduced[v] = successors[v];
    std::sort(reduced[v].begin(), reduced[v].end());
    reduced[v].erase(std::unique(reduced[v].begin(), reduced[v].end()), reduced[v].end());
  }

  // An edge v -> s can only be redundant when v has another successor and s another
  // predecessor. Those targets are the only columns of the reachability bitsets, numbered in
  // topological order, so a graph without such joins (independent nodes, chains, trees) costs
  // no bitsets at all.
  std::vector<std::uint32_t> indegree(n, 0);
  for (const auto& list : reduced) {
    for (NodeIndex s : list) ++indegree[s];
  }
  constexpr std::uint32_t kNoColumn = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> column(n, kNoColumn);
  for (NodeIndex v = 0; v < n; ++v) {
    if (reduced[v].size() < 2) continue;
    for (NodeIndex s : reduced[v]) {
      if (indegree[s] >= 2) column[s] = 0;
    }
  }
  std::vector<NodeIndex> columns;  // column -> node, in topological order
  for (NodeIndex v : order) {
    if (column[v] != kNoColumn) {
      column[v] = static_cast<std::uint32_t>(columns.size());
      columns.push_back(v);
    }
  }

  // Columns are handled in blocks of at most kBlockWords * 64, so the bitsets take a bounded
  // number of bytes per node. reach[v]: the block's columns reachable from v by one or more
  // edges; only nodes ordered before the block's last column can reach it, and only nodes from
  // the block's earliest predecessor on can lose an edge into it or be the successor that
  // makes one redundant, so a block's pass ends there: graphs whose edges span a bounded
  // stretch of the order (layers, buffers rewritten again and again) cost linear time.
  std::vector<std::uint32_t> earliest_predecessor(n, std::numeric_limits<std::uint32_t>::max());
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex s : reduced[v]) {
      earliest_predecessor[s] = std::min(earliest_predecessor[s], position[v]);
    }
  }
  constexpr std::size_t kBlockWords = 16;
  const std::size_t blocks = (columns.size() + 64 * kBlockWords - 1) / (64 * kBlockWords);
  const std::size_t words = std::min(kBlockWords, (columns.size() + 63) / 64);
  std::vector<std::uint64_t> reach(blocks == 0 ? 0 : n * words);
  std::vector<std::uint64_t> others(words);
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t first = block * 64 * kBlockWords;
    const std::size_t last = std::min(columns.size(), first + 64 * kBlockWords) - 1;
    auto in_block = [&](NodeIndex s) {
      return column[s] != kNoColumn && column[s] >= first && column[s] <= last;
    };
    auto bit = [&](NodeIndex s) { return column[s] - first; };
    std::uint32_t stop = position[columns[last]];
    for (std::size_t c = first; c <= last; ++c) {
      stop = std::min(stop, earliest_predecessor[columns[c]]);
    }
    for (std::size_t i = position[columns[last]] + 1; i-- > stop;) {
      const NodeIndex v = order[i];
      std::uint64_t* mine = &reach[v * words];
      std::fill(mine, mine + words, 0);
      for (NodeIndex s : reduced[v]) {
        if (position[s] > position[columns[last]]) continue;
        const std::uint64_t* theirs = &reach[s * words];
        for (std::size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
      }
      // Now `mine` holds what v reaches through a successor; a successor in it is redundant.
      if (reduced[v].size() >= 2) {
        std::erase_if(reduced[v], [&](NodeIndex s) {
          return in_block(s) && ((mine[bit(s) / 64] >> (bit(s) % 64)) & 1);
        });
      }
      for (NodeIndex s : reduced[v]) {
        if (in_block(s)) mine[bit(s) / 64] |= std::uint64_t{1} << (bit(s) % 64);
      }
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

std::vector<std::uint32_t> command_ids(const std::vector<Node>& nodes) {
  std::unordered_map<std::string_view, std::uint32_t> ids;
  std::vector<std::uint32_t> command;
  command.reserve(nodes.size());
  for (const Node& node : nodes) {
    command.push_back(ids.try_emplace(node.name, std::uint32_t(ids.size())).first->second);
  }
  return command;
}

}  // namespace uops::runtime
