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
  // A node's predecessors all come while it is added, so they are gathered node after node
  // into one flat array; the successor lists are then sized once from them and filled in
  // node order, which also sorts them (no list grows by reallocation).
  AccessTracker<NodeIndex> tracker;
  std::vector<NodeIndex> predecessors;
  std::vector<std::size_t> start;  // node n's predecessors: [start[n], start[n + 1])
  start.reserve(nodes.size() + 1);
  start.push_back(0);
  auto ignore = [](NodeIndex) {};
  // Buffers, and then nodes, are looked up at random places once there are many: what node
  // n + d will look up is asked for while node n is added, and likewise below (dependencies.h).
  constexpr std::size_t kAhead = 8;
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    if (n + kAhead < nodes.size()) {
      for (BufferId b : nodes[n + kAhead].reads) __builtin_prefetch(tracker.slot_address(b));
      for (BufferId b : nodes[n + kAhead].writes) __builtin_prefetch(tracker.slot_address(b));
    }
    tracker.add(
        n, nodes[n].reads, nodes[n].writes,
        [&](NodeIndex earlier) {
          if (earlier != n) predecessors.push_back(earlier);
        },
        ignore, ignore);
    const auto first = predecessors.begin() + static_cast<std::ptrdiff_t>(start.back());
    std::sort(first, predecessors.end());
    predecessors.erase(std::unique(first, predecessors.end()), predecessors.end());
    start.push_back(predecessors.size());
  }
  std::vector<std::uint32_t> outdegree(nodes.size(), 0);
  for (std::size_t i = 0; i < predecessors.size(); ++i) {
    if (i + kAhead < predecessors.size()) __builtin_prefetch(&outdegree[predecessors[i + kAhead]]);
    ++outdegree[predecessors[i]];
  }
  Adjacency successors(nodes.size());
  for (NodeIndex v = 0; v < nodes.size(); ++v) successors[v].reserve(outdegree[v]);
  for (NodeIndex n = 0; n < nodes.size(); ++n) {
    for (std::size_t i = start[n]; i < start[n + 1]; ++i) {
      if (i + 2 * kAhead < predecessors.size())
        __builtin_prefetch(&successors[predecessors[i + 2 * kAhead]]);
      if (i + kAhead < predecessors.size())
        __builtin_prefetch(successors[predecessors[i + kAhead]].data());
      successors[predecessors[i]].push_back(n);
    }
  }
  return successors;
}

