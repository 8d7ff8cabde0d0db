// Generated C (make_backend("c")'s default options but the thread count) against peers on the
// same inputs, at 1 thread and on every core: Eigen; OpenBLAS (cblas_sgemm) and oneDNN
// primitives where the build found them (UOPS_BENCH_OPENBLAS, UOPS_BENCH_ONEDNN); and a copy
// bound, a memcpy moving as many bytes as the workload's inputs and outputs together. Each
// benchmark iteration times uops and every peer once, interleaved; the counters are medians
// over the iterations of `C/<peer>`, the peer's time over uops' `run_into()` time, into outputs
// reused from call to call as the peers' are (above 1: uops is faster), and of `run/kernel`,
// `run()`'s time (fresh outputs) over its kernel called directly (bench/common/bare_kernel.h). A
// peer whose output the workload states is checked once against uops' before timing (a wrong one
// gets `wrong/<peer>` instead of a ratio). The training workloads (issue 30) follow the forward
// ones; bench/backends/table.py prints their table. Plus compile latency (cold and cache hit) and
// interpreter against C. Runs with OMP_WAIT_POLICY=passive unless it is set (see main).
#include <benchmark/benchmark.h>
#include <omp.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "bench/common/bare_kernel.h"
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

// A peer's output in uops' layout (after the peer ran once), for the one-time check that the
// peer computes what uops does.
struct PeerOutput {
  std::string peer;    // "Eigen", "oneDNN" ...
  std::string output;  // the uops program's output it must equal
  std::function<const float*()> data;
};

struct Workload {
  Program program;
  TensorMap inputs;
  ParamMap params;
  std::function<void()> eigen;  // writes into buffers it owns; unset: no Eigen column
  std::vector<std::pair<std::string, std::function<void()>>> peers;  // OpenBLAS, oneDNN
  int64_t output_bytes = 0;                                          // for the copy bound
  std::vector<PeerOutput> checks;
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

// Several primitives run in order on one stream, as one peer.
std::function<void()> dnnl_chain(std::vector<Dnnl> steps) {
  return [steps] {
    dnnl::stream s(Dnnl::engine());
    for (auto& d : steps) d.prim->execute(s, d.args);
    s.wait();
  };
}

// oneDNN's matmul dst = src * wei; a memory of Tag::ba reads a row-major matrix as its transpose,
// so transposes are strides, not copies. A `scale` other than 1 multiplies dst as a post-op.
Dnnl dnnl_matmul(memory src, memory wei, memory dst, float scale = 1.0f) {
  dnnl::primitive_attr attr;
  if (scale != 1.0f) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, scale, 0.0f);
    attr.set_post_ops(ops);
  }
  dnnl::matmul::primitive_desc pd({src.get_desc(), wei.get_desc(), dst.get_desc()}, attr,
                                  Dnnl::engine());
  return {std::make_shared<dnnl::matmul>(pd),
          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}}};
}
#endif

// max((x * y + x - y)^2, x) over a tensor of `shape`; Eigen runs it over the same elements
// flat (the expression is elementwise, so the layout does not matter).
Workload elementwise_of(const std::vector<int64_t>& shape, uint64_t seed) {
  Graph g;
  const int rank = int(shape.size());
  Node x = g.input("x", rank, DType::f32), y = g.input("y", rank, DType::f32);
  Node t = g.binary(BinaryOp::sub, g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, y), x), y);
  g.output("z", g.binary(BinaryOp::max, g.binary(BinaryOp::mul, t, t), x));
  Workload w;
  w.program = optimize(lower(g));
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  w.inputs = {{"x", random_tensor(shape, seed)}, {"y", random_tensor(shape, seed + 1)}};
  auto out = std::make_shared<Eigen::ArrayXf>(n);
  const float* xp = w.inputs["x"].data<float>();
  const float* yp = w.inputs["y"].data<float>();
  w.eigen = [out, xp, yp, n] {
    Eigen::Map<const Eigen::ArrayXf> x(xp, n), y(yp, n);
    auto t = x * y + x - y;
    *out = (t * t).max(x);
    benchmark::DoNotOptimize(out->data());
  };
  w.checks.push_back({"Eigen", "z", [out] { return out->data(); }});
  w.output_bytes = n * 4;
  return w;
}

Workload elementwise() {
  return elementwise_of({1 << 20}, 1);
}

// The same expression over a 4096 x 1024 matrix: 48 MiB of traffic, past the caches, with a
// write-once output large enough for streamed rows (LoopPlan::stream).
Workload elementwise_large() {
  return elementwise_of({4096, 1024}, 3);
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
  // The peers share one output buffer; each is checked right after it ran.
  for (const char* peer : {"Eigen", "oneDNN"}) {
    w.checks.push_back({peer, "y", [out] { return out->data(); }});
  }
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
  for (const char* peer : {"Eigen", "oneDNN"}) {
    w.checks.push_back({peer, "y", [out] { return out->data(); }});
  }
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

Workload matmul_n(int64_t n) {
  Workload w;
  w.program = optimize(forward_program(find_op("matmul"), DType::f32));
  w.inputs = {{"a", random_tensor({n, n}, 7)}, {"b", random_tensor({n, n}, 8)}};
  auto out = std::make_shared<RowMatrix>(n, n);
  const float* ap = w.inputs["a"].data<float>();
  const float* bp = w.inputs["b"].data<float>();
  w.eigen = [out, ap, bp, n] {
    out->noalias() = ConstMap(ap, n, n) * ConstMap(bp, n, n);
    benchmark::DoNotOptimize(out->data());
  };
  for (const char* peer : {"Eigen", "OpenBLAS", "oneDNN"}) {
    w.checks.push_back({peer, "c", [out] { return out->data(); }});
  }
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

Workload matmul() {
  return matmul_n(512);
}
// A small product, where a team's start and the thread copies' zeroing weigh as much as the work.
Workload matmul_s128() {
  return matmul_n(128);
}
// Rows of 1000 floats, 4000 bytes: most start off a cache line, as most shapes' rows do.
Workload matmul_s1000() {
  return matmul_n(1000);
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
  for (const char* peer : {"Eigen", "OpenBLAS"}) {
    w.checks.push_back({peer, "y", [y] { return y->data(); }});
  }
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
#ifdef UOPS_BENCH_ONEDNN
  {
    // The same two GEMMs, into buffers of its own for the check (issue 30).
    auto da1 = std::make_shared<RowMatrix>(n, n), db1 = std::make_shared<RowMatrix>(n, n);
    auto in = [](const float* p, int64_t n, Tag t) {
      return dnnl_memory({n, n}, t, const_cast<float*>(p));
    };
    w.peers.emplace_back(
        "oneDNN",
        dnnl_chain(
            {dnnl_matmul(in(gp, n, Tag::ab), in(bp, n, Tag::ba), in(da1->data(), n, Tag::ab)),
             dnnl_matmul(in(ap, n, Tag::ba), in(gp, n, Tag::ab), in(db1->data(), n, Tag::ab))}));
    w.checks.push_back({"oneDNN", "da", [da1] { return da1->data(); }});
    w.checks.push_back({"oneDNN", "db", [db1] { return db1->data(); }});
  }
#endif
  return w;
}

// linear's whole gradient at the linear workload's shape: dx = dy * w and dw = dy^T * x, two
// GEMMs for the peers, and db, dy's column sums (OpenBLAS: dy^T times a vector of ones, oneDNN:
// a reduction).
Workload linear_grad() {
  Workload w;
  w.program = optimize(gradient_program(find_op("linear"), DType::f32));
  const int64_t batch = 64, in = 1024, out = 1024;
  w.inputs = {{"x", random_tensor({batch, in}, 30)},
              {"w", random_tensor({out, in}, 31)},
              {"dy", random_tensor({batch, out}, 32)}};
  auto dx = std::make_shared<RowMatrix>(batch, in), dw = std::make_shared<RowMatrix>(out, in);
  auto db = std::make_shared<Eigen::RowVectorXf>(out);
  const float* xp = w.inputs["x"].data<float>();
  const float* wp = w.inputs["w"].data<float>();
  const float* gp = w.inputs["dy"].data<float>();
  w.eigen = [=] {
    dx->noalias() = ConstMap(gp, batch, out) * ConstMap(wp, out, in);
    dw->noalias() = ConstMap(gp, batch, out).transpose() * ConstMap(xp, batch, in);
    *db = ConstMap(gp, batch, out).colwise().sum();
    benchmark::DoNotOptimize(dx->data());
    benchmark::DoNotOptimize(dw->data());
    benchmark::DoNotOptimize(db->data());
  };
  for (const char* peer : {"Eigen", "OpenBLAS"}) {
    w.checks.push_back({peer, "dx", [dx] { return dx->data(); }});
    w.checks.push_back({peer, "dw", [dw] { return dw->data(); }});
    w.checks.push_back({peer, "db", [db] { return db->data(); }});
  }
#ifdef UOPS_BENCH_OPENBLAS
  auto ones = std::make_shared<std::vector<float>>(batch, 1.0f);
  w.peers.emplace_back("OpenBLAS", [=] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, in, out, 1.0f, gp, out, wp, in,
                0.0f, dx->data(), in);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, batch, 1.0f, gp, out, xp, in,
                0.0f, dw->data(), in);
    cblas_sgemv(CblasRowMajor, CblasTrans, batch, out, 1.0f, gp, out, ones->data(), 1, 0.0f,
                db->data(), 1);
    benchmark::DoNotOptimize(dx->data());
    benchmark::DoNotOptimize(dw->data());
    benchmark::DoNotOptimize(db->data());
  });
