// The verifier (include/uops/ir/verifier.h): a lowered program is valid, and breaking it in any
// one way the header lists gives that invariant's message.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "uops/ir.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

// Tensors: 0 x, 1 ix, 2 s, 3 a, 4 sel, 5 sh. Blocks: 0 reduce sum (carries c0), 1 reduce argmax
// (carries c1), 2 select, 3 reindex.
Program valid_program() {
  Graph g;
  g.param("k");
  Node x = g.input("x", 2, DType::f32), ix = g.input("ix", 2, DType::i32);
  g.output("s", g.reduce(ReduceOp::sum, {1}, x));
  g.output("a", g.reduce(ReduceOp::argmax, {1}, x));
  g.output("sel", g.select(1, x, ix));
  g.output("sh", g.reindex(x, {"dA0 + $k", "dA1"}, {"i0", "i1"}));
  return lower(g);
}

Stmt& reindex_store(Program& p) {
  return p.blocks[3].loops[1].stmts[0];
}

void expect_invalid(const std::function<void(Program&)>& breaks, const std::string& message) {
  Program p = valid_program();
  breaks(p);
  std::vector<std::string> errors = verify(p);
  std::string all;
  for (auto& e : errors) all += "\n  " + e;
  EXPECT_NE(std::find(errors.begin(), errors.end(), message), errors.end())
      << "expected: " << message << "\ngot:" << all;
  EXPECT_THROW(verify_or_throw(p, "test"), InternalError);
}

TEST(Verifier, LoweredProgramIsValid) {
  Program p = valid_program();
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  EXPECT_NO_THROW(verify_or_throw(p, "lowering"));
}

TEST(Verifier, InputShapeIsItsOwnSize) {
  expect_invalid([](Program& p) { p.tensors[0].shape[1] = idx::constant(3); },
                 "input 'x' axis 1 is not its own size");
}

TEST(Verifier, ShapesUseNoLoopVariable) {
  expect_invalid([](Program& p) { p.tensors[2].shape[0] = idx::var(0); },
                 "the shape of 's' uses a loop variable or data");
}

TEST(Verifier, ShapesUseOnlyInputAxes) {
  expect_invalid([](Program& p) { p.tensors[2].shape[0] = idx::dim(4, 0); },
                 "the shape of 's' names an axis that is no input axis");
  expect_invalid([](Program& p) { p.tensors[2].shape[0] = idx::dim(0, 2); },
                 "the shape of 's' names an axis that is no input axis");
}

TEST(Verifier, ShapesUseDeclaredParameters) {
  expect_invalid([](Program& p) { p.params.clear(); },
                 "the shape of 'sh' uses the undeclared parameter $k");
}

TEST(Verifier, AssertionsAreStatic) {
  expect_invalid([](Program& p) { p.equalities[0].a = idx::var(1); },
                 "an assertion uses a loop variable or data");
}

TEST(Verifier, CarriedIdsInRange) {
  expect_invalid([](Program& p) { p.blocks[0].loops[0].carried[0].id = 7; },
                 "block 0: carried c7 out of range");
}

TEST(Verifier, CarriedOwnedByOneLoop) {
  expect_invalid(
      [](Program& p) {
        p.blocks[1].loops[0].carried.push_back({0, ReduceOp::sum});
      },
      "carried c0 is owned by two loops");
}

TEST(Verifier, OutputsAreWritten) {
  expect_invalid([](Program& p) { p.blocks.pop_back(); }, "output 'sh' is never written");
}

TEST(Verifier, LoopVariablesOnlyInsideTheirLoop) {
  expect_invalid([](Program& p) { reindex_store(p).index[0] = idx::var(0); },
                 "block 3 uses v0 outside its loop");
  expect_invalid([](Program& p) { p.blocks[3].loops[0].end = idx::var(7); },
                 "block 3 loop bound uses v7 outside its loop");
}

TEST(Verifier, DataLeavesReadI32Tensors) {
  expect_invalid(
      [](Program& p) {
        Stmt& s = p.blocks[2].loops[1].stmts[0];
        std::vector<Index> at = s.value->index;
        at[1] = idx::data(0, {idx::var(4), idx::var(5)});  // x is f32
        s.value = val::load(0, at);
      },
      "block 2 reads an index from something that is no i32 tensor of that rank");
}

TEST(Verifier, TensorsExist) {
  expect_invalid([](Program& p) { reindex_store(p).tensor = 99; },
                 "block 3 names tensor #99 which does not exist");
}

