// accumulator_promotion (passes/accumulator_promotion): an accumulation into one element per run
// of an innermost loop becomes a scalar carried by the loop around it.
#include "uops/passes/accumulator_promotion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/analysis.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

// Some innermost loop accumulates into an element that stays the same through its whole run.
bool accumulates_in_place(const Program& p) {
  for (auto& b : p.blocks) {
    if (b.loops.size() < 2) continue;
    const Loop& l = b.loops.back();
    for (auto& s : l.stmts) {
      if (s.kind != StmtKind::accumulate) continue;
      bool moves = false;
      for (auto& e : s.index) moves |= uses_var(e, l.var);
      if (!moves) return true;
    }
  }
  return false;
}

// y[i, 0] op= x[i, j] written as an accumulation in the inner loop (as autodiff's scatters are),
// from the lowered reduction, which carries a scalar instead.
Program row_accumulation(ReduceOp op) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(op, {1}, x));
  Program p = lower(g);
  Loop &outer = p.blocks[0].loops[0], &inner = p.blocks[0].loops[1];
  Stmt store = outer.stmts[0];
  outer.stmts.clear();
  outer.carried.clear();
  Stmt& s = inner.stmts[0];
  s.kind = StmtKind::accumulate;
  s.tensor = store.tensor;
  s.index = store.index;
  s.checked = false;
  if (op == ReduceOp::max) {
    // y starts at the identity, as loop_order's prologue sets it.
    Block init;
    init.loops = {outer};
    init.loops[0].stmts = {store};
    init.loops[0].stmts[0].value = val::constant(-INFINITY);
    p.blocks.insert(p.blocks.begin(), init);
  }
  verify_or_throw(p, "test");
  return p;
}

TEST(AccumulatorPromotion, GradientRowSumsReduceInRegisters) {
  for (const char* name : {"layernorm", "log_softmax"}) {
    Program p = optimize(gradient_program(find_op(name), DType::f32));
    ASSERT_TRUE(accumulates_in_place(p)) << name << "\n" << print(p);
    Program q = promote_accumulators(p);
    verify_or_throw(q, "accumulator_promotion");
    EXPECT_FALSE(accumulates_in_place(q)) << name << "\n" << print(q);
    // Every such loop now reduces in SIMD lanes (by hand, after its row-local run's first block).
    std::string planned = print(plan_cpu(p, {}));
    EXPECT_TRUE(std::regex_search(planned, std::regex(R"(\[simd [^\]]* sum[,\]])"))) << planned;
    EXPECT_TRUE(accumulates_in_place(plan_cpu(p, {false, false}))) << "without reassociation";
  }
}

// The promoted sum adds to a zero start, max and min take the same candidates: bit for bit,
// NaN, -0 and ties included; the store goes first among the outer loop's statements.
TEST(AccumulatorPromotion, PromotedReductionsMatchTheAccumulation) {
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
    Program p = row_accumulation(op);
    Program q = promote_accumulators(p);
    verify_or_throw(q, "accumulator_promotion");
    const Block& b = q.blocks.back();
    ASSERT_EQ(b.loops[0].carried.size(), 1u) << print(q);
    EXPECT_EQ(b.loops[1].stmts[0].kind, StmtKind::reduce);
    EXPECT_EQ(b.loops[0].stmts[0].kind, StmtKind::accumulate);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    Tensor x(DType::f32, {4, 5});
    float rows[4][5] = {{1, -2, 3, 3, 0.5f},
                        {-0.0f, 0.0f, -0.0f, -1, -3},
                        {nan, 2, nan, -INFINITY, 2},
                        {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY}};
    for (int i = 0; i < 20; ++i) x.set(i, rows[i / 5][i % 5]);
    for (int64_t cols : {5, 0}) {
      TensorMap in{{"x", x}};
      if (cols == 0) in["x"] = Tensor(DType::f32, {4, 0});
      TensorMap want = interpret(p, in), got = interpret(q, in);
      EXPECT_TRUE(testing::same_outputs(want, got));
      EXPECT_TRUE(testing::same_outputs(want, compile_c(q)->run(in))) << print(q);
    }
  }
}

TEST(AccumulatorPromotion, LeavesWhatItCannotReorder) {
  // The value reads its own target.
  Program reads = row_accumulation(ReduceOp::sum);
  Stmt& s = reads.blocks[0].loops[1].stmts[0];
  s.value = val::binary(BinaryOp::add, s.value, val::load(s.tensor, s.index, 0.0, false));
  // Another statement of the loop reads it.
  Program shared = row_accumulation(ReduceOp::sum);
  Stmt copy = shared.blocks[0].loops[1].stmts[0];
  Stmt other = copy;
  other.kind = StmtKind::assign;
  other.tensor = shared.find_tensor("x");
  other.index = {idx::var(shared.blocks[0].loops[0].var), idx::var(shared.blocks[0].loops[1].var)};
  other.value = val::load(copy.tensor, copy.index, 0.0, false);
  shared.blocks[0].loops[1].stmts.push_back(other);
  // The element moves with the loop.
  Program moves = row_accumulation(ReduceOp::sum);
  moves.blocks[0].loops[1].stmts[0].index[0] = idx::var(moves.blocks[0].loops[1].var);
  for (const Program* p : {&reads, &shared, &moves})
    EXPECT_TRUE(equal(promote_accumulators(*p), *p)) << print(*p);
}

}  // namespace

}  // namespace uops
