// The CUDA backend: every op's and gradient's source compiles with NVRTC without a warning (CI
// has NVRTC but no GPU), and where a device exists the kernels give the interpreter's results.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/programs.h"
#include "support/random_graph.h"
#include "uops/backends/backends.h"
#include "uops/backends/cuda/cuda_backend.h"

namespace uops {

using namespace ir;

namespace {

bool have_nvrtc() {
  try {
    Graph g;
    g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
    compile_cuda_ptx(lower(g), "compute_80");
    return true;
  } catch (const Error& e) {
    return std::string(e.what()) != "NVRTC not available in this build";
  }
}

void expect_clean_compile(const Program& p, const std::string& label) {
  std::string log;
  try {
    std::string ptx = compile_cuda_ptx(p, "compute_80", &log);
    EXPECT_NE(ptx.find(".entry block0"), std::string::npos) << label;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": " << e.what() << "\n" << emit_cuda(p);
    return;
  }
  EXPECT_EQ(log, "") << label;
}

TEST(Cuda, EveryOpAndGradientCompilesWithNvrtc) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available in this build";
  for (auto& c : testing::op_cases()) expect_clean_compile(c.program, c.label);
}

// With their parameters fixed (uops/ir/fixed_params.h): constants in the kernels.
TEST(Cuda, EveryOpWithFixedParamsCompilesWithNvrtc) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available in this build";
  for (auto& c : testing::op_cases())
    if (!c.params.empty()) expect_clean_compile(fix_params(c.program, c.params), c.label);
}

TEST(Cuda, RandomProgramsCompileWithNvrtc) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC not available in this build";
  for (uint64_t seed = 0; seed < 60; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    Program p = lower(random_case(seed, o).graph);
    expect_clean_compile(seed % 3 ? optimize(p) : p, "seed " + std::to_string(seed));
  }
}

TEST(Cuda, ReductionsUseTheBlockAndCollisionsUseAtomics) {
  std::string softmax = emit_cuda(optimize(forward_program(find_op("softmax"), DType::f32)));
  EXPECT_NE(softmax.find("(cooperative reduction)"), std::string::npos) << softmax;
  EXPECT_NE(softmax.find("__syncthreads()"), std::string::npos);
  std::string grad = emit_cuda(optimize(gradient_program(find_op("gather"), DType::f32)));
  EXPECT_NE(grad.find("atomicAdd("), std::string::npos) << grad;
}

TEST(Cuda, UnavailableBackendSaysWhy) {
  std::string why = cuda_unavailable_reason();
  Graph g;
  g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
  if (why.empty()) {
    EXPECT_EQ(make_backend("cuda", lower(g))->backend(), "cuda");
    return;
  }
  try {
    make_backend("cuda", lower(g));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

TEST(Cuda, EveryOpAndGradientMatchesInterpreterOnDevice) {
  if (!cuda_unavailable_reason().empty())
    GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
  for (auto& c : testing::op_cases()) {
    auto exe = compile_cuda(c.program);
    double tol = c.label.find("f64") != std::string::npos ? 1e-9 : 1e-4;
    EXPECT_TRUE(testing::same_outputs(interpret(c.program, c.inputs, c.params),
                                      exe->run(c.inputs, c.params), tol))
        << c.label;
  }
}

// The differential fuzzer on the device: 500 random programs (UOPS_FUZZ_TRIALS for more),
// optimized or not, against the interpreter; errors must match too. Sums may run in another
// order on the device (atomics, block reductions), hence the tolerance.
TEST(Cuda, RandomProgramsMatchInterpreterOnDevice) {
  if (!cuda_unavailable_reason().empty())
    GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason();
  const char* env = std::getenv("UOPS_FUZZ_TRIALS");
  int trials = env ? std::atoi(env) : 500;
  for (int seed = 0; seed < trials; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    RandomCase c = random_case(uint64_t(seed), o);
    Program p = lower(c.graph);
    if (seed % 3) p = optimize(p);
    std::string want_error, got_error;
    TensorMap want, got;
    try {
      want = interpret(p, c.inputs, c.params);
    } catch (const Error& e) {
      want_error = e.what();
    }
    try {
      got = compile_cuda(p)->run(c.inputs, c.params);
    } catch (const Error& e) {
      got_error = e.what();
    }
    EXPECT_EQ(want_error, got_error) << "seed " << seed;
    EXPECT_TRUE(testing::same_outputs(want, got, o.dtype == DType::f64 ? 1e-9 : 1e-4))
        << "seed " << seed << "\n"
        << print(p) << emit_cuda(p);
  }
}

}  // namespace
}  // namespace uops