#endif
#ifdef UOPS_BENCH_ONEDNN
  {
    // The two GEMMs as matmuls (dy read transposed through its strides) and db as a reduction,
    // into buffers of its own for the check.
    auto dx1 = std::make_shared<RowMatrix>(batch, in), dw1 = std::make_shared<RowMatrix>(out, in);
    auto db1 = std::make_shared<std::vector<float>>(out);
    auto dy = [&](Tag t) {
      return dnnl_memory(t == Tag::ab ? memory::dims{batch, out} : memory::dims{out, batch}, t,
                         const_cast<float*>(gp));
    };
    auto dbm = dnnl_memory({1, out}, Tag::ab, db1->data());
    dnnl::reduction::primitive_desc sum(
        {dnnl::algorithm::reduction_sum, dy(Tag::ab).get_desc(), dbm.get_desc(), 0.0f, 0.0f},
        Dnnl::engine());
    w.peers.emplace_back(
        "oneDNN",
        dnnl_chain(
            {dnnl_matmul(dy(Tag::ab), dnnl_memory({out, in}, Tag::ab, const_cast<float*>(wp)),
                         dnnl_memory({batch, in}, Tag::ab, dx1->data())),
             dnnl_matmul(dy(Tag::ba), dnnl_memory({batch, in}, Tag::ab, const_cast<float*>(xp)),
                         dnnl_memory({out, in}, Tag::ab, dw1->data())),
             {std::make_shared<dnnl::reduction>(sum),
              {{DNNL_ARG_SRC, dy(Tag::ab)}, {DNNL_ARG_DST, dbm}}}}));
    w.checks.push_back({"oneDNN", "dx", [dx1] { return dx1->data(); }});
    w.checks.push_back({"oneDNN", "dw", [dw1] { return dw1->data(); }});
    w.checks.push_back({"oneDNN", "db", [db1] { return db1->data(); }});
  }
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
  for (const char* peer : {"Eigen", "OpenBLAS", "oneDNN"}) {
    w.checks.push_back({peer, "y", [out] { return out->data(); }});
  }
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

// The peers whose output differs from uops' beyond f32 rounding: the largest difference over
// the largest magnitude of uops' output, at most 1e-3. Each peer's outputs are read right after
// it ran, since peers of one workload may share their output buffer.
std::set<std::string> wrong_peers(
    const Workload& w, const std::vector<std::pair<std::string, std::function<void()>>>& peers,
    const TensorMap& outputs) {
  std::set<std::string> wrong;
  for (auto& [name, f] : peers) {
    f();
    for (const PeerOutput& c : w.checks) {
      if (c.peer != name) continue;
      const Tensor& t = outputs.at(c.output);
      const float* want = t.data<float>();
      const float* got = c.data();
      double diff = 0, scale = 1e-6;
      for (int64_t i = 0; i < t.numel(); ++i) {
        diff = std::max(diff, double(std::abs(want[i] - got[i])));
        scale = std::max(scale, double(std::abs(want[i])));
      }
      if (!(diff <= 1e-3 * scale)) {
        std::fprintf(stderr, "error: peer %s's %s differs from uops' by %g (largest |uops| %g)\n",
                     c.peer.c_str(), c.output.c_str(), diff, scale);
        wrong.insert(c.peer);
      }
    }
  }
  return wrong;
}

// run() as a user calls it (fresh outputs, validation) over its kernel called directly, the two
// alternating call by call: whatever slows one (another library's threads still spinning after
// its call, the core's clock) slows the other alike.
double run_over_kernel_sample(const Executable& exe, const Workload& w,
                              const bench::BareKernel& kernel) {
  using Clock = std::chrono::steady_clock;
  double run = 0, bare = 0;
  auto user_run = [&] {
    TensorMap fresh = exe.run(w.inputs, w.params);
    benchmark::DoNotOptimize(fresh.begin()->second.bytes.data());
  };
  user_run();
  kernel();
  while (run + bare < 2 * kSampleSeconds) {
    auto t0 = Clock::now();
    user_run();
    auto t1 = Clock::now();
    kernel();
    auto t2 = Clock::now();
    run += std::chrono::duration<double>(t1 - t0).count();
    bare += std::chrono::duration<double>(t2 - t1).count();
  }
  return run / bare;
}

