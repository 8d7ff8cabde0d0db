// Executable::run() against its own kernel (issue 30): the generated C entry point called directly
// on buffers allocated once ("bare"), run() (validation, fresh outputs), and run_into() into
// outputs reused from call to call, for the workloads at one thread. Between any two timed
// calls other libraries do similar work, as in the processes: Eigen and oneDNN (where the
// build found it) over tensors of the workload's sizes, allocated per call as a framework's are,
// and an OpenBLAS GEMM (where found).
//
// One line per workload: the cold compile (an empty UOPS_CACHE_DIR), medians of each call's time,
// the median over rounds of run/bare and run_into/bare, and the minor page faults per call
// (getrusage, this thread's). A process's heap decides much of it, so run it as several processes:
//
//   for i in 1 2 3 4 5 6; do build/release/bench/backends/bench_run_overhead; done
//
// Arguments: --rounds=N (default 15); --worker, to run on a thread other than main (its
// allocations come from one of glibc's thread arenas); --no-peers, no other work between calls;
// --threads=N, the kernels' threads (CCompileOptions::threads, default 1); --pause-us=N, the
// calling thread idle for N µs before each timed call, as a server between requests (default 0);
// then names of workloads to keep (a prefix; default all). The OpenMP wait policy is left as the
// environment sets it (the processes set none). At 2 threads after a pause, what a team
// costs depends on where the host's scheduler wakes its worker (docs/cpu-kernels.md, "Between
// runs at two threads").
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "backends/codegen/zero_fill.h"
#include "bench/common/bare_kernel.h"
#include "bench/common/bench_common.h"
#include "uops/backends/c/c_backend.h"
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

using bench::random_tensor;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix>;

struct Workload {
  std::string name;
  Program program;
  TensorMap inputs;
  ParamMap params;
  int64_t rows = 0, cols = 0;  // the shape of the peers' work: as many floats as the output
};

Workload elementwise() {
  Graph g;
  Node x = g.input("x", 1, DType::f32), y = g.input("y", 1, DType::f32);
  Node t = g.binary(BinaryOp::sub, g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, y), x), y);
  g.output("z", g.binary(BinaryOp::max, g.binary(BinaryOp::mul, t, t), x));
  const int64_t n = 1 << 20;
  return {"elementwise 1M",
          optimize(lower(g)),
          {{"x", random_tensor({n}, 1)}, {"y", random_tensor({n}, 2)}},
          {},
          1024,
          1024};
}

Workload op(const char* label, const char* op, TensorMap inputs, ParamMap params, int64_t rows,
            int64_t cols) {
  return {label,
          optimize(forward_program(find_op(op), DType::f32)),
          std::move(inputs),
          std::move(params),
          rows,
          cols};
}

std::vector<Workload> workloads() {
  std::vector<Workload> w;
  w.push_back(elementwise());
  w.push_back(
      op("softmax 4096x1024", "softmax", {{"x", random_tensor({4096, 1024}, 3)}}, {}, 4096, 1024));
  w.push_back(op("layernorm 4096x1024", "layernorm",
                 {{"x", random_tensor({4096, 1024}, 4)},
                  {"gamma", random_tensor({1024}, 5)},
                  {"beta", random_tensor({1024}, 6)}},
                 {}, 4096, 1024));
  w.push_back(op("matmul 512^3", "matmul",
                 {{"a", random_tensor({512, 512}, 7)}, {"b", random_tensor({512, 512}, 8)}}, {},
                 512, 512));
  w.push_back(
      op("conv2d 8x56x56x64 k3", "conv2d",
         {{"x", random_tensor({8, 56, 56, 64}, 9)}, {"w", random_tensor({64, 3, 3, 64}, 10)}},
         {{"stride", 1}, {"pad", 1}, {"dilation", 1}}, 8 * 56 * 56, 64));
  return w;
}

// Other libraries' work between two timed calls, over tensors as large as the workload's output,
// each result allocated by the call that makes it. The results live on across the next timed
// call, as a framework's tensors outlive the op that made them, and are freed after it.
struct OtherWork {
  int64_t rows, cols;
  RowMatrix x;
  OtherWork(int64_t r, int64_t c) : rows(r), cols(c), x(RowMatrix::Random(r, c)) {}

