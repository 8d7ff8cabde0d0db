// The C backend's team plan (backends/c/c_team_plan.h): a kernel whose blocks would start teams of
// their own runs in one, whose threads wait only in front of a block that touches what the blocks
// since the last wait wrote. Its plans on real kernels, and kernels whose team starts (sizes past
// the threshold) run on 3 threads (more than the cores: the shares interleave) against the
// interpreter, bit for bit without reassociation, where a missing wait shows as a wrong element.
#include "backends/c/c_team_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "support/compare.h"
#include "support/example_graphs.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/analysis.h"
#include "uops/ir/printer.h"
#include "uops/ops/registry.h"
#include "uops/passes/packed_variant.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using namespace ir;
using cgen::plan_teams;
using cgen::TeamPlan;

// softmax(q k^T / 8) v over a batch, as one graph (the bench's attention).
Program attention() {
  Graph g;
  testing::build_attention(g);
  return optimize(lower(g));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The blocks of a planned program that write tensor t, and the waits in front of them.
std::pair<int, int> writers_and_waits(const Program& p, const TeamPlan& plan, int t) {
  int writers = 0, waits = 0;
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    if (!tensor_sets(p.blocks[bi], int(p.tensors.size())).writes[size_t(t)]) continue;
    ++writers;
    waits += plan.waits[bi];
  }
  return {writers, waits};
}

int tensor_named(const Program& p, const std::string& name) {
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (p.tensors[t].name == name) return int(t);
  return -1;
}

// matmul's tiles and the rows and columns they leave over all write c, each its own elements:
// they share the kernel's team and wait once, after the blocks that zero c where the tiles'
// thread copies would sum into it.
TEST(TeamPlan, TilesOfOneOutputShareTheTeamAndWaitOnlyForWhatTheyRead) {
  Program p = plan_cpu(optimize(forward_program(find_op("matmul"), DType::f32)), {});
  TeamPlan plan = plan_teams(p, false);
  EXPECT_TRUE(plan.one_team);
  auto [writers, waits] = writers_and_waits(p, plan, tensor_named(p, "c"));
  EXPECT_GE(writers, 6) << print(p);
  EXPECT_EQ(waits, 1) << print(p);
  for (const Block& b : p.blocks)
    for (const Loop& l : b.loops) EXPECT_FALSE(l.plan.starts_team()) << print(p);
}

// Attention's packed kernel: the scores' tiles wait for the packed k, the row-local softmax for
// the scores, the output's tiles for the probabilities; nothing else waits.
TEST(TeamPlan, AttentionWaitsOnlyWhereDataFlowsBetweenBlocks) {
  auto packed = packed_variant(attention());
  ASSERT_TRUE(packed);
  Program p = plan_cpu(packed->program, {});
  TeamPlan plan = plan_teams(p, false);
  EXPECT_TRUE(plan.one_team);
  EXPECT_EQ(std::count(plan.waits.begin(), plan.waits.end(), true), 3) << print(p);
}

// A wait runs where both blocks of a pair it keeps in order may run (TeamPlan::orders): matmul's
// one wait keeps the zeros a tile's thread copies would sum into (run only where those copies
// run, or no reduction does) and the rows and columns its tiles leave over apart from the tiles
// after them, so its barrier is under a test; every pair touches one element.
TEST(TeamPlan, AWaitRunsOnlyWhereTheBlocksItOrdersMayRun) {
  Program p = plan_cpu(optimize(forward_program(find_op("matmul"), DType::f32)), {});
  TeamPlan plan = plan_teams(p, false);
  size_t pairs = 0;
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    EXPECT_EQ(plan.waits[bi], !plan.orders[bi].empty()) << bi;
    for (auto [i, k] : plan.orders[bi]) {
      EXPECT_LT(i, bi);
      EXPECT_GE(k, bi);
      ++pairs;
    }
  }
  EXPECT_GE(pairs, 2u) << print(p);
  CCompileOptions options;
  options.threads = 2;
  std::string src = emit_c(optimize(forward_program(find_op("matmul"), DType::f32)), options);
  EXPECT_NE(src.find(") {\n#ifdef _OPENMP\n#pragma omp barrier"), std::string::npos) << src;
}

// A kernel of one team (softmax: a row-local run) runs it through the team's function too, so
// that the caller runs it alone where the team would not start; its rows stay with their
// threads, so nothing waits.
TEST(TeamPlan, AKernelOfOneTeamRunsItThroughTheTeamsFunction) {
  Program p = plan_cpu(optimize(forward_program(find_op("softmax"), DType::f32)), {});
  TeamPlan plan = plan_teams(p, false);
  EXPECT_TRUE(plan.one_team);
  EXPECT_FALSE(plan.always);
  EXPECT_EQ(plan.work.size(), 1u);
  EXPECT_EQ(std::count(plan.waits.begin(), plan.waits.end(), true), 0) << print(p);
}