void run_against_peers(benchmark::State& state, Workload (*make)()) {
  int threads = threads_for(int(state.range(0)));
  // Before make(): oneDNN fixes a primitive's thread count when it creates it.
  set_threads(threads);
  Workload w = make();
  CCompileOptions o;
  o.threads = threads;
  // Kernels for another instruction set than the host's (CCompileOptions::target), to measure
  // what a host without AVX-512 runs: UOPS_BENCH_TARGET=x86-64-v3, with ONEDNN_MAX_CPU_ISA=AVX2
  // for oneDNN's kernels (docs/cpu-kernels.md).
  if (const char* target = std::getenv("UOPS_BENCH_TARGET")) o.target = target;
  // What the first call costs: the program compiled into an empty kernel cache of its own.
  const char* user_cache = std::getenv("UOPS_CACHE_DIR");
  const std::string saved = user_cache ? user_cache : "";
  const auto cold =
      std::filesystem::temp_directory_path() / ("uops-bench-cold-" + std::to_string(getpid()));
  std::filesystem::remove_all(cold);
  setenv("UOPS_CACHE_DIR", cold.c_str(), 1);
  auto start = std::chrono::steady_clock::now();
  auto exe = compile_c(w.program, o);
  state.counters["compile_ms"] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  // The kernel run() calls, called directly (the same object, from the same cache).
  bench::BareKernel kernel(w.program, o, w.inputs, w.params);
  if (user_cache)
    setenv("UOPS_CACHE_DIR", saved.c_str(), 1);
  else
    unsetenv("UOPS_CACHE_DIR");
  std::filesystem::remove_all(cold);
  std::vector<std::pair<std::string, std::function<void()>>> peers;
  if (w.eigen) peers.emplace_back("Eigen", w.eigen);
  for (auto& p : w.peers) peers.push_back(p);
  TensorMap outputs;  // reused, as the peers reuse their buffers
  if (!w.checks.empty()) {
    exe->run_into(w.inputs, outputs, w.params);
    std::set<std::string> wrong = wrong_peers(w, peers, outputs);
    // A peer that computes something else gets no counter but a flag the table reports.
    for (auto& name : wrong) state.counters["wrong/" + name] = 1;
    std::erase_if(peers, [&](auto& p) { return wrong.count(p.first) > 0; });
  }
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
  // The peers' buffers on huge pages, as uops' tensors are (bench_common.h); how many MiB in the
  // JSON, to tell a system that gave none.
  state.counters["huge_pages_MiB"] = double(bench::huge_pages_for_every_buffer()) / (1 << 20);
  std::vector<double> uops_times, run_over_kernel;
  std::map<std::string, std::vector<double>> ratios;
  for (auto _ : state) {
    double c = seconds_per_run([&] {
      exe->run_into(w.inputs, outputs, w.params);
      benchmark::DoNotOptimize(outputs.begin()->second.bytes.data());
    });
    uops_times.push_back(c);
    for (auto& [name, f] : peers) ratios[name].push_back(seconds_per_run(f) / c);
    run_over_kernel.push_back(run_over_kernel_sample(*exe, w, kernel));
  }
  state.counters["threads"] = threads;
  state.counters["uops_ms"] = median(uops_times) * 1e3;
  state.counters["run/kernel"] = median(run_over_kernel);
  for (auto& [name, r] : ratios) state.counters["C/" + name] = median(r);
}

// Seven interleaved samples per benchmark: the counters are their medians.
#define AGAINST_PEERS(name)             \
  void BM_##name(benchmark::State& s) { \
    run_against_peers(s, name);         \
  }                                     \
  BENCHMARK(BM_##name)->Arg(1)->Arg(0)->Iterations(7)->Unit(benchmark::kMillisecond)->UseRealTime();
AGAINST_PEERS(elementwise)
AGAINST_PEERS(elementwise_large)
AGAINST_PEERS(softmax)
AGAINST_PEERS(layernorm)
AGAINST_PEERS(matmul)
AGAINST_PEERS(matmul_s128)
AGAINST_PEERS(matmul_s1000)
AGAINST_PEERS(matmul_grad)
AGAINST_PEERS(linear)
AGAINST_PEERS(conv2d)

// ---- Training workloads (issue 30): backward passes, batched matmul, attention, pooling, a
// reduction over a non-last axis and a depthwise conv2d, each against its best peer. Each peer
// states its output in uops' layout (Workload::checks), checked once before timing.

// The program of `op`'s gradient with respect to `wrt` alone (conv2d's backward data and
// backward weights are separate primitives for oneDNN).
Program gradient_wrt(const std::string& op, const std::vector<std::string>& wrt) {
  return optimize(gradient(find_op(op).build(DType::f32), wrt));
}

#ifdef UOPS_BENCH_ONEDNN
// Copies `from` into `to`, converting the layout; outside any timing.
void dnnl_reorder(memory from, memory to) {
  dnnl::stream s(Dnnl::engine());
  dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
}

// `from` in a new memory of layout `to`.
memory dnnl_reordered(memory from, const memory::desc& to) {
  memory m(to, Dnnl::engine());
  dnnl_reorder(from, m);
  return m;
}

// The NHWC stride-1, pad K/2 convolution of the conv2d workload, as the hint oneDNN's backward
// primitives need.
dnnl::convolution_forward::primitive_desc conv_hint(const memory::desc& src,
                                                    const memory::desc& weights,
                                                    const memory::desc& dst, int64_t K) {
  return {{dnnl::prop_kind::forward_training,
           dnnl::algorithm::convolution_direct,
           src,
           weights,
           dst,
           {1, 1},
           {K / 2, K / 2},
           {K / 2, K / 2}},
          Dnnl::engine()};
}
#endif

constexpr int64_t kConvN = 8, kConvH = 56, kConvW = 56, kConvC = 64, kConvO = 64, kConvK = 3;

#ifdef UOPS_BENCH_ONEDNN
// The descriptor of oneDNN's backward convolution `Primitive` (backward data or weights) of the
// conv workloads, from x or dx and dy, with the weights in the layout it prefers.
template <typename Primitive>
typename Primitive::primitive_desc conv_bwd_desc(const memory& x, const memory& dy) {
  const int64_t C = kConvC, O = kConvO, K = kConvK;
  memory::desc any_w({O, C, K, K}, memory::data_type::f32, Tag::any);
  return {{dnnl::algorithm::convolution_direct,
           x.get_desc(),
           any_w,
           dy.get_desc(),
           {1, 1},
           {K / 2, K / 2},
           {K / 2, K / 2}},
          Dnnl::engine(),
          conv_hint(x.get_desc(), any_w, dy.get_desc(), K)};
}

// oneDNN's convolution_backward_data of the conv workloads' inputs into dx, its weights
// reordered once (untimed) to the layout it prefers, as for the forward workload.
Dnnl conv_bwd_data(TensorMap& in, float* dx) {
  const int64_t N = kConvN, H = kConvH, W = kConvW, C = kConvC, O = kConvO, K = kConvK;
  auto user_w = dnnl_memory({O, C, K, K}, Tag::ohwi, in["w"].data<float>());
  auto dy = dnnl_memory({N, O, H, W}, Tag::nhwc, in["dy"].data<float>());
  auto diff_src = dnnl_memory({N, C, H, W}, Tag::nhwc, dx);
  auto pd = conv_bwd_desc<dnnl::convolution_backward_data>(diff_src, dy);
  auto weights = dnnl_reordered(user_w, pd.weights_desc());
  return {std::make_shared<dnnl::convolution_backward_data>(pd),
          {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DIFF_SRC, diff_src}}};
}

// oneDNN's convolution_backward_weights of the conv workloads' inputs into the weights layout
// it prefers, and the check's reader of them, which reorders them to uops' OHWI (untimed).
std::pair<Dnnl, std::function<const float*()>> conv_bwd_weights(TensorMap& in) {
  const int64_t N = kConvN, H = kConvH, W = kConvW, C = kConvC, O = kConvO, K = kConvK;
  auto src = dnnl_memory({N, C, H, W}, Tag::nhwc, in["x"].data<float>());
  auto dy = dnnl_memory({N, O, H, W}, Tag::nhwc, in["dy"].data<float>());
  auto pd = conv_bwd_desc<dnnl::convolution_backward_weights>(src, dy);
  memory dw(pd.diff_weights_desc(), Dnnl::engine());
  auto ohwi = std::make_shared<std::vector<float>>(O * K * K * C);
  return {{std::make_shared<dnnl::convolution_backward_weights>(pd),
           {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, dw}}},
          [=]() -> const float* {
            dnnl_reorder(dw, dnnl_memory({O, C, K, K}, Tag::ohwi, ohwi->data()));
            return ohwi->data();
          }};
}
#endif

