// Dependency inference from declared buffer accesses, and the graph algorithms the builder and
// scheduler share: topological ordering with cycle reporting and transitive reduction.
#pragma once

#include <optional>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

using Adjacency = std::vector<std::vector<NodeIndex>>;

// Successor lists implied by the nodes' accesses in insertion order (read-after-write,
// write-after-read, write-after-write). Every edge points from a lower to a higher index.
Adjacency infer_dependencies(const std::vector<Node>& nodes);

struct TopologicalOrder {
  std::vector<NodeIndex> order;       // complete when the graph is acyclic
  std::optional<NodeIndex> on_cycle;  // set when it is not
};

// Kahn's algorithm taking the lowest ready index first, so a graph whose edges all point
// forward is ordered as it was added.
TopologicalOrder topological_order(const Adjacency& successors);

// Drops every edge u -> v for which another path from u to v exists, and duplicates; successor
// lists come out sorted. Memory is linear in nodes + edges (at most 128 bytes of reachability
// bits per node); time is that of one pass over the graph per 1,024 targets that some node
// could reach twice, and no pass at all when no node can.
Adjacency transitive_reduction(const Adjacency& successors, const std::vector<NodeIndex>& order);

Adjacency predecessors_of(const Adjacency& successors);

}  // namespace uops::runtime