TopologicalOrder topological_order(const Adjacency& successors) {
  const std::size_t n = successors.size();
  TopologicalOrder result;
  result.order.reserve(n);
  // Where every edge points forward (inferred edges always do), the lowest ready index is
  // always the next one: the order is the identity, found without a queue.
  const bool forward = std::all_of(successors.begin(), successors.end(), [&](const auto& list) {
    const auto v = static_cast<NodeIndex>(&list - successors.data());
    return std::all_of(list.begin(), list.end(), [&](NodeIndex s) { return s > v; });
  });
  if (forward) {
    for (NodeIndex v = 0; v < n; ++v) result.order.push_back(v);
    return result;
  }
  std::vector<std::uint32_t> indegree(n, 0);
  for (const auto& list : successors) {
    for (NodeIndex s : list) ++indegree[s];
  }
  std::priority_queue<NodeIndex, std::vector<NodeIndex>, std::greater<>> ready;
  for (NodeIndex v = 0; v < n; ++v) {
    if (indegree[v] == 0) ready.push(v);
  }
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

Adjacency transitive_reduction(Adjacency successors, const std::vector<NodeIndex>& order,
                               ReductionWork* work) {
  const std::size_t n = successors.size();
  std::vector<std::uint32_t> position(n);
  for (std::uint32_t i = 0; i < n; ++i) position[order[i]] = i;
  Adjacency reduced = std::move(successors);
  for (NodeIndex v = 0; v < n; ++v) {
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

  // Columns are handled in blocks of at most kBlockWords * 64 whose columns lie within
  // kReductionWindow places of the order, so one pass's bitsets take a bounded number of bytes.
  // reach[v]: the block's columns reachable from v by one or more edges. A block's pass
  // runs backwards from its last column to its earliest predecessor, or to kReductionWindow
  // places before its first column if that comes later: every path from a node of the pass to
  // a column stays inside the pass, so the edges it examines are dropped exactly when implied,
  // and the edges it leaves out span more than the window. A node lies in the passes of at
  // most kReductionWindow / (kBlockWords * 64) + 3 blocks, so the whole costs linear time.
  std::vector<std::uint32_t> earliest_predecessor(n, std::numeric_limits<std::uint32_t>::max());
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex s : reduced[v]) {
      earliest_predecessor[s] = std::min(earliest_predecessor[s], position[v]);
    }
  }
  constexpr std::size_t kBlockColumns = 64 * kBlockWords;
  const std::size_t words = std::min(kBlockWords, (columns.size() + 63) / 64);
  // A pass spans at most 2 * kReductionWindow + 1 places, so its bits are indexed by place
  // in the pass: about a megabyte that stays in cache, however large the graph.
  const std::size_t span = std::min<std::size_t>(n, 2 * std::size_t{kReductionWindow} + 1);
  std::vector<std::uint64_t> reach(columns.empty() ? 0 : span * words);
  for (std::size_t first = 0, last; first < columns.size(); first = last + 1) {
    const std::uint32_t first_position = position[columns[first]];
    last = first;
    while (last + 1 < columns.size() && last + 1 - first < kBlockColumns &&
           position[columns[last + 1]] - first_position <= kReductionWindow) {
      ++last;
    }
    const std::uint32_t end = position[columns[last]];
    // The block's columns lie at or before `end` in the order: a successor past it, as most
    // are in a graph with long edges, is told apart by its position, which the pass reads
    // anyway, without a cache miss on its column.
    auto in_block = [&](NodeIndex s) {
      return position[s] <= end && column[s] != kNoColumn && column[s] >= first &&
             column[s] <= last;
    };
    auto bit = [&](NodeIndex s) { return column[s] - first; };
    std::uint32_t stop = first_position > kReductionWindow ? first_position - kReductionWindow : 0;
    std::uint32_t earliest = end;
    for (std::size_t c = first; c <= last; ++c) {
      earliest = std::min(earliest, earliest_predecessor[columns[c]]);
    }
    stop = std::max(stop, earliest);
    for (std::size_t i = end + 1; i-- > stop;) {
      // Successors lie anywhere in a graph with long edges: their positions are asked for
      // ahead, as is the list of the node 2d places on (dependencies.h).
      constexpr std::size_t kAhead = 4;
      if (i >= stop + 2 * kAhead) {
        __builtin_prefetch(reduced[order[i - 2 * kAhead]].data());
        for (NodeIndex s : reduced[order[i - kAhead]]) __builtin_prefetch(&position[s]);
      }
      const NodeIndex v = order[i];
      if (work) {
        ++work->nodes;
        work->edges += reduced[v].size();
      }
      std::uint64_t* mine = &reach[(i - stop) * words];
      std::fill(mine, mine + words, 0);
      for (NodeIndex s : reduced[v]) {
        if (position[s] > end) continue;
        const std::uint64_t* theirs = &reach[(position[s] - stop) * words];
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
  std::vector<std::uint32_t> indegree(successors.size(), 0);
  for (const auto& list : successors) {
    for (NodeIndex s : list) ++indegree[s];
  }
  Adjacency predecessors(successors.size());
  for (NodeIndex v = 0; v < successors.size(); ++v) predecessors[v].reserve(indegree[v]);
  // The lists filled lie at random places in a graph with long edges: the list headers are
  // asked for ahead, 2d nodes on, and their data d nodes on.
  constexpr NodeIndex kAhead = 4;
  const auto n = static_cast<NodeIndex>(successors.size());
  for (NodeIndex v = 0; v < n; ++v) {
    if (v + 2 * kAhead < n) {
      for (NodeIndex s : successors[v + 2 * kAhead]) __builtin_prefetch(&predecessors[s]);
      for (NodeIndex s : successors[v + kAhead]) __builtin_prefetch(predecessors[s].data());
    }
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