// conv2d's gradient with respect to `wrt` (x, w or both) from random x, w and dy (seeded by
// `seed`), at the conv2d workload's shape and parameters.
Workload conv2d_grad_of(const std::vector<std::string>& wrt, uint64_t seed) {
  const int64_t N = kConvN, H = kConvH, W = kConvW, C = kConvC, O = kConvO, K = kConvK;
  Workload w;
  w.program = gradient_wrt("conv2d", wrt);
  w.inputs = {{"x", random_tensor({N, H, W, C}, seed)},
              {"w", random_tensor({O, K, K, C}, seed + 1)},
              {"dy", random_tensor({N, H, W, O}, seed + 2)}};
  w.params = {{"stride", 1}, {"pad", 1}, {"dilation", 1}};
  const bool dx = std::count(wrt.begin(), wrt.end(), "x"),
             dw = std::count(wrt.begin(), wrt.end(), "w");
  w.output_bytes = (dx ? N * H * W * C * 4 : 0) + (dw ? O * K * K * C * 4 : 0);
#ifdef UOPS_BENCH_ONEDNN
  std::vector<Dnnl> steps;
  if (dx) {
    auto buffer = std::make_shared<std::vector<float>>(N * H * W * C);
    steps.push_back(conv_bwd_data(w.inputs, buffer->data()));
    w.checks.push_back({"oneDNN", "dx", [buffer] { return buffer->data(); }});
  }
  if (dw) {
    auto [d, read] = conv_bwd_weights(w.inputs);
    steps.push_back(d);
    w.checks.push_back({"oneDNN", "dw", read});
  }
  w.peers.emplace_back("oneDNN", dnnl_chain(steps));
#endif
  return w;
}

// dx of conv2d from dy and w: oneDNN's convolution_backward_data (backward data and backward
// weights are separate primitives for oneDNN).
Workload conv2d_bwd_data() {
  return conv2d_grad_of({"x"}, 20);
}

// dw of conv2d from x and dy: oneDNN's convolution_backward_weights.
Workload conv2d_bwd_weights() {
  return conv2d_grad_of({"w"}, 23);
}

// conv2d's whole gradient, dx and dw, as a training step takes it: the two oneDNN primitives one
// after the other.
Workload conv2d_grad() {
  return conv2d_grad_of({"x", "w"}, 29);
}

// softmax's dx from dy and what the forward pass kept, as a framework runs it: uops' gradient is
// given its residuals (the row's exponentials and their sum, from the forward program that keeps
// them), oneDNN's softmax_backward is given y; both computed once, untimed.
Workload softmax_bwd() {
  const int64_t m = 4096, n = 1024;
  Workload w;
  Graph g = find_op("softmax").build(DType::f32);
  std::vector<int> saved = gradient_residuals(g, {"x"});
  w.program = optimize(gradient(g, {"x"}, "d", saved));
  Tensor x_values = random_tensor({m, n}, 26);
  w.inputs = compile_c(optimize(lower(with_saved_outputs(g, saved))))->run({{"x", x_values}});
  w.inputs.erase("y");
  w.inputs["dy"] = random_tensor({m, n}, 27);
  w.output_bytes = m * n * 4;
  const float* xp = x_values.data<float>();
  const float* gp = w.inputs["dy"].data<float>();
  auto y = std::make_shared<RowMatrix>(m, n), dx = std::make_shared<RowMatrix>(m, n);
  {
    ConstMap x(xp, m, n);
    Eigen::VectorXf mx = x.rowwise().maxCoeff();
    y->array() = (x.colwise() - mx).array().exp();
    Eigen::VectorXf s = y->rowwise().sum();
    y->array().colwise() /= s.array();
  }
  w.eigen = [=] {
    ConstMap dy(gp, m, n);
    Eigen::VectorXf dot = (dy.array() * y->array()).rowwise().sum();
    dx->array() = (dy.colwise() - dot).array() * y->array();
    benchmark::DoNotOptimize(dx->data());
  };
  w.checks.push_back({"Eigen", "dx", [dx] { return dx->data(); }});
#ifdef UOPS_BENCH_ONEDNN
  {
    auto dxd = std::make_shared<RowMatrix>(m, n);
    auto dst = dnnl_memory({m, n}, Tag::ab, y->data());
    auto dy = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(gp));
    auto diff_src = dnnl_memory({m, n}, Tag::ab, dxd->data());
    dnnl::softmax_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, dst.get_desc(), 1}, Dnnl::engine());
    dnnl::softmax_backward::primitive_desc pd({dy.get_desc(), dst.get_desc(), 1}, Dnnl::engine(),
                                              hint);
    Dnnl d{std::make_shared<dnnl::softmax_backward>(pd),
           {{DNNL_ARG_DST, dst}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, diff_src}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "dx", [dxd] { return dxd->data(); }});
  }
#endif
  return w;
}

// gelu's dx from dy and x (the tanh form, as the op computes it), an activation's backward as a
// framework runs it: uops' gradient program against oneDNN's eltwise_backward (gelu_tanh) and an
// Eigen expression.
Workload gelu_bwd() {
  const int64_t m = 4096, n = 1024;
  Workload w;
  w.program = optimize(gradient_program(find_op("gelu"), DType::f32));
  w.inputs = {{"x", random_tensor({m, n}, 40)}, {"dy", random_tensor({m, n}, 41)}};
  w.output_bytes = m * n * 4;
  const float* xp = w.inputs["x"].data<float>();
  const float* gp = w.inputs["dy"].data<float>();
  auto dx = std::make_shared<RowMatrix>(m, n);
  w.eigen = [=] {
    const float k = 0.7978845608028654f, c = 0.044715f;
    auto x = ConstMap(xp, m, n).array();
    auto t = (k * (x + c * x * x * x)).tanh();
    dx->array() = ConstMap(gp, m, n).array() *
                  (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * k * (1.0f + 3.0f * c * x * x));
    benchmark::DoNotOptimize(dx->data());
  };
  w.checks.push_back({"Eigen", "dx", [dx] { return dx->data(); }});
#ifdef UOPS_BENCH_ONEDNN
  {
    auto dxd = std::make_shared<RowMatrix>(m, n);
    auto src = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(xp));
    auto dy = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(gp));
    auto diff_src = dnnl_memory({m, n}, Tag::ab, dxd->data());
    const auto gelu = dnnl::algorithm::eltwise_gelu_tanh;
    dnnl::eltwise_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, gelu, src.get_desc(), 0.0f, 0.0f}, Dnnl::engine());
    dnnl::eltwise_backward::primitive_desc pd({gelu, dy.get_desc(), src.get_desc(), 0.0f, 0.0f},
                                              Dnnl::engine(), hint);
    Dnnl d{std::make_shared<dnnl::eltwise_backward>(pd),
           {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, diff_src}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "dx", [dxd] { return dxd->data(); }});
  }
#endif
  return w;
}

