// The C backend's prefetches in register tiles (backends/c/c_tile_prefetch.h): which tiles fetch
// which operand ahead (an operand that moves a row each step: matmul's gradient db = a^T dc reads
// a[i, j..j+5] at step i), that the plan passes the verifier, and that the kernels that fetch give
// the interpreter's results bit for bit, at sizes where the last steps' fetches run past the
// tensor and at sizes with rows and columns left over after the tiles.
#include "backends/c/c_tile_prefetch.h"

#include <gtest/gtest.h>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using namespace ir;

Program planned(const Program& optimized) {
  Program p = plan_cpu(optimized, CpuTarget{});
  cgen::plan_tile_prefetch(p);
  return p;
}

// Each prefetch of p's tiles: the tensor's name, and its first axis evaluated at step 5 of the
// loop right outside the tile's loops (every other loop at 0).
std::vector<std::pair<std::string, int64_t>> fetches(const Program& p) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const Block& b : p.blocks)
    for (const Loop& l : b.loops) {
      if (!l.plan.tile) continue;
      const int step = b.loops[b.loops.size() - size_t(l.plan.tile) - 1].var;
      IndexEnv env;
      env.var = [&](int v) { return v == step ? int64_t(5) : int64_t(0); };
      for (auto& [t, index] : l.plan.prefetch)
        out.emplace_back(p.tensors[size_t(t)].name, evaluate(index[0], env));
    }
  return out;
}

TEST(TilePrefetch, OperandsThatMoveARowEachStepAreFetchedAhead) {
  const Program grad = planned(optimize(gradient_program(find_op("matmul"), DType::f32)));
  EXPECT_EQ(verify(grad), std::vector<std::string>{}) << print(grad);
  auto got = fetches(grad);
  ASSERT_FALSE(got.empty()) << print(grad);
  // Only db's a (da = dc b^T reads dc along its rows, b through its column-major copy or in
  // dot tiles), kTilePrefetchSteps rows ahead of the step.
  for (auto& [name, row] : got) {
    EXPECT_EQ(name, "a");
    EXPECT_EQ(row, 5 + cgen::kTilePrefetchSteps);
  }
  // Forward passes read their one-per-column operand along its row (matmul's a[i, k] at step k,
  // conv2d's x over its input channels): nothing to fetch.
  for (const char* op : {"matmul", "batched_matmul", "conv2d", "linear"}) {
    const Program p = planned(optimize(forward_program(find_op(op), DType::f32)));
    EXPECT_TRUE(fetches(p).empty()) << op << "\n" << print(p);
  }
}

// A prefetch belongs to a loop in lanes or to a register tile's loop; elsewhere the verifier
// refuses it.
TEST(TilePrefetch, TheVerifierRefusesAPrefetchOutsideATile) {
  Program p = planned(optimize(gradient_program(find_op("matmul"), DType::f32)));
  for (Block& b : p.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k) {
      LoopPlan& plan = b.loops[k].plan;
      if (!plan.tile || plan.prefetch.empty()) continue;
      b.loops[b.loops.size() - 1].plan.prefetch = plan.prefetch;
      auto errors = verify(p);
      ASSERT_FALSE(errors.empty());
      EXPECT_NE(errors[0].find("prefetches outside a loop in lanes or a register tile"),
                std::string::npos)
          << errors[0];
      return;
    }
  FAIL() << "no tile prefetches\n" << print(p);
}

TEST(TilePrefetch, FetchingKernelsMatchTheInterpreterBitForBit) {
  struct Case {
    const char* op;
    std::map<std::string, std::vector<int64_t>> shapes;
    ParamMap params;
  };
  // Reductions shorter than the fetch distance, and tiles with rows and columns left over.
  const std::vector<Case> cases = {
      {"matmul", {{"a", {5, 13}}, {"b", {13, 70}}, {"dc", {5, 70}}}, {}},
      {"matmul", {{"a", {37, 29}}, {"b", {29, 131}}, {"dc", {37, 131}}}, {}},
      {"batched_matmul", {{"a", {2, 19, 7}}, {"b", {2, 7, 66}}, {"dc", {2, 19, 66}}}, {}},
      {"linear", {{"x", {23, 17}}, {"w", {65, 17}}, {"dy", {23, 65}}}, {}},
      {"conv2d",
       {{"x", {2, 7, 9, 20}}, {"w", {24, 3, 3, 20}}, {"dy", {2, 7, 9, 24}}},
       {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
  };
  for (const Case& c : cases) {
    const Program p = optimize(gradient_program(find_op(c.op), DType::f32));
    ASSERT_NE(emit_c(p).find("uops_prefetch_at("), std::string::npos) << c.op;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(c.op) + " on " + std::to_string(threads) + " threads");
      CCompileOptions options;
      options.threads = threads;
      options.reassociate = false;
      auto kernel = compile_c(p, options);
      for (uint64_t seed : {1, 2}) {
        TensorMap in = testing::random_inputs(p, c.shapes, seed);
        TensorMap want = interpret(p, in, c.params);
        TensorMap got = testing::nan_like(want);
        kernel->run_into(in, got, c.params);
        EXPECT_TRUE(testing::same_outputs(want, got)) << seed;
      }
    }
  }
}

}  // namespace
}  // namespace uops
