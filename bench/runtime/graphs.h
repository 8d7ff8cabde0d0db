// The graph shapes both modes of bench_runtime measure, as edge lists every peer (uops,
// oneTBB, OpenMP) can build from, and the fixed CPU work of the fork/join branches.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "uops/runtime/builder.h"

namespace uops::bench {

using Edges = std::vector<std::pair<std::size_t, std::size_t>>;

// A ladder of n nodes: two chains where every rung also depends on the other chain's previous
// rung (node 2k is rung k of chain A, node 2k + 1 rung k of chain B), so split over two
// streams nearly every node is a hand-off.
inline Edges ladder(std::size_t n) {
  Edges edges;
  for (std::size_t i = 2; i < n; ++i) {
    edges.emplace_back(i - 2, i);
    edges.emplace_back(i % 2 == 0 ? i - 1 : i - 3, i);
  }
  return edges;
}

// rows x cols nodes; node (r, c) depends on (r - 1, c - 1), (r, c - 1) and (r + 1, c - 1).
inline Edges mesh(std::size_t rows, std::size_t cols) {
  Edges edges;
  for (std::size_t c = 1; c < cols; ++c) {
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t from = r == 0 ? 0 : r - 1; from <= r + 1 && from < rows; ++from) {
        edges.emplace_back(from * cols + c - 1, r * cols + c);
      }
    }
  }
  return edges;
}

inline Edges chain(std::size_t n) {
  Edges edges;
  for (std::size_t i = 1; i < n; ++i) edges.emplace_back(i - 1, i);
  return edges;
}

// source (node 0) -> k branches (nodes 2 .. k + 1) -> sink (node 1).
inline Edges fork_join(std::size_t k) {
  Edges edges;
  for (std::size_t i = 0; i < k; ++i) {
    edges.emplace_back(0, 2 + i);
    edges.emplace_back(2 + i, 1);
  }
  return edges;
}

// n nodes that each read two and write one of 40 buffers chosen at random (the shape of
// bench_runtime_build's random DAG), built with the inferred edges.
inline runtime::Graph random_dag(std::size_t n, std::size_t max_streams) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<runtime::BufferId> buffer(1, 40);
  runtime::GraphBuilder b;
  for (std::size_t i = 0; i < n; ++i) b.add("k", [] {}, {buffer(rng), buffer(rng)}, {buffer(rng)});
  return std::move(b).build(runtime::BuildOptions{.max_streams = max_streams});
}

inline Edges edges_of(const runtime::Graph& graph) {
  Edges edges;
  for (runtime::NodeIndex n = 0; n < graph.size(); ++n) {
    for (runtime::NodeIndex s : graph.successors(n)) edges.emplace_back(n, s);
  }
  return edges;
}

// Fixed CPU work of about 0.5 ms (not a timed spin, which would finish on time even when
// starved of a core).
inline void busy_work() {
  std::uint64_t x = 1;
  for (int i = 0; i < 400'000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  benchmark::DoNotOptimize(x);
}

}  // namespace uops::bench