// layernorm's dx, dgamma and dbeta from dy, x and gamma. uops recomputes the row statistics;
// oneDNN's layer_normalization_backward is given them (computed once, untimed).
Workload layernorm_bwd() {
  const int64_t m = 4096, n = 1024;
  Workload w;
  Graph g = find_op("layernorm").build(DType::f32);
  // The row statistics oneDNN keeps: x's row mean and the reciprocal standard deviation.
  std::vector<int> saved;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const UopNode& v = g.nodes()[i];
    if ((v.kind == UopKind::reduce && g.nodes()[v.operands[0]].kind == UopKind::input) ||
        (v.kind == UopKind::unary && v.uop == UnaryOp::rsqrt))
      saved.push_back(int(i));
  }
  w.program = optimize(gradient(g, {"x", "gamma", "beta"}, "d", saved));
  TensorMap forward = {{"x", random_tensor({m, n}, 28)},
                       {"gamma", random_tensor({n}, 29)},
                       {"beta", random_tensor({n}, 30)}};
  w.inputs = compile_c(optimize(lower(with_saved_outputs(g, saved))))->run(forward);
  w.inputs.erase("y");
  w.inputs["x"] = forward["x"];
  w.inputs["gamma"] = forward["gamma"];  // beta does not enter the gradient
  w.inputs["dy"] = random_tensor({m, n}, 31);
  w.output_bytes = (m * n + 2 * n) * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto dx = std::make_shared<std::vector<float>>(m * n);
    auto dg = std::make_shared<std::vector<float>>(n), db = std::make_shared<std::vector<float>>(n);
    auto y = std::make_shared<std::vector<float>>(m * n);
    auto src = dnnl_memory({m, n}, Tag::ab, w.inputs["x"].data<float>());
    auto scale = dnnl_memory({n}, Tag::a, w.inputs["gamma"].data<float>());
    auto beta = std::make_shared<Tensor>(random_tensor({n}, 30));  // for the forward pass
    auto shift = dnnl_memory({n}, Tag::a, beta->data<float>());
    auto dy = dnnl_memory({m, n}, Tag::ab, w.inputs["dy"].data<float>());
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc fwd(
        {dnnl::prop_kind::forward_training, src.get_desc(), 1e-5f, flags}, Dnnl::engine());
    memory mean(fwd.mean_desc(), Dnnl::engine()), var(fwd.variance_desc(), Dnnl::engine());
    {
      auto dst = dnnl_memory({m, n}, Tag::ab, y->data());
      dnnl::stream s(Dnnl::engine());
      dnnl::layer_normalization_forward(fwd).execute(s, {{DNNL_ARG_SRC, src},
                                                         {DNNL_ARG_DST, dst},
                                                         {DNNL_ARG_SCALE, scale},
                                                         {DNNL_ARG_SHIFT, shift},
                                                         {DNNL_ARG_MEAN, mean},
                                                         {DNNL_ARG_VARIANCE, var}});
      s.wait();
    }
    dnnl::layer_normalization_backward::primitive_desc pd(
        {dnnl::prop_kind::backward, dy.get_desc(), src.get_desc(), 1e-5f, flags}, Dnnl::engine(),
        fwd);
    Dnnl d{std::make_shared<dnnl::layer_normalization_backward>(pd),
           {{DNNL_ARG_SRC, src},
            {DNNL_ARG_MEAN, mean},
            {DNNL_ARG_VARIANCE, var},
            {DNNL_ARG_DIFF_DST, dy},
            {DNNL_ARG_SCALE, scale},
            {DNNL_ARG_SHIFT, shift},
            {DNNL_ARG_DIFF_SRC, dnnl_memory({m, n}, Tag::ab, dx->data())},
            {DNNL_ARG_DIFF_SCALE, dnnl_memory({n}, Tag::a, dg->data())},
            {DNNL_ARG_DIFF_SHIFT, dnnl_memory({n}, Tag::a, db->data())}}};
    // beta is read through `shift`: the runner keeps it.
    w.peers.emplace_back("oneDNN", [run = d.runner(), beta] { run(); });
    w.checks.push_back({"oneDNN", "dx", [dx] { return dx->data(); }});
    w.checks.push_back({"oneDNN", "dgamma", [dg] { return dg->data(); }});
    w.checks.push_back({"oneDNN", "dbeta", [db] { return db->data(); }});
  }
#endif
  return w;
}

// c[b] = a[b] * b[b] for 32 products of 128x128 matrices (multi-head sizes).
Workload batched_matmul() {
  const int64_t B = 32, M = 128, N = 128, K = 128;
  Workload w;
  w.program = optimize(forward_program(find_op("batched_matmul"), DType::f32));
  w.inputs = {{"a", random_tensor({B, M, K}, 32)}, {"b", random_tensor({B, K, N}, 33)}};
  const float* ap = w.inputs["a"].data<float>();
  const float* bp = w.inputs["b"].data<float>();
  auto out = std::make_shared<std::vector<float>>(B * M * N);
  w.eigen = [=] {
    for (int64_t i = 0; i < B; ++i)
      Map(out->data() + i * M * N, M, N).noalias() =
          ConstMap(ap + i * M * K, M, K) * ConstMap(bp + i * K * N, K, N);
    benchmark::DoNotOptimize(out->data());
  };
  w.checks.push_back({"Eigen", "c", [out] { return out->data(); }});
#ifdef UOPS_BENCH_OPENBLAS
  {
    auto c = std::make_shared<std::vector<float>>(B * M * N);
    w.peers.emplace_back("OpenBLAS", [=] {
      for (int64_t i = 0; i < B; ++i)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, ap + i * M * K, K,
                    bp + i * K * N, N, 0.0f, c->data() + i * M * N, N);
      benchmark::DoNotOptimize(c->data());
    });
    w.checks.push_back({"OpenBLAS", "c", [c] { return c->data(); }});
  }
#endif
#ifdef UOPS_BENCH_ONEDNN
  {
    auto c = std::make_shared<std::vector<float>>(B * M * N);
    auto a = dnnl_memory({B, M, K}, Tag::abc, const_cast<float*>(ap));
    auto b = dnnl_memory({B, K, N}, Tag::abc, const_cast<float*>(bp));
    auto dst = dnnl_memory({B, M, N}, Tag::abc, c->data());
    dnnl::matmul::primitive_desc pd({a.get_desc(), b.get_desc(), dst.get_desc()}, Dnnl::engine());
    Dnnl d{std::make_shared<dnnl::matmul>(pd),
           {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "c", [c] { return c->data(); }});
  }
#endif
  return w;
}

