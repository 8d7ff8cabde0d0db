// Generated C (make_backend("c")'s default options but the thread count) against peers on the
// same inputs, at 1 thread and on every core: Eigen; OpenBLAS (cblas_sgemm) and oneDNN
// primitives where the build found them (UOPS_BENCH_OPENBLAS, UOPS_BENCH_ONEDNN); and a copy
// bound, a memcpy moving as many bytes as the workload's inputs and outputs together. Each
// benchmark iteration times uops and every peer once, interleaved; the counters are medians
// over the iterations of `C/<peer>`, the peer's time over uops' `run_into()` time, into outputs
// reused from call to call as the peers' are (above 1: uops is faster). Plus compile latency (cold
// and cache hit) and interpreter against C. Runs with OMP_WAIT_POLICY=passive unless it is set (see
// main).
#include <benchmark/benchmark.h>
#include <omp.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "bench/common/bench_common.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

#ifdef UOPS_BENCH_OPENBLAS
#include <cblas.h>
#endif
#ifdef UOPS_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace uops {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Map = Eigen::Map<RowMatrix>;
using ConstMap = Eigen::Map<const RowMatrix>;

using bench::random_tensor;

int threads_for(int arg) {
  return arg == 0 ? int(std::thread::hardware_concurrency()) : arg;
}

constexpr double kSampleSeconds = 0.1;

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
  } while (elapsed < kSampleSeconds);
  return elapsed / reps;
}

struct Workload {
  Program program;
  TensorMap inputs;
  ParamMap params;
  std::function<void()> eigen;                                       // writes into buffers it owns
  std::vector<std::pair<std::string, std::function<void()>>> peers;  // OpenBLAS, oneDNN
  int64_t output_bytes = 0;                                          // for the copy bound
};

// im2col of an NHWC input for a KxK, stride 1, pad K/2 convolution: one row per output pixel.
void im2col(const float* x, float* cols, int64_t N, int64_t H, int64_t W, int64_t C, int64_t K) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t x0 = 0; x0 < W; ++x0) {
        float* row = cols + ((n * H + h) * W + x0) * K * K * C;
        for (int64_t kh = 0; kh < K; ++kh)
          for (int64_t kw = 0; kw < K; ++kw) {
            int64_t ih = h + kh - K / 2, iw = x0 + kw - K / 2;
            float* dst = row + (kh * K + kw) * C;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
              std::fill(dst, dst + C, 0.0f);
            else
              std::copy_n(x + ((n * H + ih) * W + iw) * C, C, dst);
          }
      }
}

#ifdef UOPS_BENCH_ONEDNN
using dnnl::memory;
using Tag = memory::format_tag;

// One primitive with its arguments, run on its own stream; `wait` makes the timing synchronous.
struct Dnnl {
  static dnnl::engine& engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
  }
  std::shared_ptr<dnnl::primitive> prim;
  std::unordered_map<int, memory> args;
  std::function<void()> runner() const {
    auto p = prim;
    auto a = args;
    return [p, a] {
      dnnl::stream s(engine());
      p->execute(s, a);
      s.wait();
    };
  }
};

memory dnnl_memory(const memory::dims& dims, Tag tag, void* data) {
  return memory({dims, memory::data_type::f32, tag}, Dnnl::engine(), data);
}
#endif

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
  w.output_bytes = n * 4;
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
  w.output_bytes = m * n * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto md = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(xp));
    auto dst = dnnl_memory({m, n}, Tag::ab, out->data());
    dnnl::softmax_forward::primitive_desc pd({dnnl::prop_kind::forward_inference, md.get_desc(), 1},
                                             Dnnl::engine());
    Dnnl d{std::make_shared<dnnl::softmax_forward>(pd), {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
  }
#endif
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
  w.output_bytes = m * n * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto src = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(xp));
    auto dst = dnnl_memory({m, n}, Tag::ab, out->data());
    auto scale = dnnl_memory({n}, Tag::a, const_cast<float*>(gp));
    auto shift = dnnl_memory({n}, Tag::a, const_cast<float*>(bp));
    dnnl::layer_normalization_forward::primitive_desc pd(
        {dnnl::prop_kind::forward_inference, src.get_desc(), 1e-5f,
         dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift},
        Dnnl::engine());
    Dnnl d{std::make_shared<dnnl::layer_normalization_forward>(pd),
           {{DNNL_ARG_SRC, src},
            {DNNL_ARG_DST, dst},
            {DNNL_ARG_SCALE, scale},
            {DNNL_ARG_SHIFT, shift}}};
    w.peers.emplace_back("oneDNN", d.runner());
  }
