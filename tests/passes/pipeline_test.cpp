// The pipeline (passes/pipeline): every pass it runs can be dumped by name.
#include "uops/passes/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "passes/threads.h"
#include "passes/tiling.h"
#include "support/random_graph.h"
#include "uops/ir/binding.h"
#include "uops/ir/printer.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/parallel_loops.h"
#include "uops/uops.h"

namespace uops {

namespace {

TEST(Pipeline, DumpsAndNamesPasses) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, g.unary(UnaryOp::neg, x)));
  std::ostringstream out;
  PipelineOptions o;
  o.dump_after = "all";
  o.dump = &out;
  plan_cpu(optimize(lower(g), o), {}, o);
  for (auto& name : pass_names())
    EXPECT_NE(out.str().find("// after " + name + "\n"), std::string::npos) << name;
  // Every pass optimize() runs is one that dump_after accepts by name (storage_reuse was not).
  std::istringstream lines(out.str());
  auto names = pass_names();
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// after ", 0) != 0) continue;
    std::string name = line.substr(9);
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    std::ostringstream one;
    PipelineOptions only{false, name, &one};
    EXPECT_NO_THROW(plan_cpu(optimize(lower(g), only), {}, only)) << name;
    EXPECT_NE(one.str().find("// after " + name + "\n"), std::string::npos) << name;
  }
  o.dump_after = "fusion";
  EXPECT_THROW(optimize(lower(g), o), Error);
}

// The C backend's passes (plan_cpu): each one can be dumped and shows the plans it decided, and
// the verifier passes after each on every op's programs.
// A team's work counts a loop over one tile ([s, min(e, s + 128)), tile_reductions' k) as the
// tile: counted as once, matmul's 512 rows in tiles of 12 fell under the threshold and ran on one
// thread.
TEST(Pipeline, WorkCountsALoopOverOneTileAsTheTile) {
  using namespace ir;
  Program p;
  p.num_vars = 2;
  Block b;
  Loop k = passes::counted(0, idx::constant(500)), j = passes::counted(1, idx::constant(32));
  Loop tiles = passes::split_into_tiles(p, k, 128);
  b.loops = {tiles, k, j};
  int64_t work = 0;
  ASSERT_TRUE(is_const(passes::work_from(p, b, 0), &work)) << to_string(passes::work_from(p, b, 0));
  EXPECT_EQ(work, 4 * 128 * 32);
  // ... and a loop shorter than its tile as itself: k = 100 in tiles of 128 is 100, not 128.
  Loop short_k = passes::counted(0, idx::constant(100));
  b.loops = {passes::split_into_tiles(p, short_k, 128), short_k, j};
  ASSERT_TRUE(is_const(passes::work_from(p, b, 0), &work));
  EXPECT_EQ(work, 100 * 32);
}

// A register tile of rows and columns counts its columns in vectors (threads.h): at 512^3
// matmul's 6 x 64 tiles hold 510 x 512 x 512 / 16 vector multiply-adds, the tile of the two rows
// they leave 2 x 512 x 512 / 16; at 511^3 the one row left over, run in one-row runs of 64
// columns, counts its 511 x 448 iterations, as a fill counts its elements. At 96^3 the tiles'
// 96 x 96 x 96 / 16 stay under the threshold.
TEST(Pipeline, WorkCountsARegisterTilesColumnsInVectors) {
  using namespace ir;
  Program p = plan_cpu(optimize(forward_program(find_op("matmul"), DType::f32)), {});
  auto works = [&](int64_t n, int tile_loops) {
    Binding bound =
        bind(p, TensorTypeMap{{"a", {DType::f32, {n, n}}}, {"b", {DType::f32, {n, n}}}}, {});
    std::vector<int64_t> found;
    for (const Block& b : p.blocks) {
      const LoopPlan& outer = b.loops[0].plan;
      int64_t columns = 0, work = outer.work ? evaluate(outer.work, bound.env()) : 0;
      int tile = 0;
      for (const Loop& l : b.loops) tile = std::max(tile, l.plan.tile);
      if (work > 0 && tile == tile_loops && is_const(b.loops.back().end, &columns) && columns == 64)
        found.push_back(work);
    }
    return found;
  };
  const int64_t c = kTileColumnCost;
  EXPECT_EQ(works(512, 2),
            (std::vector<int64_t>{510 * 512 * 512 / 16 * c, 2 * 512 * 512 / 16 * c}));
  EXPECT_EQ(works(512, 1), std::vector<int64_t>{});
  EXPECT_EQ(works(511, 1), std::vector<int64_t>{511 * 448});
  ASSERT_EQ(works(96, 2).size(), 1u);
  EXPECT_LT(works(96, 2)[0], kParallelThreshold);
  EXPECT_GE(works(96, 2)[0] * 16, kParallelThreshold);
  // At 128^3 the reduction's one tile of 512 counts its 128 (counted as 512, matmul 128^3 started
  // a team: 2.3x slower at two threads than on one on the Zen 5 host).
  ASSERT_EQ(works(128, 2).size(), 2u);
  EXPECT_EQ(works(128, 2),
            (std::vector<int64_t>{126 * 128 * 128 / 16 * c, 2 * 128 * 128 / 16 * c}));
  EXPECT_LT(works(128, 2)[0], kParallelThreshold);
}