TEST(Verifier, AccessRanksMatch) {
  expect_invalid([](Program& p) { reindex_store(p).index.pop_back(); },
                 "block 3 indexes 'sh' with 1 expressions, its rank is 2");
}

TEST(Verifier, StatementsHaveValues) {
  expect_invalid([](Program& p) { reindex_store(p).value = nullptr; }, "block 3 has no value");
}

TEST(Verifier, CarriedReadOnlyInsideItsLoop) {
  expect_invalid([](Program& p) { reindex_store(p).value = val::carried(0); },
                 "block 3 reads c0 outside its loop");
}

TEST(Verifier, BlocksHaveLoops) {
  expect_invalid([](Program& p) { p.blocks[3].loops.clear(); }, "block 3 has no loops");
}

TEST(Verifier, LoopVariablesAreDistinct) {
  expect_invalid([](Program& p) { p.blocks[3].loops[1].var = 6; },
                 "block 3: loop variable v6 is reused or out of range");
  expect_invalid([](Program& p) { p.blocks[3].loops[1].var = 99; },
                 "block 3: loop variable v99 is reused or out of range");
}

TEST(Verifier, CarriedNeverMean) {
  expect_invalid(
      [](Program& p) {
        p.blocks[0].loops[0].carried[0].op = ReduceOp::mean;
        p.blocks[0].loops[1].stmts[0].op = ReduceOp::mean;
      },
      "block 0: carried c0 uses mean");
}

TEST(Verifier, CarriedUpdatedOnlyInsideItsLoop) {
  expect_invalid(
      [](Program& p) {
        Stmt r;
        r.kind = StmtKind::reduce;
        r.carried = 0;
        r.op = ReduceOp::sum;
        r.value = val::constant(1);
        p.blocks[3].loops[1].stmts.push_back(r);
      },
      "block 3 updates c0 outside its loop");
}

TEST(Verifier, CarriedUpdatedWithItsOwnOp) {
  expect_invalid([](Program& p) { p.blocks[0].loops[1].stmts[0].op = ReduceOp::max; },
                 "block 0 updates c0 with another op");
}

TEST(Verifier, ArgReductionsCarryTheirPosition) {
  expect_invalid([](Program& p) { p.blocks[1].loops[1].stmts[0].arg = nullptr; },
                 "block 1: an arg-reduction needs its position, and only it has one");
  expect_invalid([](Program& p) { p.blocks[0].loops[1].stmts[0].arg = idx::var(1); },
                 "block 0: an arg-reduction needs its position, and only it has one");
}

TEST(Verifier, InputsAreNeverWritten) {
  expect_invalid([](Program& p) { reindex_store(p).tensor = 0; }, "block 3 writes the input 'x'");
}

TEST(Verifier, AccumulateUsesSumMaxOrMin) {
  expect_invalid(
      [](Program& p) {
        reindex_store(p).kind = StmtKind::accumulate;
        reindex_store(p).op = ReduceOp::prod;
      },
      "block 3: accumulate with prod");
  Program ok = valid_program();
  reindex_store(ok).kind = StmtKind::accumulate;
  reindex_store(ok).op = ReduceOp::max;
  EXPECT_EQ(verify(ok), std::vector<std::string>{});
}

// The loops' plans (LoopPlan) the C backend's passes set.
TEST(Verifier, OneParallelLoopPerBlock) {
  expect_invalid(
      [](Program& p) {
        for (auto& l : p.blocks[3].loops) l.plan.threads = LoopPlan::Threads::serial;
      },
      "block 3 has 2 parallel loops");
}

TEST(Verifier, OnlyTeamIfHasAWorkSize) {
  expect_invalid([](Program& p) { p.blocks[3].loops[0].plan.threads = LoopPlan::Threads::team_if; },
                 "block 3 loop 0: only a team_if parallel loop has a work size, and it has one");
}

TEST(Verifier, CollapseNeedsANextLoop) {
  expect_invalid(
      [](Program& p) {
        LoopPlan& plan = p.blocks[3].loops[1].plan;
        plan.threads = LoopPlan::Threads::team;
        plan.collapse = 2;
      },
      "block 3 loop 1 collapses loop 2, which is not an exclusive loop perfectly nested in the one "
      "before");
}