// o = softmax(q k^T / sqrt(D)) v over B = batch x heads, q, k, v [B, S, D], as one graph.
Graph attention_graph(int64_t D) {
  const float scale = 1.0f / std::sqrt(float(D));
  Graph g;
  Node q = g.input("q", 3, DType::f32), k = g.input("k", 3, DType::f32),
       v = g.input("v", 3, DType::f32);
  // [B, S, S, D] products summed over D: the scores.
  std::vector<std::string> bijd = {"dA0[=dB0]", "dA1", "dB1", "dA2[=dB2]"};
  Node qk = g.binary(BinaryOp::mul, g.reindex(q, bijd, {"i0", "i1", "i3"}, {q, k}),
                     g.reindex(k, bijd, {"i0", "i2", "i3"}, {q, k}));
  Node s = g.squeeze(g.reduce(ReduceOp::sum, {3}, qk), {3});
  s = g.binary(BinaryOp::mul, s, g.fill(s, scale));
  auto rows = [&](Node col, Node like) {
    return g.reindex(col, {"dA0", "dA1", "dA2"}, {"i0", "i1", "0"}, {like});
  };
  // The row maximum keeps exp from overflowing and cancels from p, so no gradient flows through
  // it, as in the softmax op (stop_gradient: the forward program is the same).
  Node mx = g.stop_gradient(g.reduce(ReduceOp::max, {2}, s));
  Node e = g.unary(UnaryOp::exp, g.binary(BinaryOp::sub, s, rows(mx, s)));
  Node p = g.binary(BinaryOp::div, e, rows(g.reduce(ReduceOp::sum, {2}, e), e));
  // [B, S, D, S] products summed over the keys.
  std::vector<std::string> bidj = {"dA0[=dB0]", "dA1", "dB2", "dA2[=dB1]"};
  Node pv = g.binary(BinaryOp::mul, g.reindex(p, bidj, {"i0", "i1", "i3"}, {p, v}),
                     g.reindex(v, bidj, {"i0", "i3", "i2"}, {p, v}));
  g.output("o", g.squeeze(g.reduce(ReduceOp::sum, {3}, pv), {3}));
  return g;
}

// Attention's forward pass: uops as one graph; the peers as matmul, softmax, matmul (oneDNN: the
// scale as the first matmul's post-op).
Workload attention(int64_t B, int64_t S, int64_t D) {
  const float scale = 1.0f / std::sqrt(float(D));
  Workload w;
  w.program = optimize(lower(attention_graph(D)));
  w.inputs = {{"q", random_tensor({B, S, D}, 34)},
              {"k", random_tensor({B, S, D}, 35)},
              {"v", random_tensor({B, S, D}, 36)}};
  w.output_bytes = B * S * D * 4;
  const float* qp = w.inputs["q"].data<float>();
  const float* kp = w.inputs["k"].data<float>();
  const float* vp = w.inputs["v"].data<float>();
  auto scores = std::make_shared<RowMatrix>(S, S);
  auto out = std::make_shared<std::vector<float>>(B * S * D);
  w.eigen = [=] {
    for (int64_t b = 0; b < B; ++b) {
      scores->noalias() =
          (ConstMap(qp + b * S * D, S, D) * ConstMap(kp + b * S * D, S, D).transpose()) * scale;
      Eigen::VectorXf mx = scores->rowwise().maxCoeff();
      scores->array() = (scores->colwise() - mx).array().exp();
      Eigen::VectorXf sum = scores->rowwise().sum();
      scores->array().colwise() /= sum.array();
      Map(out->data() + b * S * D, S, D).noalias() = *scores * ConstMap(vp + b * S * D, S, D);
    }
    benchmark::DoNotOptimize(out->data());
  };
  w.checks.push_back({"Eigen", "o", [out] { return out->data(); }});
#ifdef UOPS_BENCH_ONEDNN
  {
    auto sbuf = std::make_shared<std::vector<float>>(B * S * S);
    auto pbuf = std::make_shared<std::vector<float>>(B * S * S);
    auto o = std::make_shared<std::vector<float>>(B * S * D);
    auto qm = dnnl_memory({B, S, D}, Tag::abc, const_cast<float*>(qp));
    auto kt = dnnl_memory({B, D, S}, Tag::acb, const_cast<float*>(kp));  // k^T as strides
    auto vm = dnnl_memory({B, S, D}, Tag::abc, const_cast<float*>(vp));
    auto sm = dnnl_memory({B, S, S}, Tag::abc, sbuf->data());
    auto pm = dnnl_memory({B, S, S}, Tag::abc, pbuf->data());
    auto om = dnnl_memory({B, S, D}, Tag::abc, o->data());
    dnnl::softmax_forward::primitive_desc sm_pd(
        {dnnl::prop_kind::forward_inference, sm.get_desc(), 2}, Dnnl::engine());
    auto run = dnnl_chain(
        {dnnl_matmul(qm, kt, sm, scale),
         {std::make_shared<dnnl::softmax_forward>(sm_pd), {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, pm}}},
         dnnl_matmul(pm, vm, om)});
    // The memories only point at the scores: the runner keeps them.
    w.peers.emplace_back("oneDNN", [run, sbuf, pbuf] { run(); });
    w.checks.push_back({"oneDNN", "o", [o] { return o->data(); }});
  }
#endif
  return w;
}

// Attention's whole gradient (dq, dk and dv from q, k, v and do) as a training step takes it,
// B 8, S 512, d 64. uops' gradient program recomputes the scores and the softmax; so does the
// oneDNN peer: q k^T, the softmax forward, dv = p^T do, dp = do v^T, the softmax backward, then
// dq = ds k and dk = ds^T q, the scale a post-op of the matmuls that take it and every transpose
// a stride.
Workload attention_grad_s512() {
  const int64_t B = 8, S = 512, D = 64;
  Workload w;
  w.program = optimize(gradient(attention_graph(D), {"q", "k", "v"}));
  w.inputs = {{"q", random_tensor({B, S, D}, 44)},
              {"k", random_tensor({B, S, D}, 45)},
              {"v", random_tensor({B, S, D}, 46)},
              {"do", random_tensor({B, S, D}, 47)}};
  w.output_bytes = 3 * B * S * D * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto buffer = [](int64_t n) { return std::make_shared<std::vector<float>>(size_t(n)); };
    auto s = buffer(B * S * S), p = buffer(B * S * S), dp = buffer(B * S * S),
         ds = buffer(B * S * S), dq = buffer(B * S * D), dk = buffer(B * S * D),
         dv = buffer(B * S * D);
    auto data = [&](const char* name) { return const_cast<float*>(w.inputs[name].data<float>()); };
    // [B, S, d] row-major as itself and as its transpose [B, d, S]; [B, S, S] likewise.
    auto bsd = [&](float* x) { return dnnl_memory({B, S, D}, Tag::abc, x); };
    auto bds = [&](float* x) { return dnnl_memory({B, D, S}, Tag::acb, x); };
    auto bss = [&](float* x, Tag tag) { return dnnl_memory({B, S, S}, tag, x); };
    const float scale = 1.0f / std::sqrt(float(D));
    memory sm = bss(s->data(), Tag::abc), pm = bss(p->data(), Tag::abc),
           dpm = bss(dp->data(), Tag::abc), dsm = bss(ds->data(), Tag::abc);
    dnnl::softmax_forward::primitive_desc fwd({dnnl::prop_kind::forward_training, sm.get_desc(), 2},
                                              Dnnl::engine());
    dnnl::softmax_backward::primitive_desc bwd({dpm.get_desc(), pm.get_desc(), 2}, Dnnl::engine(),
                                               fwd);
    auto run = dnnl_chain(
        {dnnl_matmul(bsd(data("q")), bds(data("k")), sm, scale),
         {std::make_shared<dnnl::softmax_forward>(fwd), {{DNNL_ARG_SRC, sm}, {DNNL_ARG_DST, pm}}},
         dnnl_matmul(bss(p->data(), Tag::acb), bsd(data("do")), bsd(dv->data())),
         dnnl_matmul(bsd(data("do")), bds(data("v")), dpm),
         {std::make_shared<dnnl::softmax_backward>(bwd),
          {{DNNL_ARG_DST, pm}, {DNNL_ARG_DIFF_DST, dpm}, {DNNL_ARG_DIFF_SRC, dsm}}},
         dnnl_matmul(dsm, bsd(data("k")), bsd(dq->data()), scale),
         dnnl_matmul(bss(ds->data(), Tag::acb), bsd(data("q")), bsd(dk->data()), scale)});
    // The memories only point at the buffers: the runner keeps them.
    w.peers.emplace_back("oneDNN", [run, s, p, dp, ds] { run(); });
    w.checks.push_back({"oneDNN", "dq", [dq] { return dq->data(); }});
    w.checks.push_back({"oneDNN", "dk", [dk] { return dk->data(); }});
    w.checks.push_back({"oneDNN", "dv", [dv] { return dv->data(); }});
  }
