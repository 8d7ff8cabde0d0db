// Wavefront fusion of chains (uops/backends/wavefront.h): random chains of forward programs, their
// gradients and an in-place update run fused, as separate regions, as streams and as the measured
// policy chooses, and give what interpret_chain gives, exactly; the fused CUDA kernels give it
// too through the CUDA emulation, with its race and bounds detector on.
#include "uops/backends/wavefront.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#ifdef UOPS_TEST_NVRTC
#include <nvrtc.h>
#endif

#include "support/cuda_emulation.h"
#include "support/random_graph.h"
#include "uops/uops.h"

namespace uops {
namespace {

struct RandomChain {
  std::vector<ChainStep> steps;
  TensorMap inputs;
};

Tensor random_tensor(DType dtype, std::vector<int64_t> shape, std::mt19937_64& rng) {
  Tensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// `cases` random graphs as forward steps, each input bound at random to an earlier step's output
// of its dtype and shape or to a fresh input; the gradients of the smooth ones, in reverse order;
// then the first gradient copied back onto its input (w = dw: a write after reads).
RandomChain random_chain(uint64_t seed, int cases) {
  std::mt19937_64 rng(seed);
  RandomChain out;
  TensorMap known;  // every buffer so far, with its value: outputs are matched by shape
  std::vector<ChainStep> gradients;
  std::pair<std::string, std::string> update;  // gradient buffer -> the buffer it overwrites
  for (int k = 0; k < cases; ++k) {
    RandomGraphOptions options;
    options.dtype = DType::f64;
    options.smooth = k % 2 == 0;
    options.max_nodes = 8;
    RandomCase c = random_case(seed * 1000 + uint64_t(k), options);
    std::string prefix = "c" + std::to_string(k) + ".";
    std::map<std::string, std::string> buffers;
    std::vector<std::string> wrt;
    for (auto& [name, value] : c.inputs) {
      std::vector<std::string> matches;  // earlier steps' buffers, each bound once here
      for (auto& [buffer, t] : known)
        if (t.dtype == value.dtype && t.shape == value.shape && buffer.rfind(prefix, 0) != 0 &&
            std::none_of(buffers.begin(), buffers.end(),
                         [&](auto& bound) { return bound.second == buffer; }))
          matches.push_back(buffer);
      if (!matches.empty() && rng() % 2) {
        buffers[name] = matches[rng() % matches.size()];
      } else {
        buffers[name] = prefix + name;
        out.inputs[prefix + name] = value;
        known[prefix + name] = value;
      }
      if (is_float(value.dtype)) wrt.push_back(name);
    }
    for (auto& [name, node] : c.graph.outputs()) buffers[name] = prefix + name;
    ChainStep forward{prefix + "forward", optimize(lower(c.graph)), buffers, c.params};
    interpret_chain({forward}, known);
    out.steps.push_back(forward);
    if (!options.smooth || wrt.empty()) continue;
    std::map<std::string, std::string> grad_buffers = buffers;
    for (auto& [name, node] : c.graph.outputs()) {
      grad_buffers["d" + name] = prefix + "d" + name;
      out.inputs[prefix + "d" + name] =
          random_tensor(known.at(prefix + name).dtype, known.at(prefix + name).shape, rng);
    }
    for (auto& name : wrt) grad_buffers["d" + name] = prefix + "d" + name;
    gradients.insert(
        gradients.begin(),
        ChainStep{prefix + "gradient", optimize(gradient(c.graph, wrt)), grad_buffers, c.params});
    if (update.first.empty()) update = {prefix + "d" + wrt[0], buffers[wrt[0]]};
  }
  for (ChainStep& g : gradients) out.steps.push_back(std::move(g));
  if (!update.first.empty()) {
    const Tensor& target = known.at(update.second);
    out.steps.push_back({"update",
                         copy_program(int(target.shape.size()), target.dtype),
                         {{"x", update.first}, {"y", update.second}},
                         {}});
  }
  return out;
}

// Equal values (NaN equal to NaN, as C and the interpreter may differ in a NaN's payload or in
// the sign of a zero).
bool same_values(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape) return false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (a.get(i) != b.get(i) && !(std::isnan(a.get(i)) && std::isnan(b.get(i)))) return false;
  return true;
}

double max_difference(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get(i), y = b.get(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(x)));
  }
  return worst;
}