  struct Results {
    RowMatrix eigen;
#ifdef UOPS_BENCH_ONEDNN
    dnnl::memory onednn;
#endif
  };

  Results operator()() const {
    Results out;
    {  // Eigen: a row softmax in two steps, each into a new matrix (as an unfused framework's)
      Eigen::VectorXf mx = x.rowwise().maxCoeff();
      RowMatrix e = (x.colwise() - mx).array().exp().matrix();
      Eigen::VectorXf s = e.rowwise().sum();
      out.eigen = (e.array().colwise() / s.array()).matrix();
      sink(out.eigen.data());
    }
#ifdef UOPS_BENCH_OPENBLAS
    {
      const int n = 256;
      std::vector<float> c(n * n);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x.data(), n, x.data(),
                  n, 0.0f, c.data(), n);
      sink(c.data());
    }
#endif
#ifdef UOPS_BENCH_ONEDNN
    {  // a layer normalization whose destination oneDNN allocates
      using dnnl::memory;
      static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      memory::desc md({rows, cols}, memory::data_type::f32, memory::format_tag::ab);
      memory src(md, engine, const_cast<float*>(x.data())), dst(md, engine);
      dnnl::layer_normalization_forward::primitive_desc pd(
          {dnnl::prop_kind::forward_inference, md, 1e-5f, dnnl::normalization_flags::none}, engine);
      dnnl::stream s(engine);
      dnnl::layer_normalization_forward(pd).execute(s, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      s.wait();
      out.onednn = dst;
    }
#endif
    return out;
  }
  static void sink(const void* p) {
    asm volatile("" : : "r"(p) : "memory");
  }
};