#endif
  return w;
}

Workload attention_s128() {
  return attention(32, 128, 64);
}
Workload attention_s512() {
  return attention(8, 512, 64);
}
Workload attention_s1024() {
  return attention(2, 1024, 64);
}

// The pooling workloads' geometry, NHWC [8, 56, 56, 64]: a ResNet stem's 3x3 stride 2 pad 1 max
// pooling, a 2x2 stride 2 average pooling, each compiled for its window and stride, as oneDNN's
// primitive is (uops/ir/fixed_params.h): the window's loops unroll, 1.3 times faster at 1 and 2
// threads. conv2d's kernels gain nothing from it and its dw lost a fifth when measured, so they
// keep their parameters; depthwise conv2d and its gradient are fixed (depthwise_conv2d,
// depthwise_conv2d_grad). oneDNN's max ignores padding as uops' -inf fill does.
struct Pool {
  bool max;
  int64_t N = 8, H = 56, W = 56, C = 64, K = max ? 3 : 2, stride = 2, pad = max ? 1 : 0;
  int64_t OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
  ParamMap params() const {
    ParamMap p = {{"k", K}, {"stride", stride}};
    if (max) p["pad"] = pad;
    return p;
  }
  Program fixed(const Program& p) const { return fix_params(p, params()); }
#ifdef UOPS_BENCH_ONEDNN
  dnnl::algorithm algorithm() const {
    return max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  dnnl::pooling_forward::primitive_desc forward(dnnl::prop_kind kind, const memory& src,
                                                const memory& dst) const {
    return {{kind,
             algorithm(),
             src.get_desc(),
             dst.get_desc(),
             {stride, stride},
             {K, K},
             {pad, pad},
             {pad, pad}},
            Dnnl::engine()};
  }
#endif
};

// The pools against oneDNN's pooling_forward (inference).
Workload pooling(bool max) {
  const Pool s{max};
  Workload w;
  w.program =
      s.fixed(optimize(forward_program(find_op(max ? "maxpool2d" : "avgpool2d"), DType::f32)));
  w.inputs = {{"x", random_tensor({s.N, s.H, s.W, s.C}, 37)}};
  w.params = s.params();
  w.output_bytes = s.N * s.OH * s.OW * s.C * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto y = std::make_shared<std::vector<float>>(s.N * s.OH * s.OW * s.C);
    auto src = dnnl_memory({s.N, s.C, s.H, s.W}, Tag::nhwc, w.inputs["x"].data<float>());
    auto dst = dnnl_memory({s.N, s.C, s.OH, s.OW}, Tag::nhwc, y->data());
    auto pd = s.forward(dnnl::prop_kind::forward_inference, src, dst);
    Dnnl d{std::make_shared<dnnl::pooling_forward>(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "y", [y] { return y->data(); }});
  }
#endif
  return w;
}

Workload maxpool2d() {
  return pooling(true);
}
Workload avgpool2d() {
  return pooling(false);
}

// The pools' input gradients, dx from x and a random dy. oneDNN's max pooling backward reads the
// positions its forward pass (training) records in a workspace: its peer is that forward pass,
// then the backward, as uops' gradient finds each window's maximum again. Its average pooling
// backward needs no forward pass.
Workload pooling_grad(bool max) {
  const Pool s{max};
  Workload w;
  w.program = s.fixed(gradient_wrt(max ? "maxpool2d" : "avgpool2d", {"x"}));
  w.inputs = {{"x", random_tensor({s.N, s.H, s.W, s.C}, 41)},
              {"dy", random_tensor({s.N, s.OH, s.OW, s.C}, 42)}};
  w.params = s.params();
  w.output_bytes = s.N * s.H * s.W * s.C * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto y = std::make_shared<std::vector<float>>(s.N * s.OH * s.OW * s.C);
    auto dx = std::make_shared<std::vector<float>>(s.N * s.H * s.W * s.C);
    auto src = dnnl_memory({s.N, s.C, s.H, s.W}, Tag::nhwc, w.inputs["x"].data<float>());
    auto dst = dnnl_memory({s.N, s.C, s.OH, s.OW}, Tag::nhwc, y->data());
    auto dy = dnnl_memory({s.N, s.C, s.OH, s.OW}, Tag::nhwc, w.inputs["dy"].data<float>());
    auto diff_src = dnnl_memory({s.N, s.C, s.H, s.W}, Tag::nhwc, dx->data());
    auto fwd = s.forward(dnnl::prop_kind::forward_training, src, dst);
    dnnl::pooling_backward::primitive_desc bwd({s.algorithm(),
                                                diff_src.get_desc(),
                                                dy.get_desc(),
                                                {s.stride, s.stride},
                                                {s.K, s.K},
                                                {s.pad, s.pad},
                                                {s.pad, s.pad}},
                                               Dnnl::engine(), fwd);
    std::vector<Dnnl> steps;
    Dnnl back{std::make_shared<dnnl::pooling_backward>(bwd),
              {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, diff_src}}};
    if (max) {
      memory workspace(fwd.workspace_desc(), Dnnl::engine());
      steps.push_back(
          {std::make_shared<dnnl::pooling_forward>(fwd),
           {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}, {DNNL_ARG_WORKSPACE, workspace}}});
      back.args[DNNL_ARG_WORKSPACE] = workspace;
    }
    steps.push_back(back);
    // y, which only the forward pass reads and writes, lives as long as the peer.
    w.peers.emplace_back("oneDNN", [chain = dnnl_chain(steps), y] { chain(); });
    w.checks.push_back({"oneDNN", "dx", [dx] { return dx->data(); }});
  }
#endif
  return w;
}

Workload maxpool2d_grad() {
  return pooling_grad(true);
}
Workload avgpool2d_grad() {
  return pooling_grad(false);
}

// x [8192, 1024] summed over axis 0 (a bias gradient's reduction): the registry's reductions
// are over the last axis, so the graph is built here.
Workload sum_axis0() {
  const int64_t m = 8192, n = 1024;
  Graph g;
  g.output("y", g.reduce(ReduceOp::sum, {0}, g.input("x", 2, DType::f32)));
  Workload w;
  w.program = optimize(lower(g));
  w.inputs = {{"x", random_tensor({m, n}, 38)}};
  w.output_bytes = n * 4;
  const float* xp = w.inputs["x"].data<float>();
  auto out = std::make_shared<Eigen::RowVectorXf>(n);
  w.eigen = [=] {
    out->noalias() = ConstMap(xp, m, n).colwise().sum();
    benchmark::DoNotOptimize(out->data());
  };
  w.checks.push_back({"Eigen", "y", [out] { return out->data(); }});
#ifdef UOPS_BENCH_ONEDNN
  {
    auto y = std::make_shared<std::vector<float>>(n);
    auto src = dnnl_memory({m, n}, Tag::ab, const_cast<float*>(xp));
    auto dst = dnnl_memory({1, n}, Tag::ab, y->data());
    dnnl::reduction::primitive_desc pd(
        {dnnl::algorithm::reduction_sum, src.get_desc(), dst.get_desc(), 0.0f, 0.0f},
        Dnnl::engine());
    Dnnl d{std::make_shared<dnnl::reduction>(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "y", [y] { return y->data(); }});
  }
#endif
  return w;
}