// Exact, and quick to compile: these tests check the schedule and the OpenMP worksharing, which
// -O1 keeps; the C backend's own tests cover its -O3 kernels.
CCompileOptions exact() {
  CCompileOptions options;
  options.reassociate = false;
  options.extra_flags = {"-O1"};
  return options;
}

constexpr int kSeeds = 4;

TEST(Wavefront, RandomChainsMatchTheInterpreterInEveryMode) {
  int compared = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RandomChain c = random_chain(seed, 5);
    TensorMap expected = c.inputs;
    bool raises = false;
    try {
      interpret_chain(c.steps, expected);
    } catch (const Error&) {
      raises = true;
    }
    for (std::optional<WaveMode> mode :
         {std::optional<WaveMode>(WaveMode::fused), std::optional<WaveMode>(WaveMode::separate),
          std::optional<WaveMode>(WaveMode::streams), std::optional<WaveMode>(WaveMode::single),
          std::optional<WaveMode>()}) {
      WavefrontOptions options;
      options.compile = exact();
      options.threads = 3;  // more threads than cores: shares interleave
      options.mode = mode;
      options.max_ops = seed % 2 ? 32 : 2;
      WavefrontChain chain(c.steps, c.inputs, options);
      std::string what =
          "seed " + std::to_string(seed) + " mode " + (mode ? wave_mode_name(*mode) : "measured");
      if (raises) {
        EXPECT_THROW(chain.run(), Error) << what;
        continue;
      }
      chain.run();
      for (auto& [name, tensor] : expected)
        ASSERT_TRUE(same_values(tensor, chain.read(name))) << what << " buffer " << name;
      ++compared;
    }
  }
  EXPECT_GE(compared, 3 * 5);
}

TEST(Wavefront, IndependentStepsShareAWavefrontAndDependentOnesDoNot) {
  const OpDef& add = find_op("add");
  Program p = optimize(forward_program(add, DType::f64));
  ASSERT_EQ(p.blocks.size(), 1u);
  std::mt19937_64 rng(3);
  TensorMap inputs = {{"x", random_tensor(DType::f64, {4, 5}, rng)},
                      {"y", random_tensor(DType::f64, {4, 5}, rng)}};
  // Four independent adds, then one reading two of them, then a write over one they read.
  std::vector<ChainStep> steps;
  for (int i = 0; i < 4; ++i)
    steps.push_back({"add" + std::to_string(i), p, {{"z", "z" + std::to_string(i)}}, {}});
  steps.push_back({"sum", p, {{"x", "z0"}, {"y", "z1"}, {"z", "s"}}, {}});
  steps.push_back({"overwrite", p, {{"x", "z2"}, {"y", "z3"}, {"z", "z0"}}, {}});
  WavefrontOptions options;
  options.compile = exact();
  options.mode = WaveMode::fused;
  WavefrontChain chain(steps, inputs, options);
  auto waves = chain.wavefronts();
  // add writes z in full: no zero fill. Wave 0: the four adds; 1: sum; 2: the overwrite of z0,
  // which sum reads.
  ASSERT_EQ(waves.size(), 3u);
  EXPECT_EQ(waves[0].size(), 4u);
  ASSERT_EQ(waves[1].size(), 1u);
  EXPECT_EQ(waves[1][0].step, 4);
  ASSERT_EQ(waves[2].size(), 1u);
  EXPECT_EQ(waves[2][0].step, 5);
  options.max_ops = 3;
  EXPECT_EQ(WavefrontChain(steps, inputs, options).wavefronts().size(), 4u);
  chain.run();
  TensorMap expected = inputs;
  interpret_chain(steps, expected);
  for (auto& [name, tensor] : expected) EXPECT_TRUE(same_values(tensor, chain.read(name))) << name;
}