// A team's work weighs each iteration by its vector math calls (parallel_loops.h): on the Zen 5
// host an elementwise loop of arithmetic lost with a team up to 2^20 iterations, one that calls
// tanh and exp won from 2^19. A size known at run time is weighed in the kernel as well.
TEST(Pipeline, WorkWeighsEachIterationByItsMathCalls) {
  using namespace ir;
  auto work_at = [](bool calls, int64_t n) {
    Graph g;
    Node x = g.input("x", 1, DType::f32);
    Node cheap = g.binary(BinaryOp::mul, g.binary(BinaryOp::add, x, x), x);
    g.output("y", calls
                      ? g.binary(BinaryOp::mul, g.unary(UnaryOp::tanh, x), g.unary(UnaryOp::exp, x))
                      : cheap);
    Program p = plan_cpu(optimize(lower(g)), {});
    const LoopPlan& outer = p.blocks.at(0).loops.at(0).plan;
    EXPECT_EQ(outer.threads, LoopPlan::Threads::team_if);
    Binding bound = bind(p, TensorTypeMap{{"x", {DType::f32, {n}}}}, {});
    return outer.work ? evaluate(outer.work, bound.env()) : int64_t{-1};
  };
  EXPECT_EQ(work_at(false, 1000), 1000);
  EXPECT_EQ(work_at(true, 1000), 1000 * (1 + 2 * kMathCallCost));
  EXPECT_LT(work_at(false, 1 << 20), kParallelThreshold);
  EXPECT_GE(work_at(true, 1 << 19), kParallelThreshold);
  EXPECT_LT(work_at(true, 1 << 18), kParallelThreshold);
}

// A block with nothing to do at a shape (the rows and columns its tiles leave over, often none)
// skips in front of its team: entering an OpenMP region costs about a microsecond, on one thread
// too (12 of matmul 128^3's 36 us).
TEST(Pipeline, BlocksWithNothingToDoStartNoTeam) {
  using namespace ir;
  auto two = [](const char* x, std::vector<int64_t> xs, const char* y, std::vector<int64_t> ys) {
    return TensorTypeMap{{x, {DType::f32, xs}}, {y, {DType::f32, ys}}};
  };
  struct Case {
    const char* op;
    TensorTypeMap types;
    ParamMap params;
  };
  std::vector<Case> cases;
  for (int64_t n : {128, 126, 64, 16, 7})
    cases.push_back({"matmul", two("a", {n, n}, "b", {n, 2 * n}), {}});
  cases.push_back({"matmul", two("a", {100, 37}, "b", {37, 10}), {}});
  cases.push_back({"batched_matmul", two("a", {4, 128, 64}, "b", {4, 64, 128}), {}});
  cases.push_back({"batched_matmul", two("a", {3, 12, 64}, "b", {3, 64, 80}), {}});
  cases.push_back({"conv2d",
                   two("x", {2, 14, 14, 32}, "w", {64, 3, 3, 32}),
                   {{"stride", 1}, {"pad", 1}, {"dilation", 1}}});
  int skipped_blocks = 0;
  for (const Case& c : cases) {
    Program p = plan_cpu(optimize(forward_program(find_op(c.op), DType::f32)), {});
    Binding bound = ir::bind(p, c.types, c.params);
    IndexEnv env = bound.env();
    auto empty = [&](const Loop& l) { return evaluate(l.start, env) >= evaluate(l.end, env); };
    for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
      const Block& b = p.blocks[bi];
      bool team = false, idle = false;
      for (const Loop& l : b.loops) {
        team |= l.plan.starts_team();
        idle |= !bounds_use_vars(l) && empty(l);
      }
      // The first block of a row-local run starts the team of every block in the run (conv2d's
      // zeros beside its tiles: none at 14 pixels, which tiles of 7 fill).
      if (!team || !idle || (b.loops[0].plan.row_local && !empty(b.loops[0]))) continue;
      bool skipped = false;
      for (int m : b.loops[0].plan.empty_tests) skipped |= empty(b.loops[size_t(m)]);
      EXPECT_TRUE(skipped) << c.op << " block " << bi << "\n" << print(p);
      skipped_blocks += skipped;
    }
  }
  EXPECT_GE(skipped_blocks, 10);
}

