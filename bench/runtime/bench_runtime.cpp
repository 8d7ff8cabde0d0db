// Scheduling overhead per node (graphs of empty kernels) and the speedup of running k
// independent busy branches on k streams instead of one.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/cpu_executor.h"

namespace {

using namespace uops::runtime;

void report_per_node(benchmark::State& state, std::int64_t nodes) {
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
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

// A ladder of N empty kernels: two chains where every rung also depends on the other
// chain's previous rung, so on two streams nearly every node waits on a signal; the worst case
// for cross-stream synchronization.
void BM_SignalOverhead(benchmark::State& state) {
  const auto n = state.range(0);
  GraphBuilder b;
  std::vector<NodeRef> nodes;
  for (std::int64_t i = 0; i < n; ++i) {
    nodes.push_back(b.add("k", [] {}, {}, {}));
    // Node 2k is rung k of chain A, node 2k + 1 rung k of chain B.
    if (i >= 2) {
      nodes[i - 2].then(nodes[i]);
      nodes[i % 2 == 0 ? i - 1 : i - 3].then(nodes[i]);
    }
  }
  CpuExecutor executor(std::move(b).build(BuildOptions{.max_streams = 2}));
  for (auto _ : state) executor.run();
  report_per_node(state, n);
  state.counters["signals"] = double(executor.graph().schedule().signals.size());
}
BENCHMARK(BM_SignalOverhead)->Arg(1000)->UseRealTime();

// Fixed CPU work (not a timed spin, which would finish on time even when starved of a core).
void busy_work() {
  std::uint64_t x = 1;
  for (int i = 0; i < 2'000'000; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  benchmark::DoNotOptimize(x);
}

// source -> k busy branches -> sink, on `streams` streams; compare streams = k with streams = 1.
void BM_ForkJoin(benchmark::State& state) {
  const auto k = state.range(0);
  GraphBuilder b;
  NodeRef source = b.add("source", [] {}, {}, {});
  NodeRef sink = b.add("sink", [] {}, {}, {});
  for (std::int64_t i = 0; i < k; ++i) source.then(b.add("branch", busy_work, {}, {})).then(sink);
  CpuExecutor executor(
      std::move(b).build(BuildOptions{.max_streams = std::size_t(state.range(1))}));
  for (auto _ : state) executor.run();
  state.counters["streams"] = double(executor.graph().schedule().streams.size());
}
BENCHMARK(BM_ForkJoin)
    ->Args({2, 1})
    ->Args({2, 2})
    ->Args({4, 1})
    ->Args({4, 2})
    ->Args({4, 4})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
