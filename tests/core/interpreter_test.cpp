#include <gtest/gtest.h>

#include "uops/uops.h"

namespace uops {
namespace {

TEST(Interpreter, MatmulSmoke) {
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
                     g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  Program p = lower(g);
  std::cout << print(p);
  EXPECT_TRUE(verify(p).empty());
  Tensor ta(DType::f32, {2, 3}), tb(DType::f32, {3, 2});
  for (int i = 0; i < 6; ++i) {
    ta.set(i, i + 1);
    tb.set(i, i + 1);
  }
  auto out = interpret(p, {{"a", ta}, {"b", tb}});
  const Tensor& c = out.at("c");
  ASSERT_EQ(c.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.get(0), 22);
  EXPECT_EQ(c.get(1), 28);
  EXPECT_EQ(c.get(2), 49);
  EXPECT_EQ(c.get(3), 64);
}

}  // namespace
}  // namespace uops
