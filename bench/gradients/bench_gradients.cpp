// The optimized C gradient of every built-in op at its example shapes (f32), run through the
// public Executable::run() (outputs allocated on each call, as a caller gets them): one
// benchmark per op and thread count (1, and 0: one per core), its time per gradient run. The
// gradient takes d<output> for every output, drawn in [-1, 1] and shaped like the forward
// outputs, and the forward inputs it reads, drawn as the oracle draws them (the op's value
// distribution, index ranges and nonzero divisors; seed 1). Ops without a float input that gets
// a gradient are left out.
//
// Two builds are compared (before and after a change) by bench/gradients/compare.py, which runs
// them interleaved and prints medians and ratios. Runs with OMP_WAIT_POLICY=passive unless it
// is set, and with glibc's malloc told to keep freed memory (see main).
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <exception>
#include <memory>
#include <random>
#include <string>

#include "bench/common/bench_common.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/binding.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/oracle/generator.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

// The inputs of `grad` at the op's example: forward inputs as the oracle draws them, d<y> shaped
// like the forward output y (in [-1, 1]).
TensorMap example_inputs(const OpDef& op, const Program& grad) {
  oracle::Case c = oracle::fixed_case(op, DType::f32, 1, op.example_shapes, op.example_params);
  TensorMap all = oracle::make_inputs(op, c);
  Program fwd = forward_program(op, DType::f32);
  ir::Binding b = ir::bind(fwd, all, op.example_params);
  std::mt19937 rng{2};
  std::uniform_real_distribution<float> u(-1, 1);
  for (size_t t = 0; t < fwd.tensors.size(); ++t) {
    if (fwd.tensors[t].role != ir::Role::output) continue;
    Tensor dy(fwd.tensors[t].dtype, b.shapes[t]);  // an i32 output's (argmax) stays 0
    if (dy.dtype == DType::f32)
      for (int64_t i = 0; i < dy.numel(); ++i) dy.data<float>()[i] = u(rng);
    all["d" + fwd.tensors[t].name] = std::move(dy);
  }
  TensorMap used;
  for (int t : grad.inputs()) used[grad.tensors[t].name] = all.at(grad.tensors[t].name);
  return used;
}

void gradient(benchmark::State& state, const OpDef* op) {
  CCompileOptions o;
  o.threads = int(state.range(0));
  std::unique_ptr<Executable> exe;
  TensorMap inputs;
  try {
    Program grad = optimize(gradient_program(*op, DType::f32));
    exe = compile_c(grad, o);
    inputs = example_inputs(*op, grad);
    exe->run(inputs, op->example_params);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  for (auto _ : state) {
    TensorMap out = exe->run(inputs, op->example_params);
    benchmark::DoNotOptimize(out.begin()->second.bytes.data());
  }
  state.counters["threads"] = o.threads;
}

// Every built-in op with a float input that gets a gradient.
void register_all() {
  for (const OpDef& op : all_ops()) {
    if (op.origin != OpOrigin::builtin) continue;
    bool any = false;
    for (auto& in : op.inputs) any |= !in.is_index && in.differentiable;
    if (!any) continue;
    benchmark::RegisterBenchmark(("grad/" + op.name).c_str(), gradient, &op)
        ->Arg(1)
        ->Arg(0)
        ->ArgName("threads")
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace uops

// run() allocates its outputs on every call. glibc's malloc gives a large freed block back to the
// system (munmap, or trimming the heap's top) depending on where earlier allocations left it, and
// the next run faults every page in again: from one process to the next the same gradient took
// 10 or 200 us (add's, at 256 x 256). Keeping freed memory measures the gradient, not that.
int main(int argc, char** argv) {
  uops::bench::restart_with_passive_omp(argv);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: blocks below it come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  uops::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
