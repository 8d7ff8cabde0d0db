// Generated C against Eigen on the workloads of the brief, single-threaded and on every core,
// plus compile latency (cold and cache hit) and interpreter against C. Each C benchmark times
// Eigen on the same inputs first and reports `C/Eigen`, Eigen's time over C's (above 1: C is
// faster). Runs with OMP_WAIT_POLICY=passive unless it is set (see main).
#include <benchmark/benchmark.h>
#include <omp.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "uops/backends/c/c_backend.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMatrix>;
using ConstMap = Eigen::Map<const RowMatrix>;

Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::f32, std::move(shape));
  std::mt19937 rng{static_cast<uint32_t>(seed)};
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

int threads_for(int arg) {
  return arg == 0 ? int(std::thread::hardware_concurrency()) : arg;
}

template <typename F>
double seconds_per_run(F&& f) {
  f();
  int reps = 0;
  auto start = std::chrono::steady_clock::now();
  double elapsed = 0;
  do {
    f();
    ++reps;
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } while (elapsed < 0.3);
  return elapsed / reps;
}

struct Workload {
  Program program;
  TensorMap inputs;
  ParamMap params;
  std::function<void()> eigen;  // writes into buffers it owns
};

Workload elementwise() {
  Graph g;
  Node x = g.input("x", 1, DType::f32), y = g.input("y", 1, DType::f32);
  Node t = g.binary(BinaryOp::sub, g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, y), x), y);
  g.output("z", g.binary(BinaryOp::max, g.binary(BinaryOp::mul, t, t), x));
  Workload w;
  w.program = optimize(lower(g));
  const int64_t n = 1 << 20;
  w.inputs = {{"x", random_tensor({n}, 1)}, {"y", random_tensor({n}, 2)}};
  auto out = std::make_shared<Eigen::ArrayXf>(n);
  const float* xp = w.inputs["x"].data<float>();
  const float* yp = w.inputs["y"].data<float>();
  w.eigen = [out, xp, yp, n] {
    Eigen::Map<const Eigen::ArrayXf> x(xp, n), y(yp, n);
    auto t = x * y + x - y;
    *out = (t * t).max(x);
    benchmark::DoNotOptimize(out->data());
  };
  return w;
}

Workload softmax() {
  Workload w;
  w.program = optimize(forward_program(find_op("softmax"), DType::f32));
  const int64_t m = 4096, n = 1024;
  w.inputs = {{"x", random_tensor({m, n}, 3)}};
  auto out = std::make_shared<RowMatrix>(m, n);
  const float* xp = w.inputs["x"].data<float>();
  w.eigen = [out, xp, m, n] {
    ConstMap x(xp, m, n);
    Eigen::VectorXf mx = x.rowwise().maxCoeff();
    out->array() = (x.colwise() - mx).array().exp();
    Eigen::VectorXf s = out->rowwise().sum();
    out->array().colwise() /= s.array();
    benchmark::DoNotOptimize(out->data());
  };
  return w;
}

Workload layernorm() {
  Workload w;
  w.program = optimize(forward_program(find_op("layernorm"), DType::f32));
  const int64_t m = 4096, n = 1024;
  w.inputs = {{"x", random_tensor({m, n}, 4)},
              {"gamma", random_tensor({n}, 5)},
              {"beta", random_tensor({n}, 6)}};
  auto out = std::make_shared<RowMatrix>(m, n);
  const float* xp = w.inputs["x"].data<float>();
  const float* gp = w.inputs["gamma"].data<float>();
  const float* bp = w.inputs["beta"].data<float>();
  w.eigen = [out, xp, gp, bp, m, n] {
    ConstMap x(xp, m, n);
    Eigen::Map<const Eigen::RowVectorXf> gamma(gp, n), beta(bp, n);
    Eigen::VectorXf mean = x.rowwise().mean();
    out->noalias() = x.colwise() - mean;
    Eigen::ArrayXf inv = ((out->array().square().rowwise().sum() / float(n)) + 1e-5f).rsqrt();
    out->array().colwise() *= inv;
    out->array().rowwise() *= gamma.array();
    out->array().rowwise() += beta.array();
    benchmark::DoNotOptimize(out->data());
  };
  return w;
}

Workload matmul() {
  Workload w;
  w.program = optimize(forward_program(find_op("matmul"), DType::f32));
  const int64_t n = 512;
  w.inputs = {{"a", random_tensor({n, n}, 7)}, {"b", random_tensor({n, n}, 8)}};
  auto out = std::make_shared<RowMatrix>(n, n);
  const float* ap = w.inputs["a"].data<float>();
  const float* bp = w.inputs["b"].data<float>();
  w.eigen = [out, ap, bp, n] {
    out->noalias() = ConstMap(ap, n, n) * ConstMap(bp, n, n);
    benchmark::DoNotOptimize(out->data());
  };
  return w;
}