#endif
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
#ifdef UOPS_BENCH_OPENBLAS
  w.peers.emplace_back("OpenBLAS", [out, ap, bp, n] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, ap, n, bp, n, 0.0f,
                out->data(), n);
    benchmark::DoNotOptimize(out->data());
  });
#endif
#ifdef UOPS_BENCH_ONEDNN
  {
    auto a = dnnl_memory({n, n}, Tag::ab, const_cast<float*>(ap));
    auto b = dnnl_memory({n, n}, Tag::ab, const_cast<float*>(bp));
    auto c = dnnl_memory({n, n}, Tag::ab, out->data());
    dnnl::matmul::primitive_desc pd({a.get_desc(), b.get_desc(), c.get_desc()}, Dnnl::engine());
    Dnnl d{std::make_shared<dnnl::matmul>(pd),
           {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}}};
    w.peers.emplace_back("oneDNN", d.runner());
  }
#endif
  return w;
}

// A linear layer, y = x * w^T + b, at batch 64: one GEMM and a bias for the peers.
Workload linear() {
  Workload w;
  w.program = optimize(forward_program(find_op("linear"), DType::f32));
  const int64_t batch = 64, in = 1024, out = 1024;
  w.inputs = {{"x", random_tensor({batch, in}, 15)},
              {"w", random_tensor({out, in}, 16)},
              {"b", random_tensor({out}, 17)}};
  auto y = std::make_shared<RowMatrix>(batch, out);
  const float* xp = w.inputs["x"].data<float>();
  const float* wp = w.inputs["w"].data<float>();
  const float* bp = w.inputs["b"].data<float>();
  w.eigen = [=] {
    y->noalias() = ConstMap(xp, batch, in) * ConstMap(wp, out, in).transpose();
    y->rowwise() += Eigen::Map<const Eigen::RowVectorXf>(bp, out);
    benchmark::DoNotOptimize(y->data());
  };
#ifdef UOPS_BENCH_OPENBLAS
  w.peers.emplace_back("OpenBLAS", [=] {
    for (int64_t i = 0; i < batch; ++i) std::copy_n(bp, out, y->data() + i * out);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, out, in, 1.0f, xp, in, wp, in, 1.0f,
                y->data(), out);
    benchmark::DoNotOptimize(y->data());
  });
#endif
  return w;
}

// matmul's gradient: da = dc * b^T and db = a^T * dc, two GEMMs for the peers.
Workload matmul_grad() {
  Workload w;
  w.program = optimize(gradient_program(find_op("matmul"), DType::f32));
  const int64_t n = 512;
  w.inputs = {{"a", random_tensor({n, n}, 12)},
              {"b", random_tensor({n, n}, 13)},
              {"dc", random_tensor({n, n}, 14)}};
  auto da = std::make_shared<RowMatrix>(n, n), db = std::make_shared<RowMatrix>(n, n);
  const float* ap = w.inputs["a"].data<float>();
  const float* bp = w.inputs["b"].data<float>();
  const float* gp = w.inputs["dc"].data<float>();
  w.eigen = [=] {
    da->noalias() = ConstMap(gp, n, n) * ConstMap(bp, n, n).transpose();
    db->noalias() = ConstMap(ap, n, n).transpose() * ConstMap(gp, n, n);
    benchmark::DoNotOptimize(da->data());
    benchmark::DoNotOptimize(db->data());
  };
#ifdef UOPS_BENCH_OPENBLAS
  w.peers.emplace_back("OpenBLAS", [=] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, gp, n, bp, n, 0.0f,
                da->data(), n);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0f, ap, n, gp, n, 0.0f,
                db->data(), n);
    benchmark::DoNotOptimize(da->data());
    benchmark::DoNotOptimize(db->data());
  });
#endif
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
    im2col(xp, cols->data(), N, H, W, C, K);
    out->noalias() = *cols * ConstMap(wp, O, K * K * C).transpose();
    benchmark::DoNotOptimize(out->data());
  };
