#include <gtest/gtest.h>

#include "uops/autodiff/gradient.h"
#include "uops/uops.h"

namespace uops {
namespace {

TEST(GradientProgram, MatmulPrints) {
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
                     g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  Program p = gradient(g, {"a", "b"});
  std::cout << print(p);
  verify_or_throw(p, "gradient");
  Program pa = gradient(g, {"a"});
  std::cout << print(pa);
  verify_or_throw(pa, "gradient");
}

}  // namespace
}  // namespace uops
