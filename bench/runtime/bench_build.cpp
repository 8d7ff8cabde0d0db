// Building a graph at scale: seconds per node, bytes the built graph holds per node, and the
// peak bytes per node while building (all heap allocation in this program is counted).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <random>
#include <string_view>
#include <vector>

#include "uops/runtime/builder.h"

namespace {

std::atomic<std::size_t> live_bytes{0};
std::atomic<std::size_t> peak_bytes{0};

void* counted_alloc(std::size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (!p) throw std::bad_alloc();
  const std::size_t now = live_bytes.fetch_add(malloc_usable_size(p)) + malloc_usable_size(p);
  for (std::size_t peak = peak_bytes.load();
       now > peak && !peak_bytes.compare_exchange_weak(peak, now);) {
  }
  return p;
}

void counted_free(void* p) {
  if (!p) return;
  live_bytes.fetch_sub(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

void* operator new(std::size_t size) {
  return counted_alloc(size);
}
void* operator new[](std::size_t size) {
  return counted_alloc(size);
}
void operator delete(void* p) noexcept {
  counted_free(p);
}
void operator delete[](void* p) noexcept {
  counted_free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  counted_free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  counted_free(p);
}

namespace {

using namespace uops::runtime;

// Every build, at every size, takes its memory from a heap that earlier builds warmed. Left to
// itself glibc serves a 10^6-node build's large blocks by mmap and gives them back when the
// graph is freed, so each repetition pays the kernel's page faults and zeroing again, while
// a 10^5-node build reuses the heap: the ratio of the two sizes then measures the allocator,
// not the build. UOPS_BENCH_FRESH_HEAP=1 leaves glibc's defaults (the first build of an
// application, at either size, pays the page faults).
const bool heap_kept = [] {
  const char* fresh = std::getenv("UOPS_BENCH_FRESH_HEAP");
  if (fresh && std::string_view(fresh) == "1") return false;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  return true;
}();

// Builds the graph once per iteration and reports the figures of the last build.
template <typename AddNodes>
void measure_build(benchmark::State& state, AddNodes add_nodes) {
  const auto n = static_cast<std::size_t>(state.range(0));
  double held = 0, peak = 0;
  for (auto _ : state) {
    state.PauseTiming();
    {
      GraphBuilder b;
      add_nodes(b, n);
      const std::size_t before = live_bytes.load();
      peak_bytes.store(before);
      state.ResumeTiming();
      Graph graph = std::move(b).build();
      state.PauseTiming();
      held = double(live_bytes.load()) - double(before);
      peak = double(peak_bytes.load()) - double(before);
      benchmark::DoNotOptimize(graph.edge_count());
    }  // the graph and the nodes it took over are freed untimed, as they were made
    state.ResumeTiming();
  }
  state.counters["per_node"] = benchmark::Counter(
      double(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  // The builder's nodes move into the graph, so `held` counts what build() adds to them.
  state.counters["bytes_per_node"] = held / double(n);
  state.counters["peak_bytes_per_node"] = peak / double(n);
  state.counters["heap_kept"] = heap_kept ? 1 : 0;
}

// Every build at 10^5 and 10^6 nodes (after the sizes a registration adds itself), timed in real
// milliseconds. Five repetitions report their median (and spread), so the ratio of the two
// sizes is not one noisy sample's: at 10^6 a repetition is a single build.
void large_sizes(benchmark::internal::Benchmark* b) {
  b->Arg(100'000)
      ->Arg(1'000'000)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond)
      ->Repetitions(5)
      ->ReportAggregatesOnly(true);
}

// N nodes with no accesses and no edges.
void BM_BuildIndependent(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) b.add("k", [] {}, {}, {});
  });
}
BENCHMARK(BM_BuildIndependent)->Arg(10'000)->Apply(large_sizes);

// The shapes below are at 10^5 and 10^6 nodes: a build that is near-linear takes about ten
// times as long for the larger one, a quadratic step a hundred times.

// N nodes that each read two and write one of 40 buffers, chosen at random.
void BM_BuildRandomDag(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    std::mt19937 rng(1);
    std::uniform_int_distribution<BufferId> buffer(1, 40);
    for (std::size_t i = 0; i < n; ++i)
      b.add("k", [] {}, {buffer(rng), buffer(rng)}, {buffer(rng)});
  });
}
BENCHMARK(BM_BuildRandomDag)->Arg(10'000)->Apply(large_sizes);

// The same over N / 10 buffers: a buffer is rewritten about every N / 10 nodes, so edges and
// the paths that imply them span the graph.
void BM_BuildRandomDagWide(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    std::mt19937 rng(1);
    std::uniform_int_distribution<BufferId> buffer(1, n / 10);
    for (std::size_t i = 0; i < n; ++i)
      b.add("k", [] {}, {buffer(rng), buffer(rng)}, {buffer(rng)});
  });
}
BENCHMARK(BM_BuildRandomDagWide)->Apply(large_sizes);

// N nodes without accesses, each after two nodes chosen at random among all earlier ones by
// explicit edges: paths and implied edges span the whole graph.
void BM_BuildRandomEdges(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    std::mt19937 rng(2);
    std::vector<NodeRef> nodes;
    nodes.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      nodes.push_back(b.add("k", [] {}, {}, {}));
      for (int e = 0; e < 2 && i > 0; ++e) nodes[rng() % i].then(nodes[i]);
    }
  });
}
BENCHMARK(BM_BuildRandomEdges)->Apply(large_sizes);

// A chain of N nodes that all also read what the first one wrote: the first node has N
// successors, every one of them but the second implied through the chain.
void BM_BuildOneEarlyReader(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    b.add("k", [] {}, {}, {0});
    for (std::size_t i = 1; i < n; ++i) b.add("k", [] {}, {0, i}, {i + 1});
  });
}
BENCHMARK(BM_BuildOneEarlyReader)->Apply(large_sizes);

// N nodes that each write a buffer of their own and read two written by nodes among the 1,000
// before (local edges, joins everywhere).
void BM_BuildWindow(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    std::mt19937 rng(4);
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<BufferId> reads;
      for (int r = 0; r < 2 && i > 0; ++r)
        reads.push_back(i - rng() % std::min<std::size_t>(i, 1'000));
      b.add("k", [] {}, std::move(reads), {i + 1});
    }
  });
}
BENCHMARK(BM_BuildWindow)->Apply(large_sizes);

// A stencil of N / 1,000 layers of 1,000 nodes: each reads two neighbouring cells the layer
// before wrote and writes its own (joins everywhere, all of them local).
void BM_BuildStencil(benchmark::State& state) {
  measure_build(state, [](GraphBuilder& b, std::size_t n) {
    constexpr std::size_t kWidth = 1'000;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t l = i / kWidth, j = i % kWidth, in = (l % 2) * kWidth;
      b.add("k", [] {}, {in + j, in + (j + 1) % kWidth}, {kWidth - in + j});
    }
  });
}
BENCHMARK(BM_BuildStencil)->Apply(large_sizes);

}  // namespace
