// Dead-code elimination (passes/dead_code).
#include "uops/passes/dead_code.h"

#include <gtest/gtest.h>

#include "support/loop_programs.h"

namespace uops {

using namespace ir;
using namespace testing;

namespace {

TEST(DeadCode, DropsDeadBlocksAndRenumbersTensors) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  Node dead = g.unary(UnaryOp::exp, x);
  g.unary(UnaryOp::sin, dead);
  Node k = g.input("k", 2, DType::i32);
  g.output("y", g.select(1, g.unary(UnaryOp::neg, x), k));
  Program p = lower(g);
  Program q = eliminate_dead_code(p);
  EXPECT_EQ(q.blocks.size(), 2u);
  EXPECT_EQ(q.tensors.size(), 4u);  // x, k, the negation, y
  EXPECT_TRUE(verify(q).empty()) << print(q);
  Tensor kt(DType::i32, {2, 3});
  for (int i = 0; i < 6; ++i) kt.set(i, i % 4 - 1);
  expect_same(p, q, {{"x", ramp(DType::f32, {2, 3})}, {"k", kt}});
}

}  // namespace
}  // namespace uops