TEST(Wavefront, MeasuredModesAreCachedAndReused) {
  RandomChain c = random_chain(11, 3);
  WavefrontOptions options;
  options.compile = exact();
  options.threads = 1;  // quick to measure on a loaded machine
  options.remeasure = true;
  WavefrontChain first(c.steps, c.inputs, options);
  std::vector<std::vector<double>> times = first.measured_ns();
  ASSERT_EQ(times.size(), first.wavefronts().size());
  for (auto& t : times) EXPECT_EQ(t.size(), 4u);
  options.remeasure = false;
  WavefrontChain second(c.steps, c.inputs, options);
  EXPECT_EQ(second.measured_ns(), times);  // read back, not measured again
  EXPECT_EQ(second.modes(), first.modes());
}

TEST(Wavefront, AFailingKernelNamesItsStep) {
  Graph g;
  g.param("k");
  Node x = g.input("x", 1, DType::f64);
  g.output("y", g.reindex(x, {"dA0"}, {"i0 / $k"}));
  Program p = lower(g);
  std::mt19937_64 rng(4);
  TensorMap inputs = {{"x", random_tensor(DType::f64, {4}, rng)}};
  for (WaveMode mode : {WaveMode::fused, WaveMode::separate, WaveMode::streams, WaveMode::single}) {
    WavefrontOptions options;
    options.compile = exact();
    options.mode = mode;
    WavefrontChain chain({{"ok", p, {{"y", "y0"}}, {{"k", 1}}}, {"div", p, {}, {{"k", 0}}}}, inputs,
                         options);
    try {
      chain.run();
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("step 'div': division by zero"), std::string::npos)
          << e.what();
    }
  }
}

// The fused kernels of each wavefront through the emulation: buffers other than the chain's
// inputs start as NaN, so a missing zero fill shows; every access is checked for races.
TEST(Wavefront, CudaFusedKernelsMatchTheInterpreterInEmulation) {
  // One chain, one compile of the emulation (its host C++ is slow to build).
  RandomChain c = random_chain(1, 9);
  TensorMap expected = c.inputs;
  interpret_chain(c.steps, expected);
  WavefrontChain chain(c.steps, c.inputs);
  CudaWavefronts cuda = chain.cuda();
  // Many ops per kernel, some of them cooperative reductions (barriers).
  size_t tasks = 0, barriers = 0;
  for (auto& k : cuda.kernels) barriers += k.barriers;
  for (auto& w : chain.wavefronts()) tasks += w.size();
  EXPECT_GE(tasks, 2 * cuda.kernels.size());
  EXPECT_GE(barriers, 1u);
  for (auto& k : cuda.kernels)
    for (size_t a = 0; a < k.buffers.size(); ++a)
      if (!c.inputs.count(k.names[a]))
        std::memset(k.buffers[a]->bytes.data(), 0xff, k.buffers[a]->bytes.size());
  cuda::run_wavefronts(*testing::emulated_cuda_device(), cuda);
  for (auto& [name, tensor] : expected)
    EXPECT_LE(max_difference(tensor, chain.read(name)), 1e-9) << name;
}

// y[j] = y[j - 1] + x[j] for j in [1, n): no iteration is independent, so its kernel is serial
// (one thread of one block runs the nest).
Program running_sum() {
  Program p;
  p.tensors.push_back({"x", DType::f64, {ir::idx::dim(0, 0)}, ir::Role::input});
  p.tensors.push_back({"y", DType::f64, {ir::idx::dim(0, 0)}, ir::Role::output});
  ir::Loop l;
  l.var = p.num_vars++;
  l.start = ir::idx::constant(1);
  l.end = ir::idx::dim(0, 0);
  ir::Index j = ir::idx::var(l.var), before = ir::idx::sub(j, ir::idx::constant(1));
  ir::Stmt s;
  s.tensor = 1;
  s.index = {j};
  s.value = ir::val::binary(BinaryOp::add, ir::val::load(1, {before}), ir::val::load(0, {j}));
  l.stmts.push_back(s);
  p.blocks.push_back({{l}, "running sum"});
  return p;
}

// A serial kernel beside a 256-thread one in one wavefront kernel runs in a block of 256 threads:
// its guard must keep all but one thread out. The scan waits for its zero fill, the second
// negation for the first: the two share wavefront 1.
std::vector<ChainStep> serial_beside_wide(TensorMap* inputs) {
  std::mt19937_64 rng(5);
  (*inputs)["a"] = random_tensor(DType::f64, {40}, rng);
  (*inputs)["b"] = random_tensor(DType::f64, {300}, rng);
  Graph g;
  g.output("z", g.unary(UnaryOp::neg, g.input("x", 1, DType::f64)));
  return {{"scan", running_sum(), {{"x", "a"}, {"y", "s"}}, {}},
          {"neg", lower(g), {{"x", "b"}, {"z", "n"}}, {}},
          {"neg again", lower(g), {{"x", "n"}, {"z", "m"}}, {}}};
}

