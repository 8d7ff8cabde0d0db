// Variable substitution (passes/variable_substitution): a read of a temporary becomes the
// expression written to it only where statement order allows.
#include "uops/passes/variable_substitution.h"

#include <gtest/gtest.h>

#include "support/loop_programs.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;
using namespace testing;

namespace {

// Section 5: the reference substitution ignored statement order.
TEST(Substitution, RespectsStatementOrder) {
  Program p =
      vector_program({{"t", Role::temporary}, {"before", Role::output}, {"after", Role::output}});
  p.blocks.push_back(vector_block(p, "order",
                                  {assign(2, {V()}, val::load(1, {V()})),
                                   assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()}))),
                                   assign(3, {V()}, val::load(1, {V()}))}));
  ASSERT_TRUE(verify(p).empty());
  Program q = eliminate_dead_code(substitute_variables(p));
  EXPECT_EQ(print(q), print(p));  // the read before the write sees the old t
  TensorMap in{{"x", ramp(DType::f32, {4})}};
  expect_same(p, optimize(p, {true}), in);

  // A statement between the write and the read changes what the expression reads.
  Program r = vector_program({{"t", Role::temporary}, {"s", Role::output}, {"out", Role::output}});
  r.blocks.push_back(
      vector_block(r, "clobber",
                   {assign(1, {V()}, val::load(2, {V()})), assign(2, {V()}, val::constant(3)),
                    assign(3, {V()}, val::load(1, {V()}))}));
  EXPECT_EQ(print(substitute_variables(r)), print(r));
  expect_same(r, optimize(r, {true}), in);

  // The plain case substitutes and the temporary leaves the table.
  Program s = vector_program({{"t", Role::temporary}, {"out", Role::output}});
  s.blocks.push_back(vector_block(
      s, "plain",
      {assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()}))),
       assign(2, {V()}, val::binary(BinaryOp::mul, val::load(1, {V()}), val::load(1, {V()})))}));
  Program t = eliminate_dead_code(substitute_variables(s));
  EXPECT_EQ(t.tensors.size(), 2u);
  EXPECT_EQ(t.find_tensor("t"), -1);
  expect_same(s, t, in);
}

// A definition reading a carried scalar stays where it is when the scalar is updated before the
// use: t[j] = c; c += x[j]; y[j] = t[j] is an exclusive running sum, y[j] = c an inclusive one.
TEST(Substitution, KeepsADefinitionReadingACarriedScalarUpdatedBeforeItsUse) {
  Program p = vector_program({{"t", Role::temporary}, {"y", Role::output}});
  Block b =
      vector_block(p, "exclusive running sum",
                   {assign(1, {V()}, val::carried(0)), assign(2, {V()}, val::load(1, {V()}))});
  Stmt add;
  add.kind = StmtKind::reduce;
  add.carried = 0;
  add.value = val::load(0, {b.loops[0].stmts[0].index[0]});
  b.loops[0].stmts.insert(b.loops[0].stmts.begin() + 1, add);
  Loop outer;
  outer.var = p.num_vars++;
  outer.start = idx::constant(0);
  outer.end = idx::constant(1);
  outer.carried.push_back({p.num_carried++, ReduceOp::sum});
  b.loops.insert(b.loops.begin(), outer);
  p.blocks.push_back(b);
  ASSERT_TRUE(verify(p).empty()) << print(p);
  EXPECT_EQ(print(substitute_variables(p)), print(p));
  TensorMap in{{"x", ramp(DType::f32, {5})}};
  TensorMap out = interpret(p, in);
  EXPECT_EQ(out.at("y").get(0), 0.0);
  expect_same(p, optimize(p, {true}), in);
}