long minor_faults() {
  rusage u;
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

struct Sample {
  double seconds = 0;
  long faults = 0;
};

template <typename F>
Sample timed(F&& f) {
  long f0 = minor_faults();
  auto t0 = std::chrono::steady_clock::now();
  f();
  auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(t1 - t0).count(), minor_faults() - f0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Setup {
  int rounds = 15, threads = 1, pause_us = 0;
  bool peers = true;
};

void run_workload(const Workload& w, const Setup& setup) {
  const int rounds = setup.rounds;
  CCompileOptions o;
  o.threads = setup.threads;
  // Cold: an empty kernel cache of its own, so the compiler runs.
  std::string dir =
      std::filesystem::temp_directory_path() / ("uops-run-overhead-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  setenv("UOPS_CACHE_DIR", dir.c_str(), 1);
  auto c0 = std::chrono::steady_clock::now();
  auto exe = compile_c(w.program, o);
  double cold = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  // The same kernel, loaded again from the cache (dlopen gives the same object), called directly.
  bench::BareKernel bare_kernel(w.program, o, w.inputs, w.params);
  std::filesystem::remove_all(dir);
  unsetenv("UOPS_CACHE_DIR");
  // What run() allocates per call (outputs and temporaries), and how much of it starts from
  // zero (the kernel writes those zeros, bare or not, less what tiles that start from zero
  // store: cgen::Zeros::by_entry).
  std::vector<bool> zero = codegen::needs_zero_fill(bare_kernel.program());
  double alloc_mb = 0, zero_mb = 0;
  for (size_t t = 0; t < zero.size(); ++t) {
    double mb = double(bare_kernel.buffers()[t].bytes.size()) / (1 << 20);
    alloc_mb += mb;
    zero_mb += zero[t] ? mb : 0;
  }

  OtherWork other(w.rows, w.cols);
  TensorMap reused;
  exe->run_into(w.inputs, reused, w.params);
  std::vector<double> bare, run, into, run_ratio, into_ratio;
  long run_faults = 0, into_faults = 0, bare_faults = 0;
  int faulting_runs = 0;  // runs that faulted in a quarter of what they allocate, or more
  for (int r = 0; r < rounds; ++r) {
    // The three calls in an order that rotates from round to round, so that none always goes
    // first (after a peer's work, caches and the core's clock differ from call to call).
    Sample sb, sr, si;
    std::function<void()> calls[3] = {
        [&] { sb = timed(bare_kernel); },
        [&] {
          sr = timed(
              [&] { OtherWork::sink(exe->run(w.inputs, w.params).begin()->second.bytes.data()); });
        },
        [&] { si = timed([&] { exe->run_into(w.inputs, reused, w.params); }); }};
    for (int c = 0; c < 3; ++c) {
      auto held = setup.peers ? other() : OtherWork::Results{};
      if (setup.pause_us > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(setup.pause_us));
      calls[(r + c) % 3]();
    }
    bare.push_back(sb.seconds);
    run.push_back(sr.seconds);
    into.push_back(si.seconds);
    run_ratio.push_back(sr.seconds / sb.seconds);
    into_ratio.push_back(si.seconds / sb.seconds);
    bare_faults += sb.faults;
    run_faults += sr.faults;
    faulting_runs += sr.faults * 4096.0 >= alloc_mb * (1 << 20) / 4;
    into_faults += si.faults;
  }
  std::printf("%-22s %5.1f/%-5.1f %7.0f %8.3f %8.3f %8.3f %8.3f %9.3f %8.1f %8.1f %8.1f %4d/%d\n",
              w.name.c_str(), alloc_mb, zero_mb, cold * 1e3, median(bare) * 1e3, median(run) * 1e3,
              median(into) * 1e3, median(run_ratio), median(into_ratio),
              double(bare_faults) / rounds, double(run_faults) / rounds,
              double(into_faults) / rounds, faulting_runs, rounds);
  std::fflush(stdout);
}

}  // namespace
}  // namespace uops

int main(int argc, char** argv) {
  uops::Setup setup;
  bool worker = false;
  std::vector<std::string> keep;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--rounds=", 0) == 0)
      setup.rounds = std::max(1, std::atoi(a.c_str() + 9));
    else if (a.rfind("--threads=", 0) == 0)
      setup.threads = std::clamp(std::atoi(a.c_str() + 10), 1, 256);
    else if (a.rfind("--pause-us=", 0) == 0)
      setup.pause_us = std::clamp(std::atoi(a.c_str() + 11), 0, 10'000'000);
    else if (a == "--worker")
      worker = true;
    else if (a == "--no-peers")
      setup.peers = false;
    else
      keep.push_back(a);
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* bind = std::getenv("OMP_PROC_BIND");
  std::printf(
      "pid %d, %s thread, OMP_WAIT_POLICY %s, OMP_PROC_BIND %s, %d OpenMP threads for the "
      "peers, a pause of %d µs before each call, other work: %s%s%s\n",
      int(getpid()), worker ? "a worker" : "the main", policy ? policy : "unset",
      bind ? bind : "unset", omp_get_max_threads(), setup.pause_us, setup.peers ? "Eigen" : "none",
#ifdef UOPS_BENCH_OPENBLAS
      setup.peers ? ", OpenBLAS" : "",
#else
      "",
#endif
#ifdef UOPS_BENCH_ONEDNN
      setup.peers ? ", oneDNN" : ""
#else
      ""
#endif
  );
  const std::string label = "workload (" + std::to_string(setup.threads) +
                            (setup.threads == 1 ? " thread)" : " threads)");
  std::printf("%-22s %11s %7s %8s %8s %8s %8s %9s %8s %8s %8s %s\n", label.c_str(), "MB new/zero",
              "cold_ms", "bare_ms", "run_ms", "into_ms", "run/bare", "into/bare", "flt/bare",
              "flt/run", "flt/into", "faulting runs");
  auto all = [&] {
    for (auto& w : uops::workloads()) {
      if (!keep.empty() && std::find_if(keep.begin(), keep.end(), [&](const std::string& k) {
                             return w.name.rfind(k, 0) == 0;
                           }) == keep.end())
        continue;
      uops::run_workload(w, setup);
    }
  };
  // A framework's executor thread: its allocations come from one of glibc's thread arenas.
  if (worker)
    std::thread(all).join();
  else
    all();
  return 0;
}
