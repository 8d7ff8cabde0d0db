// Scheduling overhead per node (graphs of empty kernels) and the speedup of running k
// independent busy branches on k streams instead of one, next to oneTBB's flow graph on the
// same graphs when it is available (UOPS_BENCH_TBB), so ratios come from one run. These runs
// are back to back; `bench_runtime --between-runs` measures runs after other work, interleaved
// with oneTBB and OpenMP (between_runs.cpp).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "between_runs.h"
#include "graphs.h"
#include "uops/runtime/builder.h"
#include "uops/runtime/context.h"
#include "uops/runtime/cpu_executor.h"

#ifdef UOPS_BENCH_TBB
#include <tbb/global_control.h>

#include "tbb_graph.h"
#endif

namespace {

using namespace uops::runtime;
namespace bench = uops::bench;

using bench::busy_work;
using bench::Edges;
using bench::ladder;
using bench::mesh;

void report_per_node(benchmark::State& state, std::int64_t nodes) {
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

// A graph of empty kernels with these edges. With `costed` every node declares cost 0, so the
// schedule weighs the hand-offs; without, it uses all the parallelism it finds.
Graph empty_graph(std::size_t n, const Edges& edges, std::size_t streams, bool costed) {
  GraphBuilder b;
  std::vector<NodeRef> nodes;
  for (std::size_t i = 0; i < n; ++i) {
    nodes.push_back(b.add("k", [] {}, {}, {}));
    if (costed) nodes.back().cost(0);
  }
  for (auto [from, to] : edges) nodes[from].then(nodes[to]);
  return std::move(b).build(BuildOptions{.max_streams = streams});
}

void run_uops(benchmark::State& state, Graph graph, std::size_t n) {
  CpuExecutor executor(std::move(graph));
  for (auto _ : state) executor.run();
  report_per_node(state, std::int64_t(n));
  state.counters["streams"] = double(executor.graph().schedule().streams.size());
  state.counters["signals"] = double(executor.graph().schedule().signals.size());
}

// N empty kernels in a chain: the pure per-node cost of one stream.
void BM_ChainOverhead(benchmark::State& state) {
  const auto n = state.range(0);
  GraphBuilder b;
  for (std::int64_t i = 0; i < n; ++i) b.add("k", [] {}, {0}, {0});
  CpuExecutor executor(std::move(b).build());
  for (auto _ : state) executor.run();
  report_per_node(state, n);
}
BENCHMARK(BM_ChainOverhead)->Arg(1000)->Arg(10000)->UseRealTime();

// N independent empty kernels spread over `streams` streams: adds the per-run wake-up of the
// workers, and no signals.
void BM_WideOverhead(benchmark::State& state) {
  const auto n = state.range(0);
  GraphBuilder b;
  for (std::int64_t i = 0; i < n; ++i) b.add("k", [] {}, {}, {});
  CpuExecutor executor(
      std::move(b).build(BuildOptions{.max_streams = std::size_t(state.range(1))}));
  for (auto _ : state) executor.run();
  report_per_node(state, n);
}
BENCHMARK(BM_WideOverhead)->Args({1000, 2})->Args({10000, 2})->UseRealTime();

// Args: nodes, costed (see empty_graph). On 2 streams.
void BM_Ladder(benchmark::State& state) {
  const auto n = std::size_t(state.range(0));
  run_uops(state, empty_graph(n, ladder(n), 2, state.range(1) != 0), n);
}
BENCHMARK(BM_Ladder)->Args({1000, 0})->Args({1000, 1})->UseRealTime();

// Args: rows, columns, costed. On 2 streams.
void BM_Mesh(benchmark::State& state) {
  const auto rows = std::size_t(state.range(0)), cols = std::size_t(state.range(1));
  run_uops(state, empty_graph(rows * cols, mesh(rows, cols), 2, state.range(2) != 0), rows * cols);
}
BENCHMARK(BM_Mesh)->Args({4, 250, 0})->Args({4, 250, 1})->UseRealTime();

// Scheduling overhead per node at scale: a stencil of `layers` x 1,000 empty kernels (each
// reads two neighbouring cells the layer before wrote and writes its own), 10^6 nodes at
// 1,000 layers. Args: layers, streams.
void BM_StencilOverhead(benchmark::State& state) {
  constexpr std::size_t kWidth = 1'000;
  const auto layers = std::size_t(state.range(0));
  GraphBuilder b;
  for (std::size_t l = 0; l < layers; ++l) {
    const std::size_t in = (l % 2) * kWidth, out = kWidth - in;
    for (std::size_t j = 0; j < kWidth; ++j) {
      b.add("k", [] {}, {in + j, in + (j + 1) % kWidth}, {out + j});
    }
  }
  run_uops(state, std::move(b).build(BuildOptions{.max_streams = std::size_t(state.range(1))}),
           layers * kWidth);
}
BENCHMARK(BM_StencilOverhead)
    ->Args({1000, 1})
    ->Args({1000, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// source -> k busy branches -> sink.
Graph fork_join(std::int64_t k, std::size_t streams) {
  GraphBuilder b;
  NodeRef source = b.add("source", [] {}, {}, {});
  NodeRef sink = b.add("sink", [] {}, {}, {});
  for (std::int64_t i = 0; i < k; ++i) source.then(b.add("branch", busy_work, {}, {})).then(sink);
  return std::move(b).build(BuildOptions{.max_streams = streams});
}

// Args: branches, streams; compare streams = 2 with streams = 1.
void BM_ForkJoin(benchmark::State& state) {
  CpuExecutor executor(fork_join(state.range(0), std::size_t(state.range(1))));
  for (auto _ : state) executor.run();
  state.counters["streams"] = double(executor.graph().schedule().streams.size());
}
BENCHMARK(BM_ForkJoin)
    ->Args({2, 1})
    ->Args({2, 2})
    ->Args({4, 1})
    ->Args({4, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// The passive setting: workers sleep as soon as they run out of work.
void BM_ForkJoinPassive(benchmark::State& state) {
  CpuExecutor executor(fork_join(state.range(0), 2),
                       CpuExecutorOptions{.spin = std::chrono::microseconds(0)});
  for (auto _ : state) executor.run();
}
BENCHMARK(BM_ForkJoinPassive)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Eager mode: N empty kernels launched in a chain on one stream and synchronized, per launch;
// compare with BM_ChainOverhead, the same work as a built graph.
void BM_EagerLaunchOverhead(benchmark::State& state) {
  const auto n = state.range(0);
  Context context(ContextOptions{.max_streams = 1});
  for (auto _ : state) {
    for (std::int64_t i = 0; i < n; ++i) context.launch("k", [] {}, {0}, {0});
    context.sync();
  }
  report_per_node(state, n);
}
BENCHMARK(BM_EagerLaunchOverhead)->Arg(1000)->UseRealTime();

// GrCUDA's image-pipeline shape, launched eagerly: four independent branches (two 3x3 box
// blurs of their own 384x384 image) that merge into one sum. Arg: streams.
void box_blur(const std::vector<float>& in, std::vector<float>& out, std::size_t side) {
  for (std::size_t y = 1; y + 1 < side; ++y) {
    for (std::size_t x = 1; x + 1 < side; ++x) {
      float sum = 0;
      for (std::size_t dy = 0; dy < 3; ++dy) {
        for (std::size_t dx = 0; dx < 3; ++dx) sum += in[(y + dy - 1) * side + x + dx - 1];
      }
      out[y * side + x] = sum / 9;
    }
  }
}

void BM_EagerImagePipeline(benchmark::State& state) {
  constexpr std::size_t kSide = 384, kBranches = 4;
  std::vector<std::vector<float>> image(kBranches, std::vector<float>(kSide * kSide, 1.0f));
  std::vector<std::vector<float>> blurred = image, sharp = image;
  double total = 0;
  Context context(ContextOptions{.max_streams = std::size_t(state.range(0))});
  for (auto _ : state) {
    for (std::size_t b = 0; b < kBranches; ++b) {
      context.launch("blur", [&, b] { box_blur(image[b], blurred[b], kSide); },
                     {buffer_id(&image[b])}, {buffer_id(&blurred[b])});
      context.launch("blur again", [&, b] { box_blur(blurred[b], sharp[b], kSide); },
                     {buffer_id(&blurred[b])}, {buffer_id(&sharp[b])});
    }
    std::vector<BufferId> all;
    for (auto& s : sharp) all.push_back(buffer_id(&s));
    context.launch("merge",
                   [&] {
                     for (auto& s : sharp) total += s[kSide + 1];
                   },
                   all, {buffer_id(&total)});
    context.read(buffer_id(&total));
  }
  benchmark::DoNotOptimize(total);
  state.counters["streams"] = double(context.stream_count());
}
BENCHMARK(BM_EagerImagePipeline)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

#ifdef UOPS_BENCH_TBB
using bench::TbbGraph;
namespace flow = tbb::flow;

tbb::global_control& two_threads() {
  static tbb::global_control control(tbb::global_control::max_allowed_parallelism, 2);
  return control;
}

template <typename Policy>
void run_tbb(benchmark::State& state, std::size_t n, const Edges& edges) {
  two_threads();
  TbbGraph<Policy> graph(n, edges, [](std::size_t) {});
  for (auto _ : state) graph.run();
  report_per_node(state, std::int64_t(n));
}

// Arg: lightweight policy (1) or queueing (0).
void BM_TbbLadder(benchmark::State& state) {
  const std::size_t n = 1000;
  if (state.range(0)) {
    run_tbb<flow::lightweight>(state, n, ladder(n));
  } else {
    run_tbb<flow::queueing>(state, n, ladder(n));
  }
}
BENCHMARK(BM_TbbLadder)->Arg(0)->Arg(1)->UseRealTime();

void BM_TbbMesh(benchmark::State& state) {
  if (state.range(0)) {
    run_tbb<flow::lightweight>(state, 1000, mesh(4, 250));
  } else {
    run_tbb<flow::queueing>(state, 1000, mesh(4, 250));
  }
}
BENCHMARK(BM_TbbMesh)->Arg(0)->Arg(1)->UseRealTime();

void BM_TbbChain(benchmark::State& state) {
  Edges edges;
  for (std::size_t i = 1; i < 1000; ++i) edges.emplace_back(i - 1, i);
  run_tbb<flow::lightweight>(state, 1000, edges);
}
BENCHMARK(BM_TbbChain)->UseRealTime();

// Arg: branches. Node 0 is the source, 1 the sink.
void BM_TbbForkJoin(benchmark::State& state) {
  two_threads();
  const auto k = std::size_t(state.range(0));
  Edges edges;
  for (std::size_t i = 0; i < k; ++i) {
    edges.emplace_back(0, 2 + i);
    edges.emplace_back(2 + i, 1);
  }
  TbbGraph<flow::queueing> graph(k + 2, edges, [](std::size_t i) {
    if (i >= 2) busy_work();
  });
  for (auto _ : state) graph.run();
}
BENCHMARK(BM_TbbForkJoin)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMicrosecond);
#endif

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--between-runs") return uops::bench::between_runs_main(argc, argv);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
