// A graph in oneTBB's flow graph, the peer both modes of bench_runtime compare with: one
// continue_node per node, started by a message to every source. Policy is flow::queueing
// (TBB's default) or flow::lightweight (a successor runs on the finishing thread when it can).
#pragma once

#include <tbb/flow_graph.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "graphs.h"

namespace uops::bench {

template <typename Policy>
struct TbbGraph {
  tbb::flow::graph g;
  std::vector<std::unique_ptr<tbb::flow::continue_node<tbb::flow::continue_msg, Policy>>> nodes;
  std::vector<std::size_t> sources;

  // body(i) runs node i; it is copied into every node.
  template <typename Body>
  TbbGraph(std::size_t n, const Edges& edges, Body body) {
    std::vector<bool> has_predecessor(n, false);
    for (std::size_t i = 0; i < n; ++i) {
      nodes.push_back(std::make_unique<tbb::flow::continue_node<tbb::flow::continue_msg, Policy>>(
          g, [body, i](const tbb::flow::continue_msg&) { body(i); }));
    }
    for (auto [from, to] : edges) {
      tbb::flow::make_edge(*nodes[from], *nodes[to]);
      has_predecessor[to] = true;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (!has_predecessor[i]) sources.push_back(i);
    }
  }

  void run() {
    for (std::size_t s : sources) nodes[s]->try_put(tbb::flow::continue_msg());
    g.wait_for_all();
  }
};

}  // namespace uops::bench
