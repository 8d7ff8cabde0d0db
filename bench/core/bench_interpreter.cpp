// Interpreter throughput: the oracle runs thousands of cases a minute through it (docs/design.md
// §3.7).
//   build-*/bench/core/bench_interpreter --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cmath>

#include "uops/uops.h"

namespace uops {
namespace {

Tensor ramp(std::vector<int64_t> shape, double scale) {
  Tensor t(DType::f32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, std::sin(double(i)) * scale);
  return t;
}

// z = exp(x) * y + x: three elementwise uops over n elements.
void BM_ElementwiseChain(benchmark::State& state) {
  const int64_t n = state.range(0);
  Graph g;
  Node x = g.input("x", 1, DType::f32), y = g.input("y", 1, DType::f32);
  g.output("z", g.binary(BinaryOp::add, g.binary(BinaryOp::mul, g.unary(UnaryOp::exp, x), y), x));
  auto exe = make_interpreter(lower(g));
  TensorMap in = {{"x", ramp({n}, 1.0)}, {"y", ramp({n}, 0.5)}};
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(in));
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["uop_elements/s"] =
      benchmark::Counter(double(state.iterations()) * 3 * double(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ElementwiseChain)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

// c = a @ b built from reindex, mul and sum as in tests/support/example_graphs.h; items are
// multiply-adds.
void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ar = g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b});
  Node br = g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b});
  Node sum = g.reduce(ReduceOp::sum, {2}, g.binary(BinaryOp::mul, ar, br));
  g.output("c", g.reindex(sum, {"dA0", "dA1"}, {"i0", "i1", "0"}));
  auto exe = make_interpreter(lower(g));
  TensorMap in = {{"a", ramp({n, n}, 1.0)}, {"b", ramp({n, n}, 1.0)}};
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(in));
  state.SetItemsProcessed(state.iterations() * n * n * n);
}
BENCHMARK(BM_Matmul)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uops
