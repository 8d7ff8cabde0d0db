// The CUDA backend and glue on a device (uops/backends/cuda_runtime_nodes.h, CUDA executor):
//   Bandwidth/{elementwise,softmax}  achieved GB/s (bytes in + out once) of the kernels, and in
//                                    the same iteration a device-to-device copy of as many bytes
//                                    (copy_GB/s); of_copy = their ratio (1: at the copy's speed)
//   Matmul/<n>                       GFLOP/s of an n x n x n f32 matmul
//   LaunchOverhead/<graph>           time per node of a chain of 64 one-element kernels, each
//                                    step a zero node and a kernel: enqueued node by node (0)
//                                    or replayed as one CUDA graph (1)
//   ForkJoin/<branches>/<streams>    branches of 4 elementwise steps from one input, summed at
//                                    the end, on as many streams as branches or on one
// Every run includes waiting for the device. Without a device (or NVRTC), every benchmark
// reports SkipWithError("no CUDA device ...").
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "backends/cuda/cuda_device.h"
#include "bench/common/bench_common.h"
#include "uops/backends/cuda_runtime_nodes.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/runtime.h"

namespace uops {
namespace {

using Clock = std::chrono::steady_clock;

bool skip_without_device(benchmark::State& state) {
  std::string why = cuda_unavailable_reason();
  if (why.empty() && !runtime::CudaExecutor::available()) why = "the executor finds none";
  if (why.empty()) return false;
  state.SkipWithError(("no CUDA device (" + why + ")").c_str());
  return true;
}

using bench::random_tensor;

// z = max((x * y + x - y)^2, x): bench_backends' elementwise workload.
Program elementwise_program() {
  Graph g;
  Node x = g.input("x", 1, DType::f32), y = g.input("y", 1, DType::f32);
  Node t = g.binary(BinaryOp::sub, g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, y), x), y);
  g.output("z", g.binary(BinaryOp::max, g.binary(BinaryOp::mul, t, t), x));
  return optimize(lower(g));
}

// The chain's nodes on a CUDA executor, kept together.
struct OnDevice {
  CudaChainNodes nodes;
  runtime::CudaExecutor executor;

  OnDevice(std::vector<ChainStep> steps, TensorMap inputs, size_t streams, bool graph)
      : nodes(std::move(steps), std::move(inputs)), executor(build(nodes, streams), {0, graph}) {}

