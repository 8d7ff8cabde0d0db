// Many small independent ops on the CPU: the four gates of an LSTM cell over several layers,
// forward and gradient, as one chain of uop programs (linear, sigmoid/tanh, the cell update, and
// each gate's linear gradient), on two threads:
//   Serial      the runtime nodes (ChainNodes) on one stream (the blocks one after another);
//   Streams     the runtime nodes on two CPU streams (uops' scheduled runtime);
// and, with the wavefront unit's kernels (compiled with OpenMP, so their innermost reductions
// are SIMD reductions, which ChainNodes' kernels, built without OpenMP, are not):
//   PerOp       one OpenMP region per op (wavefront mode `separate`: one launch per op);
//   WaveStreams each wavefront's ops as runtime nodes on two streams (mode `streams`);
//   Single      every op on one thread (mode `single`);
//   Fused       one OpenMP region per wavefront (mode `fused`);
//   Policy      each wavefront in the mode measured fastest at the first run (fused,
//               separate, streams, or single: the fused function on one thread).
// Compare within one run (interleaved repetitions): the machine's load moves every figure.
// OMP_WAIT_POLICY=passive is the setting for a shared machine (see CCompileOptions::threads).
// There is no GPU figure here: the fused CUDA kernels are tested through the CUDA emulation.
#include <benchmark/benchmark.h>

#include <random>

#include "uops/backends/wavefront.h"
#include "uops/runtime.h"
#include "uops/uops.h"

namespace uops {
namespace {

constexpr int kThreads = 2;

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937_64& rng) {
  Tensor t(DType::f32, std::move(shape));
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// c' = f * c + i * g, h = o * tanh(c').
Program cell_program() {
  Graph g;
  Node i = g.input("i", 2, DType::f32), f = g.input("f", 2, DType::f32);
  Node gg = g.input("g", 2, DType::f32), o = g.input("o", 2, DType::f32);
  Node c = g.input("c", 2, DType::f32);
  Node next =
      g.binary(BinaryOp::add, g.binary(BinaryOp::mul, f, c), g.binary(BinaryOp::mul, i, gg));
  g.output("c_next", next);
  g.output("h", g.binary(BinaryOp::mul, o, g.unary(UnaryOp::tanh, next)));
  return optimize(lower(g));
}

struct Lstm {
  std::vector<ChainStep> steps;
  TensorMap inputs;
};

// `layers` cells of `batch` rows and `hidden` units; layer l reads layer l-1's h.
Lstm lstm(int layers, int64_t batch, int64_t hidden) {
  std::mt19937_64 rng(1);
  Program linear = optimize(forward_program(find_op("linear"), DType::f32));
  Program linear_grad = optimize(gradient_program(find_op("linear"), DType::f32));
  Program sigmoid = optimize(forward_program(find_op("sigmoid"), DType::f32));
  Program tanh = optimize(forward_program(find_op("tanh"), DType::f32));
  Program cell = cell_program();
  Lstm out;
  out.inputs["x"] = random_tensor({batch, hidden}, rng);
  std::vector<ChainStep> gradients;
  const char* gates = "ifgo";
  for (int l = 0; l < layers; ++l) {
    std::string L = std::to_string(l), in = l == 0 ? "x" : "h" + std::to_string(l - 1);
    out.inputs["c" + L] = random_tensor({batch, hidden}, rng);
    for (int k = 0; k < 4; ++k) {
      std::string G = L + gates[k];
      out.inputs["w" + G] = random_tensor({hidden, hidden}, rng);
      out.inputs["b" + G] = random_tensor({hidden}, rng);
      out.inputs["dz" + G] = random_tensor({batch, hidden}, rng);
      out.steps.push_back(
          {"linear " + G, linear, {{"x", in}, {"w", "w" + G}, {"b", "b" + G}, {"y", "z" + G}}, {}});
      gradients.push_back({"linear gradient " + G,
                           linear_grad,
                           {{"x", in},
                            {"w", "w" + G},
                            {"b", "b" + G},
                            {"dy", "dz" + G},
                            {"dx", "dx" + G},
                            {"dw", "dw" + G},
                            {"db", "db" + G}},
                           {}});
    }
    for (int k = 0; k < 4; ++k) {
      std::string G = L + gates[k];
      out.steps.push_back({"gate " + G,
                           k == 2 ? tanh : sigmoid,
                           {{"x", "z" + G}, {"y", std::string(1, gates[k]) + L}},
                           {}});
    }
    out.steps.push_back({"cell " + L,
                         cell,
                         {{"i", "i" + L},
                          {"f", "f" + L},
                          {"g", "g" + L},
                          {"o", "o" + L},
                          {"c", "c" + L},
                          {"c_next", "c_next" + L},
                          {"h", "h" + L}},
                         {}});
  }
  for (ChainStep& g : gradients) out.steps.push_back(std::move(g));
  return out;
}

void Runtime(benchmark::State& state, size_t streams) {
  Lstm m = lstm(int(state.range(0)), state.range(1), state.range(2));
  ChainNodes nodes(m.steps, m.inputs);
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({streams}));
  for (auto _ : state) executor.run();
  state.counters["nodes"] = double(executor.graph().size());
}

void Wavefronts(benchmark::State& state, std::optional<WaveMode> mode) {
  Lstm m = lstm(int(state.range(0)), state.range(1), state.range(2));
  WavefrontOptions options;
  options.threads = kThreads;
  options.mode = mode;
  WavefrontChain chain(m.steps, m.inputs, options);
  chain.run();  // compiles and, for the policy, measures
  for (auto _ : state) chain.run();
  state.counters["wavefronts"] = double(chain.wavefronts().size());
  if (!mode)  // how many wavefronts the policy put in each mode
    for (WaveMode w : chain.modes()) state.counters[wave_mode_name(w)] += 1;
}

void Serial(benchmark::State& s) {
  Runtime(s, 1);
}
void Streams(benchmark::State& s) {
  Runtime(s, kThreads);
}
void PerOp(benchmark::State& s) {
  Wavefronts(s, WaveMode::separate);
}
void WaveStreams(benchmark::State& s) {
  Wavefronts(s, WaveMode::streams);
}
void Single(benchmark::State& s) {
  Wavefronts(s, WaveMode::single);
}
void Fused(benchmark::State& s) {
  Wavefronts(s, WaveMode::fused);
}
void Policy(benchmark::State& s) {
  Wavefronts(s, std::nullopt);
}

// {layers, batch, hidden}
#define LSTM_SIZES Args({4, 8, 32})->Args({4, 16, 128})->Unit(benchmark::kMicrosecond)
BENCHMARK(Serial)->LSTM_SIZES;
BENCHMARK(Streams)->LSTM_SIZES;
BENCHMARK(PerOp)->LSTM_SIZES;
BENCHMARK(WaveStreams)->LSTM_SIZES;
BENCHMARK(Single)->LSTM_SIZES;
BENCHMARK(Fused)->LSTM_SIZES;
BENCHMARK(Policy)->LSTM_SIZES;

}  // namespace
}  // namespace uops