// conv2d's weight gradient, where its images run inside its window loops, collapses its tiles of
// output and input channels and its window loops (4 loops); the images' loop after them sums
// into the same elements.
TEST(Verifier, CollapsedLoopsAreExclusive) {
  Program p = plan_cpu(optimize(gradient(find_op("conv2d").build(DType::f32), {"w"})), {});
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  size_t b = 0;
  while (b < p.blocks.size() && p.blocks[b].loops[0].plan.collapse != 4) ++b;
  ASSERT_LT(b, p.blocks.size()) << print(p);
  p.blocks[b].loops[0].plan.collapse = 5;
  auto errors = verify(p);
  std::string want = "block " + std::to_string(b) +
                     " loop 0 collapses loop 4, which is not an exclusive loop perfectly nested in "
                     "the one before";
  EXPECT_NE(std::find(errors.begin(), errors.end(), want), errors.end()) << errors.size();
}

TEST(Verifier, ThreadCopiesOnATeamsOuterLoopOfTensorsOnlySummedInto) {
  auto team = [](Program& p, int tensor) {
    LoopPlan& plan = p.blocks[3].loops[0].plan;
    plan.threads = LoopPlan::Threads::team;
    plan.thread_copies = {tensor};
  };
  expect_invalid([&](Program& p) { p.blocks[3].loops[0].plan.thread_copies = {5}; },
                 "block 3 has thread copies without a team on its outer loop");
  expect_invalid(
      [&](Program& p) {
        team(p, 5);
        p.blocks[3].loops[1].plan.thread_copies = {5};
      },
      "block 3 loop 1: thread copies belong to a block's outer loop");
  expect_invalid([&](Program& p) { team(p, 5); },
                 "block 3 has thread copies of sh, which it does not only sum into");
  expect_invalid([&](Program& p) { team(p, 0); },
                 "block 3 has thread copies of x, which it does not only sum into");
  Program ok = valid_program();
  team(ok, 5);
  reindex_store(ok).kind = StmtKind::accumulate;
  EXPECT_EQ(verify(ok), std::vector<std::string>{});
}

// A register tile of a tensor written at a checked index (conv2d's dx, scatter_tiling.h) holds
// only elements in range: its corners are tested in front of it.
TEST(Verifier, TileOfACheckedTensorIsTestedInFrontOfIt) {
  Program p = plan_cpu(optimize(gradient(find_op("conv2d").build(DType::f32), {"x"})), {});
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  bool found = false;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (size_t k = 0; k < p.blocks[b].loops.size(); ++k) {
      LoopPlan& plan = p.blocks[b].loops[k].plan;
      if (!plan.tile || !p.blocks[b].loops.back().stmts[0].checked) continue;
      found = true;
      Program rows = p;
      if (!plan.tile_corners.empty()) {
        rows.blocks[b].loops[k].plan.tile_rows = {{0, idx::constant(0)}};
        rows.blocks[b].loops[k].plan.tile_corners.clear();
        auto errors = verify(rows);
        std::string want = "block " + std::to_string(b) + " loop " + std::to_string(k) +
                           " reads rows in the else of a tile corner test it does not make";
        EXPECT_NE(std::find(errors.begin(), errors.end(), want), errors.end()) << errors.size();
      }
      plan.tile_corners.clear();
      auto errors = verify(p);
      std::string want = "block " + std::to_string(b) + " loop " + std::to_string(k) +
                         " keeps a tile of elements that may fall outside, untested in front of it";
      EXPECT_NE(std::find(errors.begin(), errors.end(), want), errors.end()) << errors.size();
    }
  EXPECT_TRUE(found) << print(p);
}

// A border tile's rows are bound where no loop inside, but the innermost, moves them.
TEST(Verifier, TileRowsAreBoundWhereTheyStayPut) {
  Program p = plan_cpu(optimize(gradient(find_op("conv2d").build(DType::f32), {"w"})), {});
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  bool found = false;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (size_t k = 0; k < p.blocks[b].loops.size(); ++k) {
      if (p.blocks[b].loops[k].plan.tile_rows.empty()) continue;
      found = true;
      Program moved = p;
      moved.blocks[b].loops[k].plan.tile_rows_at = int(k);  // the images' loop moves the rows
      auto errors = verify(moved);
      std::string want = "block " + std::to_string(b) + " loop " + std::to_string(k) +
                         " binds its rows in front of loop " + std::to_string(k) +
                         ", outside its test or where a loop inside moves them";
      EXPECT_NE(std::find(errors.begin(), errors.end(), want), errors.end()) << errors.size();
    }
  EXPECT_TRUE(found) << print(p);
}