#ifdef UOPS_BENCH_OPENBLAS
  w.peers.emplace_back("OpenBLAS", [=] {
    im2col(xp, cols->data(), N, H, W, C, K);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N * H * W, O, K * K * C, 1.0f,
                cols->data(), K * K * C, wp, K * K * C, 0.0f, out->data(), O);
    benchmark::DoNotOptimize(out->data());
  });
#endif
#ifdef UOPS_BENCH_ONEDNN
  {
    // NHWC activations as uops has them; the weights in oneDNN's preferred layout, reordered
    // once outside the timing (as a framework does for inference).
    auto src = dnnl_memory({N, C, H, W}, Tag::nhwc, const_cast<float*>(xp));
    auto dst = dnnl_memory({N, O, H, W}, Tag::nhwc, out->data());
    auto user_w = dnnl_memory({O, C, K, K}, Tag::ohwi, const_cast<float*>(wp));
    memory::desc any_w({O, C, K, K}, memory::data_type::f32, Tag::any);
    dnnl::convolution_forward::primitive_desc pd({dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::convolution_direct,
                                                  src.get_desc(),
                                                  any_w,
                                                  dst.get_desc(),
                                                  {1, 1},
                                                  {K / 2, K / 2},
                                                  {K / 2, K / 2}},
                                                 Dnnl::engine());
    memory weights(pd.weights_desc(), Dnnl::engine());
    dnnl::stream s(Dnnl::engine());
    dnnl::reorder(user_w, weights).execute(s, user_w, weights);
    s.wait();
    Dnnl d{std::make_shared<dnnl::convolution_forward>(pd),
           {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
  }
#endif
  return w;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void set_threads(int threads) {
  Eigen::setNbThreads(threads);
  omp_set_num_threads(threads);  // oneDNN's OpenMP runtime too
#ifdef UOPS_BENCH_OPENBLAS
  openblas_set_num_threads(threads);
#endif
}

void run_against_peers(benchmark::State& state, Workload (*make)()) {
  int threads = threads_for(int(state.range(0)));
  // Before make(): oneDNN fixes a primitive's thread count when it creates it.
  set_threads(threads);
  Workload w = make();
  CCompileOptions o;
  o.threads = threads;
  auto exe = compile_c(w.program, o);
  std::vector<std::pair<std::string, std::function<void()>>> peers = {{"Eigen", w.eigen}};
  for (auto& p : w.peers) peers.push_back(p);
  if (w.output_bytes) {
    int64_t bytes = w.output_bytes;
    for (auto& [name, t] : w.inputs) bytes += int64_t(t.bytes.size());
    // memcpy of half the bytes reads and writes them all once.
    auto from = std::make_shared<std::vector<char>>(bytes / 2, 1);
    auto to = std::make_shared<std::vector<char>>(bytes / 2);
    peers.emplace_back("copy", [from, to] {
      std::memcpy(to->data(), from->data(), from->size());
      benchmark::DoNotOptimize(to->data());
    });
  }
  std::vector<double> uops_times;
  std::map<std::string, std::vector<double>> ratios;
  TensorMap outputs;  // reused, as the peers reuse their buffers
  for (auto _ : state) {
    double c = seconds_per_run([&] {
      exe->run_into(w.inputs, outputs, w.params);
      benchmark::DoNotOptimize(outputs.begin()->second.bytes.data());
    });
    uops_times.push_back(c);
    for (auto& [name, f] : peers) ratios[name].push_back(seconds_per_run(f) / c);
  }
  state.counters["threads"] = threads;
  state.counters["uops_ms"] = median(uops_times) * 1e3;
  for (auto& [name, r] : ratios) state.counters["C/" + name] = median(r);
}

// Seven interleaved samples per benchmark: the counters are their medians.
#define AGAINST_PEERS(name)             \
  void BM_##name(benchmark::State& s) { \
    run_against_peers(s, name);         \
  }                                     \
  BENCHMARK(BM_##name)->Arg(1)->Arg(0)->Iterations(7)->Unit(benchmark::kMillisecond)->UseRealTime();
AGAINST_PEERS(elementwise)
AGAINST_PEERS(softmax)
AGAINST_PEERS(layernorm)
AGAINST_PEERS(matmul)
AGAINST_PEERS(matmul_grad)
AGAINST_PEERS(linear)
AGAINST_PEERS(conv2d)

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

int main(int argc, char** argv) {
  uops::bench::restart_with_passive_omp(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
