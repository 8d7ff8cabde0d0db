// asserted_sizes (passes/asserted_sizes): a bound that divides by a parameter and is asserted
// equal to an input's size becomes that size; the assertion stays, so a bad parameter still
// raises, at binding, and every result is the same.
#include "uops/passes/asserted_sizes.h"

#include <gtest/gtest.h>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

bool some_bound_may_raise(const Program& p) {
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      if (may_raise(l.start) || may_raise(l.end)) return true;
  return false;
}

// conv2d's gradient runs over dy's pixels, sized by a division by the stride in lowering and
// asserted equal to dy's sizes: those loops become dy.1 and dy.2.
TEST(AssertedSizes, Conv2dGradientLoopsRunOverDysPixels) {
  Program p = gradient(find_op("conv2d").build(DType::f32), {"x", "w"});
  ASSERT_TRUE(some_bound_may_raise(p)) << print(p);
  Program q = use_asserted_sizes(p);
  EXPECT_TRUE(verify(q).empty()) << print(q);
  EXPECT_FALSE(some_bound_may_raise(q)) << print(q);
  ASSERT_EQ(q.equalities.size(), p.equalities.size());
  for (size_t i = 0; i < p.equalities.size(); ++i)
    EXPECT_TRUE(equal(q.equalities[i].a, p.equalities[i].a) &&
                equal(q.equalities[i].b, p.equalities[i].b));
  TensorMap in = testing::random_inputs(
      p, {{"x", {2, 9, 8, 3}}, {"w", {4, 3, 2, 3}}, {"dy", {2, 5, 5, 4}}}, 7);
  ParamMap params = {{"stride", 2}, {"pad", 1}, {"dilation", 1}};
  EXPECT_TRUE(testing::same_outputs(interpret(p, in, params), interpret(q, in, params)));
  // A zero stride still raises, where the assertion is evaluated; so do the compiled kernels.
  ParamMap zero = {{"stride", 0}, {"pad", 1}, {"dilation", 1}};
  EXPECT_THROW(interpret(q, in, zero), Error);
  Program optimized = optimize(gradient(find_op("conv2d").build(DType::f32), {"x", "w"}));
  EXPECT_FALSE(some_bound_may_raise(optimized)) << print(optimized);
  EXPECT_THROW(compile_c(optimized)->run(in, zero), Error);
}

// Without an assertion to use, or with one whose other side may raise too, nothing changes.
TEST(AssertedSizes, NothingToUseChangesNothing) {
  Program forward = forward_program(find_op("conv2d"), DType::f32);
  ASSERT_TRUE(some_bound_may_raise(forward));
  EXPECT_TRUE(equal(use_asserted_sizes(forward), forward)) << print(forward);
  Program p = forward;
  p.equalities.push_back({p.blocks[0].loops[1].end, p.blocks[0].loops[1].end});
  EXPECT_TRUE(equal(use_asserted_sizes(p), p));
}

}  // namespace
}  // namespace uops