// A transposed copy tile is the last two loops of a block that copies dst[..., i, j] =
// src[..., j, i], with nothing else planned on them: the transpose op's is; moved to the
// innermost loop, or with the copy changed into a sum, or with the loop unrolled, it is not.
TEST(Verifier, TransposedCopyTilesCopyTheirLastTwoLoops) {
  Program p = plan_cpu(optimize(forward_program(find_op("transpose"), DType::f32)), {});
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  bool found = false;
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    size_t n = p.blocks[b].loops.size();
    if (n < 2 || !p.blocks[b].loops[n - 2].plan.tile_transpose) continue;
    found = true;
    const std::string at = "block " + std::to_string(b) + " loop ";
    const std::string wrong =
        ": a transposed copy tile that is not the last two loops of a block "
        "copying dst[..., i, j] = src[..., j, i]";
    auto has = [](const std::vector<std::string>& errors, const std::string& e) {
      return std::find(errors.begin(), errors.end(), e) != errors.end();
    };
    Program moved = p;
    moved.blocks[b].loops[n - 2].plan.tile_transpose = false;
    moved.blocks[b].loops[n - 1].plan.tile_transpose = true;
    EXPECT_TRUE(has(verify(moved), at + std::to_string(n - 1) + wrong));
    Program summed = p;
    summed.blocks[b].loops[n - 1].stmts[0].kind = StmtKind::accumulate;
    EXPECT_TRUE(has(verify(summed), at + std::to_string(n - 2) + wrong));
    Program unrolled = p;
    unrolled.blocks[b].loops[n - 1].plan.unroll = true;
    EXPECT_TRUE(has(verify(unrolled), at + std::to_string(n - 2) +
                                          ": a transposed copy tile whose loop " +
                                          std::to_string(n - 1) + " has another plan"));
  }
  EXPECT_TRUE(found) << print(p);
}

TEST(Verifier, SimdReducesWhatTheInnermostLoopReduces) {
  expect_invalid(
      [](Program& p) {
        p.blocks[0].loops[1].plan.simd = {{0, ReduceOp::max}};
      },
      "block 0 loop 1: SIMD reduction of c0, which this innermost loop does not reduce "
      "with max");
}

TEST(Verifier, SimdMathOnlyOnASerialInnermostLoop) {
  expect_invalid([](Program& p) { p.blocks[0].loops[0].plan.simd_math = true; },
                 "block 0 loop 0: SIMD math on a loop that is not an innermost, serial loop "
                 "reducing nothing");
}

TEST(Verifier, RowLocalRunsShareTheirOuterRange) {
  expect_invalid([](Program& p) { p.blocks[2].loops[0].plan.row_local = 2; },
                 "block 2's row-local run goes past the last block");
  expect_invalid(
      [](Program& p) {
        p.blocks[2].loops[0].plan.row_local = 1;
        p.blocks[3].loops[0].end = idx::constant(7);
      },
      "block 2's row-local run holds block 3, which cannot share its outer loop");
}

// Zeros that run only where a later block does not store them name a block after them with a
// tile that starts from a known value: matmul's do; named past the last block, or a block whose
// tiles start from nothing known, they do not.
TEST(Verifier, AGuardedFillNamesATileThatStoresItsElements) {
  Program p = plan_cpu(optimize(forward_program(find_op("matmul"), DType::f32)), {});
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  auto has = [](const std::vector<std::string>& errors, const std::string& e) {
    for (auto& error : errors)
      if (error.find(e) != std::string::npos) return true;
    return false;
  };
  const std::string wrong =
      " does not, which has no tile that starts from a known value in loops it can test";
  bool found = false;
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    int n = p.blocks[b].loops[0].plan.fill_unless;
    if (!n) continue;
    found = true;
    const std::string t = std::to_string(b + size_t(n));
    Program past = p;
    past.blocks[b].loops[0].plan.fill_unless = int(p.blocks.size());
    EXPECT_TRUE(
        has(verify(past), "fills only where block " + std::to_string(b + p.blocks.size()) + wrong));
    Program unknown = p;
    for (auto& l : unknown.blocks[b + size_t(n)].loops) {
      l.plan.tile_start.reset();
      l.plan.tile_start_first.clear();
    }
    EXPECT_TRUE(has(verify(unknown), "fills only where block " + t + wrong));
  }
  EXPECT_TRUE(found) << print(p);
}

}  // namespace
}  // namespace uops
