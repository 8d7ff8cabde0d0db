// Oracle throughput: random cases per second (generate, run the canonical interpreter program,
// compare with Eigen, run the implementation, compare) for one op, f32.
#include <benchmark/benchmark.h>

#include "uops/oracle/harness.h"

namespace {

void oracle_cases(benchmark::State& state, const char* name) {
  const uops::OpDef& op = uops::find_op(name);
  uops::oracle::Implementation impl = uops::oracle::canonical(op, uops::DType::f32);
  uops::oracle::CheckOptions o;
  o.trials = 100;
  int64_t cases = 0;
  for (auto _ : state) {
    uops::oracle::CheckReport r = uops::oracle::check(op, impl, o);
    if (!r.passed) state.SkipWithError(r.message().c_str());
    cases += r.cases;
    o.seed += o.trials;
  }
  state.counters["cases_per_s"] = benchmark::Counter(double(cases), benchmark::Counter::kIsRate);
}

BENCHMARK_CAPTURE(oracle_cases, conv2d, "conv2d")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(oracle_cases, softmax, "softmax")->Unit(benchmark::kMillisecond);

}  // namespace