  static runtime::Graph build(const CudaChainNodes& nodes, size_t streams) {
    runtime::GraphBuilder builder;
    nodes.add_to(builder);
    return std::move(builder).build({streams});
  }
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// x -> b0 -> b1 -> ... : `length` copies of one element.
std::vector<ChainStep> copy_chain(int length) {
  std::vector<ChainStep> steps;
  for (int i = 0; i < length; ++i)
    steps.push_back({"copy " + std::to_string(i),
                     copy_program(1, DType::f32),
                     {{"x", i ? "b" + std::to_string(i - 1) : "x"}, {"y", "b" + std::to_string(i)}},
                     {}});
  return steps;
}

// `branches` chains of 4 elementwise steps from "x" (and "y"), summed pairwise at the end.
std::vector<ChainStep> fork_join_chain(int branches) {
  Program step = elementwise_program();
  Graph add_graph;
  Node a = add_graph.input("a", 1, DType::f32), b = add_graph.input("b", 1, DType::f32);
  add_graph.output("c", add_graph.binary(BinaryOp::add, a, b));
  Program add = optimize(lower(add_graph));
  std::vector<ChainStep> steps;
  for (int br = 0; br < branches; ++br) {
    std::string prev = "x";
    for (int k = 0; k < 4; ++k) {
      std::string out = "b" + std::to_string(br) + "." + std::to_string(k);
      steps.push_back({out, step, {{"x", prev}, {"y", "y"}, {"z", out}}, {}});
      prev = out;
    }
  }
  std::string sum = "b0.3";
  for (int br = 1; br < branches; ++br) {
    std::string out = "sum" + std::to_string(br);
    steps.push_back(
        {out, add, {{"a", sum}, {"b", "b" + std::to_string(br) + ".3"}, {"c", out}}, {}});
    sum = out;
  }
  return steps;
}

void Bandwidth(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const bool softmax = state.range(0) == 1;
  state.SetLabel(softmax ? "softmax 4096x1024 f32" : "elementwise 16M f32");
  std::vector<ChainStep> steps;
  TensorMap inputs;
  size_t moved = 0;
  if (softmax) {
    steps = {{"softmax", optimize(forward_program(find_op("softmax"), DType::f32)), {}, {}}};
    inputs = {{"x", random_tensor({4096, 1024}, 1)}};
    moved = 2 * inputs["x"].bytes.size();
  } else {
    const int64_t n = int64_t(1) << 24;
    steps = {{"elementwise", elementwise_program(), {}, {}}};
    inputs = {{"x", random_tensor({n}, 1)}, {"y", random_tensor({n}, 2)}};
    moved = 3 * inputs["x"].bytes.size();
  }
  OnDevice d(steps, inputs, 1, false);
  std::shared_ptr<cuda::Device> device = cuda::driver_device(nullptr);
  // The copy reads and writes half the bytes each, so it moves as many as the kernels.
  size_t half = moved / 2;
  cuda::DeviceAddress from = device->allocate(half, "from", 1),
                      to = device->allocate(half, "to", 1);
  device->zero(from, half, nullptr);
  d.executor.run();  // warm up
  double uops_s = 0, copy_s = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    d.executor.run();
    double t = seconds_since(start);
    state.SetIterationTime(t);
    uops_s += t;
    start = Clock::now();
    device->copy(to, from, half, nullptr);
    device->synchronize(nullptr);
    copy_s += seconds_since(start);
  }
  device->release(from);
  device->release(to);
  double n = double(state.iterations());
  state.counters["GB/s"] = moved * n / uops_s / 1e9;
  state.counters["copy_GB/s"] = moved * n / copy_s / 1e9;
  state.counters["of_copy"] = copy_s / uops_s;
}
BENCHMARK(Bandwidth)->Arg(0)->Arg(1)->UseManualTime()->Unit(benchmark::kMicrosecond);

void Matmul(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const int64_t n = state.range(0);
  OnDevice d({{"matmul", optimize(forward_program(find_op("matmul"), DType::f32)), {}, {}}},
             {{"a", random_tensor({n, n}, 1)}, {"b", random_tensor({n, n}, 2)}}, 1, false);
  d.executor.run();
  for (auto _ : state) d.executor.run();
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * double(n) * n * n * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Matmul)->Arg(256)->Arg(1024)->Arg(2048)->UseRealTime()->Unit(benchmark::kMicrosecond);

void LaunchOverhead(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const bool graph = state.range(0) == 1;
  state.SetLabel(graph ? "CUDA graph replay" : "node by node");
  std::vector<ChainStep> steps = copy_chain(64);
  OnDevice d(steps, {{"x", random_tensor({1}, 1)}}, 1, graph);
  d.executor.run();
  for (auto _ : state) d.executor.run();
  state.counters["ns/node"] = benchmark::Counter(
      double(d.executor.graph().size()) * 1e-9,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(LaunchOverhead)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

void ForkJoin(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const int branches = int(state.range(0));
  const size_t streams = size_t(state.range(1));
  const int64_t n = int64_t(1) << 20;
  std::vector<ChainStep> steps = fork_join_chain(branches);
  OnDevice d(steps, {{"x", random_tensor({n}, 1)}, {"y", random_tensor({n}, 2)}}, streams, false);
  d.executor.run();
  for (auto _ : state) d.executor.run();
  state.counters["streams"] = double(d.executor.graph().schedule().streams.size());
}
BENCHMARK(ForkJoin)->ArgsProduct({{2, 3, 4}, {1, 4}})->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace uops