// A temporary read by a later block is recomputed there where its expression has at most 32
// distinct subexpressions; a term repeated in it counts once, as the compiler computes it once.
TEST(Substitution, RecomputesInLaterBlocksCountingARepeatedTermOnce) {
  // 20 nested exponentials of x: 21 distinct nodes.
  Value chain = val::load(0, {V()});
  for (int i = 0; i < 20; ++i) chain = val::unary(UnaryOp::exp, chain);
  auto program = [&](const Value& v) {
    Program p = vector_program({{"t", Role::temporary}, {"out", Role::output}});
    p.blocks.push_back(vector_block(p, "write", {assign(1, {V()}, v)}));
    p.blocks.push_back(vector_block(p, "read", {assign(2, {V()}, val::load(1, {V()}))}));
    return p;
  };
  // The chain added to itself: 43 nodes, 22 distinct. t goes.
  Program twice = program(val::binary(BinaryOp::add, chain, chain));
  EXPECT_EQ(eliminate_dead_code(substitute_variables(twice)).find_tensor("t"), -1);
  // Added to a chain of 12 more: 34 distinct. t stays.
  Value longer = chain;
  for (int i = 0; i < 12; ++i) longer = val::unary(UnaryOp::exp, longer);
  Program distinct = program(val::binary(BinaryOp::add, chain, longer));
  EXPECT_GE(eliminate_dead_code(substitute_variables(distinct)).find_tensor("t"), 0);
  TensorMap in{{"x", ramp(DType::f32, {3})}};
  expect_same(twice, optimize(twice, {true}), in);
}

// A temporary assigned by a statement that reads no tensor (a fill, a scale) in a block fused
// around it, with loops inside its own, is recomputed at each read in a later block: attention's
// gradient read back its forward pass's scale, stored to every score. One that reads a tensor
// stays: a later block would redo the loads the fused block makes anyway.
TEST(Substitution, RecomputesAFillAFusedBlockAssignsInLaterBlocks) {
  auto program = [](const Value& v) {
    Program p =
        vector_program({{"t", Role::temporary}, {"u", Role::output}, {"out", Role::output}});
    // for i: t[i] = v; for j: u[j] = x[j] * x[i]
    Block fused = vector_block(p, "fused", {assign(1, {V()}, v)});
    Loop inner;
    inner.var = p.num_vars++;
    inner.start = idx::constant(0);
    inner.end = idx::dim(0, 0);
    Index i = idx::var(fused.loops[0].var), j = idx::var(inner.var);
    inner.stmts.push_back(
        assign(2, {j}, val::binary(BinaryOp::mul, val::load(0, {j}), val::load(0, {i}))));
    fused.loops.push_back(inner);
    p.blocks.push_back(fused);
    p.blocks.push_back(vector_block(
        p, "read",
        {assign(3, {V()}, val::binary(BinaryOp::mul, val::load(1, {V()}), val::load(0, {V()})))}));
    EXPECT_TRUE(verify(p).empty()) << print(p);
    return p;
  };
  TensorMap in{{"x", ramp(DType::f32, {5})}};
  Program fill = program(val::constant(0.125));
  Program q = eliminate_dead_code(substitute_variables(fill));
  EXPECT_EQ(q.find_tensor("t"), -1) << print(q);
  expect_same(fill, q, in);
  expect_same(fill, optimize(fill, {true}), in);
  Program load = program(val::unary(UnaryOp::exp, val::load(0, {V()})));
  EXPECT_GE(eliminate_dead_code(substitute_variables(load)).find_tensor("t"), 0);
  expect_same(load, optimize(load, {true}), in);
}

// layernorm's gradient, given its residuals (gradient_residuals: x's row mean and the
// reciprocal standard deviation among them) or recomputing them, keeps no temporary of x's size:
// dx's term is recomputed from the loads its block makes anyway.
TEST(Substitution, LayernormGradientKeepsNoTemporaryOfItsInputsSize) {
  Graph g = find_op("layernorm").build(DType::f32);
  const std::vector<std::string> wrt{"x", "gamma", "beta"};
  for (const Program& p :
       {optimize(gradient(g, wrt, "d", gradient_residuals(g, wrt))), optimize(gradient(g, wrt))})
    for (const TensorInfo& t : p.tensors)
      EXPECT_FALSE(t.role == Role::temporary && t.shape.size() == 2 && !is_const(t.shape[1]))
          << t.name << " in\n"
          << print(p);
}

}  // namespace
}  // namespace uops