TEST(Pipeline, CpuPassesShowTheirPlans) {
  Program softmax = optimize(forward_program(find_op("softmax"), DType::f32));
  auto after = [&](const std::string& pass, const CpuTarget& target) {
    std::ostringstream out;
    PipelineOptions o{true, pass, &out};
    plan_cpu(softmax, target, o);
    return out.str();
  };
  EXPECT_NE(after("parallel_loops", {}).find("[parallel team_if(x.0 * x.1)]"), std::string::npos)
      << after("parallel_loops", {});
  EXPECT_NE(after("simd_reductions", {}).find("[simd c0 max]"), std::string::npos)
      << after("simd_reductions", {});
  EXPECT_EQ(after("simd_reductions", {false, false}).find("simd c"), std::string::npos);
  Program gelu = optimize(gradient_program(find_op("gelu"), DType::f32));
  std::ostringstream math, exact;
  plan_cpu(gelu, {}, {true, "simd_math", &math});
  EXPECT_NE(math.str().find("[simd math]"), std::string::npos) << math.str();
  plan_cpu(gelu, {false, false}, {true, "simd_math", &exact});
  EXPECT_EQ(exact.str().find("simd math"), std::string::npos) << exact.str();
  EXPECT_NE(after("row_local_runs", {}).find("row_local 2"), std::string::npos)
      << after("row_local_runs", {});
  EXPECT_NE(after("parallel_loops", {true, true}).find("[parallel worksharing, nowait]"),
            std::string::npos)
      << after("parallel_loops", {true, true});
  Program matmul = optimize(forward_program(find_op("matmul"), DType::f32));
  std::ostringstream tiles;
  plan_cpu(matmul, {}, {true, "tile_registers", &tiles});
  EXPECT_NE(tiles.str().find("// after tile_registers\n"), std::string::npos);
  std::ostringstream kept;
  plan_cpu(matmul, {}, {true, "register_tiles", &kept});
  EXPECT_NE(kept.str().find("tile of the last 2 loops"), std::string::npos) << kept.str();
  std::ostringstream tested;
  plan_cpu(matmul, {}, {true, "empty_range_tests", &tested});
  EXPECT_NE(tested.str().find("skip if loop"), std::string::npos) << tested.str();

  for (const OpDef& op : all_ops())
    for (bool grad : {false, true}) {
      Program p = grad ? gradient_program(op, DType::f32) : forward_program(op, DType::f32);
      for (bool worksharing : {false, true})
        EXPECT_NO_THROW(plan_cpu(optimize(p), {true, worksharing}, {true, "", nullptr}))
            << op.name << (grad ? " grad" : "");
    }
  // Random program 958 (the C fuzzer's options) has its parallel loop among a register tile's
  // loops: a team sharing it would store the local tile back from every thread.
  RandomGraphOptions o958;
  o958.max_nodes = 4 + 958 % 12;
  o958.empty_raising = true;
  Program shared = plan_cpu(optimize(lower(random_case(958, o958).graph)), {true, true});
  for (auto& b : shared.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k)
      for (size_t x = k + 1; b.loops[k].plan.tile && x < b.loops.size(); ++x)
        EXPECT_NE(b.loops[x].plan.threads, ir::LoopPlan::Threads::worksharing) << ir::print(shared);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    RandomGraphOptions o;
    o.contractions = seed % 2;
    Program p = lower(random_case(seed, o).graph);
    EXPECT_NO_THROW(plan_cpu(p, {}, {true, "", nullptr})) << "seed " << seed;
    EXPECT_NO_THROW(plan_cpu(optimize(p), {}, {true, "", nullptr})) << "seed " << seed;
  }
}

}  // namespace
}  // namespace uops
