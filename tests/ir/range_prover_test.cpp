// The one range analysis (ir/range_prover.h): what it proves non-negative, which the bounds pass,
// variable substitution and the C and CUDA printers all read.
#include "ir/range_prover.h"

#include <gtest/gtest.h>

#include "uops/ir/fixed_params.h"

namespace uops {

using namespace ir;
namespace {

// x[x.0, x.1] read by one block over v0 in [0, x.0), v1 in [start1, x.1); parameter p.
Program two_loops(int64_t start1) {
  Program p;
  p.params = {"p"};
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0), idx::dim(0, 1)}, Role::input});
  p.tensors.push_back({"y", DType::f32, {idx::dim(0, 0), idx::dim(0, 1)}, Role::output});
  Stmt s;
  s.tensor = 1;
  s.index = {idx::var(0), idx::var(1)};
  s.value = val::load(0, {idx::var(0), idx::var(1)}, 0.0);
  p.blocks.push_back({{Loop{0, idx::constant(0), idx::dim(0, 0), {}, {}},
                       Loop{1, idx::constant(start1), idx::dim(0, 1), {}, {s}}},
                      "test"});
  p.num_vars = 2;
  return p;
}

TEST(RangeProver, ProvesWhatThePrintersNeedNonNegative) {
  Program p = two_loops(0);
  RangeProver r(p);
  Index v0 = idx::var(0), v1 = idx::var(1), n0 = idx::dim(0, 0), n1 = idx::dim(0, 1),
        q = idx::param("p"), two = idx::constant(2);
  for (const Index& e : {
           v0,
           n0,
           idx::constant(3),
           idx::add(v0, n1),
           idx::mul(v0, two),
           idx::mul(v0, v1),  // a product of two ranges
           idx::mul(n0, n1),  // of two sizes
           idx::min(v0, n1),
           idx::max(q, v0),                       // one side is enough for max
           idx::floordiv(idx::mul(v0, n1), two),  // a symbolic numerator
           idx::floordiv(idx::sub(idx::sub(n0, idx::constant(1)), v0), two),  // a reversal
           idx::floormod(q, idx::constant(3)),
           idx::floormod(v0, n1),
       })
    EXPECT_TRUE(r.nonnegative(e)) << to_string(e);
  for (const Index& e : {
           q, idx::neg(v0), idx::sub(v0, idx::constant(1)), idx::mul(v0, q), idx::min(q, v0),
           idx::floordiv(q, two), idx::data(0, {v0, v1}), idx::var(7),  // a variable no loop has
       })
    EXPECT_FALSE(r.nonnegative(e)) << to_string(e);
}

// A parameter fixed to a value (fix_params' assertion, checked before anything runs) is that
// constant; unfixed, it may be anything.
TEST(RangeProver, AFixedParameterIsItsValue) {
  Program p = two_loops(0);
  const Index q = idx::param("p"), v0 = idx::var(0), nine = idx::constant(9);
  const Index e = idx::sub(q, idx::constant(3));
  EXPECT_FALSE(RangeProver(p).nonnegative(e));
  p = fix_params(p, {{"p", 3}});
  RangeProver r(p);
  EXPECT_TRUE(r.nonnegative(e));
  EXPECT_TRUE(r.nonnegative(idx::mul(v0, q)));
  EXPECT_TRUE(r.below(q, r, idx::constant(4)));
  EXPECT_FALSE(r.below(q, r, idx::constant(3)));
  EXPECT_FALSE(r.nonnegative(idx::sub(idx::constant(2), q)));
  EXPECT_TRUE(r.below(idx::mul(q, q), r, idx::add(nine, idx::constant(1))));
}

// Variables are unique within a block, not across blocks: the program-wide analysis knows
// nothing of a variable two loops share, the block's own analysis knows its range.
TEST(RangeProver, AVariableTwoBlocksShareHasNoRange) {
  Program p = two_loops(0);
  p.blocks.push_back(two_loops(-2).blocks[0]);
  p.blocks[1].loops[0].var = 2;  // v1 is shared, v0 is not
  EXPECT_FALSE(RangeProver(p).nonnegative(idx::var(1)));
  EXPECT_TRUE(RangeProver(p).nonnegative(idx::var(0)));
  EXPECT_TRUE(RangeProver(p, p.blocks[0]).nonnegative(idx::var(1)));
  EXPECT_FALSE(RangeProver(p, p.blocks[1]).nonnegative(idx::var(1)));
}

// Axes asserted equal are one atom however the assertions pair them: the loop runs to x.0, and
// y.0 and z.0 are each asserted equal to x.0 (as a gradient given saved values asserts its
// inputs' axes equal to one input's), so y[v0] and z[v0] are in range.
TEST(RangeProver, EqualAxesAreOneClass) {
  for (bool reversed : {false, true}) {
    Program p = two_loops(0);
    for (const char* name : {"y", "z"})
      p.tensors.push_back({name, DType::f32, {idx::dim(int(p.tensors.size()), 0)}, Role::input});
    Index x0 = idx::dim(0, 0), y0 = idx::dim(2, 0), z0 = idx::dim(3, 0);
    p.equalities = {{y0, x0}, {z0, x0}};
    if (reversed) std::swap(p.equalities[0], p.equalities[1]);
    RangeProver r(p, p.blocks[0]);
    EXPECT_TRUE(r.in_range(2, {idx::var(0)})) << reversed;
    EXPECT_TRUE(r.in_range(3, {idx::var(0)})) << reversed;
  }
}

}  // namespace
}  // namespace uops
