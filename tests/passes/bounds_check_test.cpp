// Bounds-check elimination (passes/bounds_check), through the pipeline that runs it.
#include <gtest/gtest.h>

#include "support/loop_programs.h"
#include "uops/ops/op_gradient.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;
using namespace testing;

namespace {

TEST(Bounds, ProvesShiftsAndFoldsFillReads) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  Node pad = g.reindex(x, {"dA0 + 2"}, {"i0 - 1"}, {x}, 7);
  Node inner = g.reindex(pad, {"dA0"}, {"i0 + 1"}, {x});
  g.output("y", g.binary(BinaryOp::add, inner, g.fill(x, 3)));
  g.output("padded", pad);
  Program p = lower(g);
  Program q = optimize(p, {true});
  std::string text = print(q);
  EXPECT_NE(text.find("x?[v"), std::string::npos) << text;    // the padded read stays checked
  EXPECT_EQ(text.find("fill 3"), std::string::npos) << text;  // the fill read became 3
  EXPECT_NE(text.find("padded[v1 + 1] + 3"), std::string::npos) << text;
  EXPECT_EQ(text.find("y?"), std::string::npos) << text;
  expect_same(p, q, {{"x", ramp(DType::f32, {5})}});
}

// y[i] = x[i + x.0 + max(0, 1 / $p)] reads only the fill, but its index divides by $p: the load
// stays (and raises for $p = 0) rather than becoming its fill.
TEST(Bounds, AReadOutsideWhoseIndexMayRaiseKeepsRaising) {
  Graph g;
  g.param("p");
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.reindex(x, {"dA0"}, {"i0 + dA0 + max(0, 1 / $p)"}, {x}, 2));
  Program p = lower(g);
  Program q = optimize(p, {true});
  TensorMap in{{"x", ramp(DType::f32, {3})}};
  for (const Program* program : {&p, &q}) {
    EXPECT_THROW(interpret(*program, in, {{"p", 0}}), Error) << print(*program);
    EXPECT_EQ(interpret(*program, in, {{"p", 1}}).at("y").get(2), 2.0);
  }
}

}  // namespace
}  // namespace uops

namespace uops {
namespace {

// An axis asserted equal to an expression over other axes (a gradient's dy is shaped like y) is
// bounded by that expression: avgpool2d's gradient reads dy over y's loop ranges unchecked.
TEST(Bounds, AnAxisAssertedEqualToAnExpressionHasItsBounds) {
  Program p = optimize(gradient_program(find_op("avgpool2d"), DType::f32));
  int dy = p.find_tensor("dy"), loads = 0;
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& s : l.stmts)
        ir::for_each_load(s.value, [&](const ir::ValueNode& v) {
          if (v.tensor != dy) return;
          ++loads;
          EXPECT_FALSE(v.checked) << ir::print(p);
        });
  EXPECT_GT(loads, 0);
}

}  // namespace
}  // namespace uops