// Eigen's fastest route for a small-kernel NHWC convolution: im2col, then one GEMM.
Workload conv2d() {
  Workload w;
  w.program = optimize(forward_program(find_op("conv2d"), DType::f32));
  const int64_t N = 8, H = 56, W = 56, C = 64, O = 64, K = 3;
  w.inputs = {{"x", random_tensor({N, H, W, C}, 9)}, {"w", random_tensor({O, K, K, C}, 10)}};
  w.params = {{"stride", 1}, {"pad", 1}, {"dilation", 1}};
  auto cols = std::make_shared<RowMatrix>(N * H * W, K * K * C);
  auto out = std::make_shared<RowMatrix>(N * H * W, O);
  const float* xp = w.inputs["x"].data<float>();
  const float* wp = w.inputs["w"].data<float>();
  w.eigen = [=] {
    for (int64_t n = 0; n < N; ++n)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t x = 0; x < W; ++x) {
          float* row = cols->data() + ((n * H + h) * W + x) * K * K * C;
          for (int64_t kh = 0; kh < K; ++kh)
            for (int64_t kw = 0; kw < K; ++kw) {
              int64_t ih = h + kh - 1, iw = x + kw - 1;
              float* dst = row + (kh * K + kw) * C;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                std::fill(dst, dst + C, 0.0f);
              else
                std::copy_n(xp + ((n * H + ih) * W + iw) * C, C, dst);
            }
        }
    out->noalias() = *cols * ConstMap(wp, O, K * K * C).transpose();
    benchmark::DoNotOptimize(out->data());
  };
  return w;
}

void run_against_eigen(benchmark::State& state, Workload (*make)()) {
  int threads = threads_for(int(state.range(0)));
  Workload w = make();
  CCompileOptions o;
  o.threads = threads;
  auto exe = compile_c(w.program, o);
  Eigen::setNbThreads(threads);
  omp_set_num_threads(threads);
  double eigen = seconds_per_run(w.eigen);
  double c = 0;
  int reps = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    TensorMap out = exe->run(w.inputs, w.params);
    c += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++reps;
    benchmark::DoNotOptimize(out);
  }
  state.counters["threads"] = threads;
  state.counters["eigen_ms"] = eigen * 1e3;
  state.counters["C/Eigen"] = eigen / (c / reps);
}

#define AGAINST_EIGEN(name)             \
  void BM_##name(benchmark::State& s) { \
    run_against_eigen(s, name);         \
  }                                     \
  BENCHMARK(BM_##name)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
AGAINST_EIGEN(elementwise)
AGAINST_EIGEN(softmax)
AGAINST_EIGEN(layernorm)
AGAINST_EIGEN(matmul)
AGAINST_EIGEN(conv2d)

// Compile latency of the optimized conv2d program: cold (an empty cache) and a cache hit.
void BM_compile(benchmark::State& state) {
  bool cold = state.range(0) == 1;
  Program p = optimize(forward_program(find_op("conv2d"), DType::f32));
  auto dir = std::filesystem::temp_directory_path() / "uops-bench-cache";
  setenv("UOPS_CACHE_DIR", dir.c_str(), 1);
  compile_c(p);
  for (auto _ : state) {
    if (cold) {
      state.PauseTiming();
      std::filesystem::remove_all(dir);
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(compile_c(p));
  }
  std::filesystem::remove_all(dir);
  unsetenv("UOPS_CACHE_DIR");
  state.SetLabel(cold ? "cold" : "cache hit");
}
BENCHMARK(BM_compile)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// The interpreter against generated C (one thread) on softmax 512x1024.
void BM_interp_vs_c(benchmark::State& state) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f32));
  TensorMap in = {{"x", random_tensor({512, 1024}, 11)}};
  CCompileOptions o;
  o.threads = 1;
  auto exe = compile_c(p, o);
  double c = seconds_per_run([&] { benchmark::DoNotOptimize(exe->run(in)); });
  double interp = 0;
  int reps = 0;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(interpret(p, in));
    interp += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++reps;
  }
  state.counters["c_ms"] = c * 1e3;
  state.counters["interp/C"] = (interp / reps) / c;
}
BENCHMARK(BM_interp_vs_c)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace
}  // namespace uops

// libgomp reads its wait policy once, when it loads, before main: unless the caller chose one,
// the benchmark restarts itself with a passive policy, as c_backend.h advises for shared
// machines (spinning workers take the core the next run's serial part needs).
int main(int argc, char** argv) {
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
