// The C backend's lane groups (backends/c/c_lane_groups.h): a loop whose iterations each reduce
// scalars over the loops inside it runs in groups of 16, one iteration per SIMD lane. Its plan on
// the kernels it is for (a pool's argmax over its window, per channel; an argmax or argmin down a
// column), and those kernels against the interpreter, bit for bit: channel counts that leave
// iterations over after the groups, windows at the borders, and inputs of a few values, NaN and
// infinities among them, where the first of equal values must win in every lane.
#include "backends/c/c_lane_groups.h"

#include <gtest/gtest.h>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/printer.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using namespace ir;

Program pool_gradient() {
  return optimize(gradient(find_op("maxpool2d").build(DType::f32), {"x"}));
}

// x [A, B, R, C] reduced by `op` over axis 2: the columns' loop is outside the reduction's, inside
// the parallel loop and the one it collapses (a parallel loop does not run in groups).
Program column_reduce(ReduceOp op) {
  Graph g;
  g.output("y", g.reduce(op, {2}, g.input("x", 4, DType::f32)));
  return optimize(lower(g));
}

// The loops of p's C plan that run in lane groups, each with the reduction it groups.
std::vector<std::pair<const Loop*, ReduceOp>> grouped(const Program& p) {
  std::vector<std::pair<const Loop*, ReduceOp>> out;
  for (const Block& b : p.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k)
      if (b.loops[k].plan.lane_group)
        for (auto& s : b.loops.back().stmts)
          if (s.kind == StmtKind::reduce) out.push_back({&b.loops[k], s.op});
  return out;
}

TEST(LaneGroups, APoolsArgmaxAndAColumnsArgminRunInGroupsOf16) {
  for (auto [what, program, op] :
       {std::tuple{"maxpool2d's gradient", pool_gradient(), ReduceOp::argmax},
        {"argmin down columns", column_reduce(ReduceOp::argmin), ReduceOp::argmin}}) {
    SCOPED_TRACE(what);
    Program p = plan_cpu(program, CpuTarget{});
    cgen::plan_lane_groups(p);
    auto loops = grouped(p);
    ASSERT_EQ(loops.size(), 1u) << print(p);
    EXPECT_EQ(loops[0].first->plan.lane_group, cgen::kLaneGroup);
    EXPECT_EQ(loops[0].second, op);
    EXPECT_NE(emit_c(program).find("_group uops_lanes_of(16, 4)"), std::string::npos);
  }
}

// A pool's window fixed to k x k holds positions below k^2: narrow (32-bit lanes, stored as they
// are) up to 2^24 = 4096^2, where f32 still holds each one exactly; not past it, nor where k is
// known only at run time.
TEST(LaneGroups, PositionsAreNarrowWhereTheFixedWindowKeepsThemBelow2To24) {
  for (auto [k, narrow] :
       {std::pair<int64_t, bool>{0, false}, {3, true}, {4096, true}, {4097, false}}) {
    SCOPED_TRACE(k ? "k fixed to " + std::to_string(k) : std::string("k at run time"));
    Program program = pool_gradient();
    if (k) program = fix_params(program, {{"k", k}, {"stride", 2}, {"pad", 1}});
    Program p = plan_cpu(program, CpuTarget{});
    cgen::plan_lane_groups(p);
    auto loops = grouped(p);
    ASSERT_EQ(loops.size(), 1u) << print(p);
    EXPECT_EQ(loops[0].first->plan.narrow_positions, narrow);
    const std::string c = emit_c(program);
    EXPECT_EQ(c.find("int32_t c0_arg_group uops_lanes_of(16, 4)") != std::string::npos, narrow);
    EXPECT_EQ(c.find("to_i32f(") == std::string::npos, narrow) << c;
  }
}

TEST(LaneGroups, GroupedKernelsMatchTheInterpreterBitForBit) {
  struct Case {
    std::string what;
    Program program;
    std::map<std::string, std::vector<int64_t>> shapes;
    ParamMap params;
  };
  std::vector<Case> cases = {
      {"maxpool2d 3x3 stride 2 pad 1, 37 channels",
       pool_gradient(),
       {{"x", {2, 13, 11, 37}}, {"dy", {2, 7, 6, 37}}},
       {{"k", 3}, {"stride", 2}, {"pad", 1}}},
      {"maxpool2d 2x2 stride 1, 16 channels",
       pool_gradient(),
       {{"x", {1, 6, 5, 16}}, {"dy", {1, 5, 4, 16}}},
       {{"k", 2}, {"stride", 1}, {"pad", 0}}},
      {"argmax down 40 columns", column_reduce(ReduceOp::argmax), {{"x", {2, 3, 9, 40}}}, {}},
      {"argmin down 33 columns", column_reduce(ReduceOp::argmin), {{"x", {3, 2, 17, 33}}}, {}},
  };
  // The pools also with their parameters fixed, as a primitive is made: narrow positions.
  for (size_t i = 0, n = cases.size(); i < n; ++i)
    if (!cases[i].params.empty())
      cases.push_back({cases[i].what + ", fixed", fix_params(cases[i].program, cases[i].params),
                       cases[i].shapes, cases[i].params});
  for (int threads : {1, 3})
    for (Case& c : cases) {
      SCOPED_TRACE(c.what + " on " + std::to_string(threads) + " threads");
      CCompileOptions options;
      options.threads = threads;
      auto kernel = compile_c(c.program, options);
      for (uint64_t seed : {1, 2, 3}) {
        TensorMap in = testing::few_values(c.program, c.shapes, seed);
        TensorMap want = interpret(c.program, in, c.params);
        TensorMap got = testing::nan_like(want);
        kernel->run_into(in, got, c.params);
        EXPECT_TRUE(testing::same_outputs(want, got)) << seed;
      }
    }
}

}  // namespace
}  // namespace uops