struct Case {
  std::string what;
  Program program;
  std::map<std::string, std::vector<int64_t>> shapes;
  ParamMap params = {};
  bool one_team_exact = true;  // without reassociation too (cross entropy: one team per block)
};

std::vector<Case> team_cases() {
  auto fwd = [](const char* op) { return optimize(forward_program(find_op(op), DType::f32)); };
  auto grad = [](const char* op, std::vector<std::string> wrt) {
    return optimize(gradient(find_op(op).build(DType::f32), wrt));
  };
  return {
      {"attention", attention(), {{"q", {3, 150, 40}}, {"k", {3, 150, 40}}, {"v", {3, 150, 40}}}},
      {"matmul 131x600x67", fwd("matmul"), {{"a", {131, 600}}, {"b", {600, 67}}}},
      {"matmul 390x70x700", fwd("matmul"), {{"a", {390, 70}}, {"b", {70, 700}}}},
      {"layernorm gradient",
       grad("layernorm", {"x", "gamma", "beta"}),
       {{"x", {700, 401}}, {"gamma", {401}}, {"beta", {401}}, {"dy", {700, 401}}}},
      // Past the threshold, with reassociation, its row sums into dgamma and dbeta run on thread
      // copies, whose reduction ends in a wait: no other wait in front of the rows after them.
      {"layernorm gradient on thread copies",
       grad("layernorm", {"x", "gamma", "beta"}),
       {{"x", {2100, 1024}}, {"gamma", {1024}}, {"beta", {1024}}, {"dy", {2100, 1024}}}},
      // ... and too many columns for copies: its row sums run on one thread, and the rows after
      // them wait for it.
      {"layernorm gradient, too wide for thread copies",
       grad("layernorm", {"x", "gamma", "beta"}),
       {{"x", {64, 32769}}, {"gamma", {32769}}, {"beta", {32769}}, {"dy", {64, 32769}}}},
      {"batched matmul gradient",
       grad("batched_matmul", {"a", "b"}),
       {{"a", {3, 130, 70}}, {"b", {3, 70, 150}}, {"dc", {3, 130, 150}}}},
      {"cross entropy",
       fwd("cross_entropy"),
       {{"logits", {1000, 300}}, {"labels", {1000}}},
       {},
       false},
      {"conv2d",
       fwd("conv2d"),
       {{"x", {2, 20, 21, 16}}, {"w", {40, 3, 3, 16}}},
       {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
      // Its waits in front of the weight gradient's tiles run where the rows and channels the
      // tiles leave over hold elements (the first), and are skipped where they hold none.
      {"conv2d gradient, channels left over",
       grad("conv2d", {"x", "w"}),
       {{"x", {2, 20, 21, 37}}, {"w", {13, 3, 3, 37}}, {"dy", {2, 20, 21, 13}}},
       {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
      {"conv2d gradient, whole tiles",
       grad("conv2d", {"x", "w"}),
       {{"x", {2, 20, 21, 32}}, {"w", {16, 3, 3, 32}}, {"dy", {2, 20, 21, 16}}},
       {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
  };
}

// Each kernel on 3 threads, its team started, 3 runs: bit for bit as the interpreter without
// reassociation, and within rounding with it (thread copies where they fit).
TEST(TeamPlan, KernelsOnOneTeamMatchTheInterpreter) {
  for (bool reassociate : {false, true}) {
    CCompileOptions options;
    options.threads = 3;
    options.reassociate = reassociate;
    for (Case& c : team_cases()) {
      SCOPED_TRACE(c.what + (reassociate ? " (reassociated)" : ""));
      // One team per entry point: each kernel's blocks share it.
      std::string src = emit_c(c.program, options);
      if (reassociate || c.one_team_exact) {
        EXPECT_EQ(count(src, "#pragma omp parallel"), count(src, "\nint uops_kernel"));
        EXPECT_EQ(count(src, "#pragma omp parallel for"), 0);
      }
      auto kernel = compile_c(c.program, options);
      TensorMap in = testing::random_inputs(c.program, c.shapes, 7, 299);
      TensorMap want = interpret(c.program, in, c.params);
      for (int run = 0; run < 3; ++run) {
        TensorMap got = testing::nan_like(want);
        kernel->run_into(in, got, c.params);
        EXPECT_TRUE(testing::same_outputs(want, got, reassociate ? 1e-4 : 0.0)) << run;
      }
    }
  }
}

}  // namespace
}  // namespace uops