// A 3x3 stride 1 pad 1 depthwise conv2d of an NHWC [8, 56, 56, 128] input (MobileNet sizes),
// w [3, 3, C]: for oneDNN a convolution with C groups of one channel, the weights reordered once.
// Compiled for its stride and padding as oneDNN's primitive is: 5-7% faster at 1 and 2 threads
// in a C driver (stop 96), within the bench's noise.
Workload depthwise_conv2d() {
  const int64_t N = 8, H = 56, W = 56, C = 128, K = 3;
  Workload w;
  w.params = {{"stride", 1}, {"pad", K / 2}};
  w.program =
      fix_params(optimize(forward_program(find_op("depthwise_conv2d"), DType::f32)), w.params);
  w.inputs = {{"x", random_tensor({N, H, W, C}, 39)}, {"w", random_tensor({K, K, C}, 40)}};
  w.output_bytes = N * H * W * C * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto y = std::make_shared<std::vector<float>>(N * H * W * C);
    auto src = dnnl_memory({N, C, H, W}, Tag::nhwc, w.inputs["x"].data<float>());
    auto dst = dnnl_memory({N, C, H, W}, Tag::nhwc, y->data());
    // uops' w[kh][kw][c] as oneDNN's [groups, 1, 1, kh, kw] by strides.
    memory user_w({{C, 1, 1, K, K}, memory::data_type::f32, {1, 1, 1, K * C, C}}, Dnnl::engine(),
                  w.inputs["w"].data<float>());
    memory::desc any_w({C, 1, 1, K, K}, memory::data_type::f32, Tag::any);
    dnnl::convolution_forward::primitive_desc pd({dnnl::prop_kind::forward_inference,
                                                  dnnl::algorithm::convolution_direct,
                                                  src.get_desc(),
                                                  any_w,
                                                  dst.get_desc(),
                                                  {1, 1},
                                                  {K / 2, K / 2},
                                                  {K / 2, K / 2}},
                                                 Dnnl::engine());
    auto weights = dnnl_reordered(user_w, pd.weights_desc());
    Dnnl d{std::make_shared<dnnl::convolution_forward>(pd),
           {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}}};
    w.peers.emplace_back("oneDNN", d.runner());
    w.checks.push_back({"oneDNN", "y", [y] { return y->data(); }});
  }
#endif
  return w;
}

// depthwise conv2d's whole gradient (dx and dw) at the forward workload's shape: oneDNN's
// grouped convolution backward data, then backward weights, its weights reordered once
// (untimed) and dw reordered to uops' [kh][kw][c] for the check. Compiled for its stride and
// padding, as oneDNN's primitives are: at a stride fixed to 1 the C backend gathers dx
// (backends/c/c_window_gather.h), 1.2 times faster than the scatter (docs/cpu-kernels.md, "Stop
// 96"); the weight gradient runs alike fixed or not.
Workload depthwise_conv2d_grad() {
  const int64_t N = 8, H = 56, W = 56, C = 128, K = 3;
  Workload w;
  w.params = {{"stride", 1}, {"pad", K / 2}};
  w.program =
      fix_params(optimize(gradient_program(find_op("depthwise_conv2d"), DType::f32)), w.params);
  w.inputs = {{"x", random_tensor({N, H, W, C}, 41)},
              {"w", random_tensor({K, K, C}, 42)},
              {"dy", random_tensor({N, H, W, C}, 43)}};
  w.output_bytes = (N * H * W * C + K * K * C) * 4;
#ifdef UOPS_BENCH_ONEDNN
  {
    auto dx = std::make_shared<std::vector<float>>(N * H * W * C);
    auto dw = std::make_shared<std::vector<float>>(K * K * C);
    auto x = dnnl_memory({N, C, H, W}, Tag::nhwc, w.inputs["x"].data<float>());
    auto dy = dnnl_memory({N, C, H, W}, Tag::nhwc, w.inputs["dy"].data<float>());
    auto diff_src = dnnl_memory({N, C, H, W}, Tag::nhwc, dx->data());
    // uops' w[kh][kw][c] as oneDNN's [groups, 1, 1, kh, kw] by strides.
    const memory::desc uops_w({C, 1, 1, K, K}, memory::data_type::f32, {1, 1, 1, K * C, C});
    memory::desc any_w({C, 1, 1, K, K}, memory::data_type::f32, Tag::any);
    const memory::dims strides = {1, 1}, pads = {K / 2, K / 2};
    dnnl::convolution_forward::primitive_desc hint(
        {dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, x.get_desc(),
         any_w, dy.get_desc(), strides, pads, pads},
        Dnnl::engine());
    dnnl::convolution_backward_data::primitive_desc data(
        {dnnl::algorithm::convolution_direct, diff_src.get_desc(), any_w, dy.get_desc(), strides,
         pads, pads},
        Dnnl::engine(), hint);
    dnnl::convolution_backward_weights::primitive_desc weights(
        {dnnl::algorithm::convolution_direct, x.get_desc(), any_w, dy.get_desc(), strides, pads,
         pads},
        Dnnl::engine(), hint);
    auto wm = dnnl_reordered(memory(uops_w, Dnnl::engine(), w.inputs["w"].data<float>()),
                             data.weights_desc());
    memory diff_w(weights.diff_weights_desc(), Dnnl::engine());
    w.peers.emplace_back(
        "oneDNN",
        dnnl_chain(
            {{std::make_shared<dnnl::convolution_backward_data>(data),
              {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DIFF_SRC, diff_src}}},
             {std::make_shared<dnnl::convolution_backward_weights>(weights),
              {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, diff_w}}}}));
    w.checks.push_back({"oneDNN", "dx", [dx] { return dx->data(); }});
    w.checks.push_back({"oneDNN", "dw", [=]() -> const float* {
                          dnnl_reorder(diff_w, memory(uops_w, Dnnl::engine(), dw->data()));
                          return dw->data();
                        }});
  }
#endif
  return w;
}

AGAINST_PEERS(conv2d_bwd_data)
AGAINST_PEERS(conv2d_bwd_weights)
AGAINST_PEERS(conv2d_grad)
AGAINST_PEERS(linear_grad)
AGAINST_PEERS(softmax_bwd)
AGAINST_PEERS(layernorm_bwd)
AGAINST_PEERS(gelu_bwd)
AGAINST_PEERS(batched_matmul)
AGAINST_PEERS(attention_s128)
AGAINST_PEERS(attention_s512)
AGAINST_PEERS(attention_s1024)
AGAINST_PEERS(attention_grad_s512)
AGAINST_PEERS(maxpool2d)
AGAINST_PEERS(avgpool2d)
AGAINST_PEERS(maxpool2d_grad)
AGAINST_PEERS(avgpool2d_grad)
AGAINST_PEERS(sum_axis0)
AGAINST_PEERS(depthwise_conv2d)
AGAINST_PEERS(depthwise_conv2d_grad)

// ---- end of the training workloads

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