TEST(Wavefront, CudaSerialKernelBesideAWideOneRunsOnce) {
  TensorMap inputs;
  std::vector<ChainStep> steps = serial_beside_wide(&inputs);
  TensorMap expected = inputs;
  interpret_chain(steps, expected);
  WavefrontChain chain(steps, inputs);
  bool beside = false;
  for (auto& wave : chain.wavefronts())
    for (auto& op : wave) beside |= op.step == 0 && op.block >= 0 && wave.size() > 1;
  ASSERT_TRUE(beside);
  CudaWavefronts cuda = chain.cuda();
  ASSERT_NE(cuda.source.find("if (vblock != 0 || threadIdx.x != 0) return;"), std::string::npos)
      << cuda.source;
  cuda::run_wavefronts(*testing::emulated_cuda_device(), cuda);
  for (auto& [name, tensor] : expected)
    EXPECT_LE(max_difference(tensor, chain.read(name)), 1e-12) << name;
}

TEST(Wavefront, CatchesASerialKernelRunByAWholeBlock) {
  TensorMap inputs;
  std::vector<ChainStep> steps = serial_beside_wide(&inputs);
  WavefrontChain chain(steps, inputs);
  auto weakened = [](const std::string& s) {
    std::string from = "if (vblock != 0 || threadIdx.x != 0) return;", out = s;
    size_t at = out.find(from);
    if (at == std::string::npos) return std::string("#error no serial guard\n");
    return out.replace(at, from.size(), "if (vblock != 0) return;");
  };
  try {
    cuda::run_wavefronts(*testing::emulated_cuda_device(weakened), chain.cuda());
    FAIL() << "no fault";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("race on"), std::string::npos) << e.what();
  }
}

// A kernel's error bits stop the run with the kernel's error.
TEST(Wavefront, CudaFusedKernelsRaiseTheirError) {
  Graph g;
  g.param("k");
  Node x = g.input("x", 1, DType::f64);
  g.output("y", g.reindex(x, {"dA0"}, {"i0 / $k"}));
  std::mt19937_64 rng(4);
  WavefrontChain chain({{"div", lower(g), {}, {{"k", 0}}}},
                       {{"x", random_tensor(DType::f64, {4}, rng)}});
  try {
    cuda::run_wavefronts(*testing::emulated_cuda_device(), chain.cuda());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
  }
}

// The same on the driver's device, through the user's entry.
TEST(Wavefront, CudaFusedKernelsMatchTheInterpreterOnTheDevice) {
  RandomChain c = random_chain(1, 9);
  TensorMap expected = c.inputs;
  interpret_chain(c.steps, expected);
  WavefrontChain chain(c.steps, c.inputs);
  if (std::string why = cuda_unavailable_reason(); !why.empty()) {
    try {
      chain.run_cuda();
      FAIL() << "run_cuda ran without a device";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "the CUDA backend cannot run: " + why);
    }
    GTEST_SKIP() << why;
  }
  chain.run_cuda();
  for (auto& [name, tensor] : expected)
    EXPECT_LE(max_difference(tensor, chain.read(name)), 1e-9) << name;
}

TEST(Wavefront, CudaFusedKernelsCompileWithNvrtc) {
#ifndef UOPS_TEST_NVRTC
  GTEST_SKIP() << "built without the CUDA toolkit (NVRTC)";
#else
  RandomChain c = random_chain(2, 5);
  std::string source = WavefrontChain(c.steps, c.inputs).cuda().source;
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "wavefront.cu", 0, nullptr, nullptr),
            NVRTC_SUCCESS);
  const char* options[] = {"--gpu-architecture=compute_80", "--std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
  size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  nvrtcDestroyProgram(&prog);
  EXPECT_EQ(r, NVRTC_SUCCESS) << log << "\n" << source;
#endif
}

}  // namespace
}  // namespace uops
