#include "uops/oracle/generator.h"

#include <gtest/gtest.h>

#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/oracle/reference.h"

namespace uops::oracle {
namespace {

// Every generated case binds (its shapes satisfy the op's assertions) and replays identically.
TEST(Generator, CasesAreValidAndDeterministic) {
  for (const OpDef& op : all_ops()) {
    Program p = forward_program(op, DType::f64);
    for (uint64_t seed = 0; seed < 30; ++seed) {
      Case c = random_case(op, DType::f64, seed);
      TensorMap in = make_inputs(op, c);
      EXPECT_NO_THROW(interpret(p, in, c.params)) << op.name << " seed " << seed;
      Case again = fixed_case(op, DType::f64, seed, c.shapes, c.params);
      EXPECT_EQ(again.sizes, c.sizes);
      TensorMap in2 = make_inputs(op, again);
      for (auto& [name, t] : in) EXPECT_EQ(t.bytes, in2.at(name).bytes) << op.name;
    }
  }
}

TEST(Generator, ShrinkCandidatesAreSmallerAndValid) {
  const OpDef& op = find_op("conv2d");
  Case c = random_case(op, DType::f32, 7);
  for (const Case& n : shrink_candidates(op, c)) {
    int smaller = 0;
    for (auto& [name, v] : n.sizes) smaller += v < c.sizes.at(name);
    for (auto& [name, v] : n.params) smaller += v < c.params.at(name);
    EXPECT_EQ(smaller, 1);
    EXPECT_NO_THROW(interpret(forward_program(op, DType::f32), make_inputs(op, n), n.params));
  }
}

TEST(Generator, FixedCaseRejectsInconsistentShapes) {
  const OpDef& op = find_op("matmul");
  EXPECT_THROW(fixed_case(op, DType::f32, 1, {{"a", {2, 3}}, {"b", {4, 2}}}, {}), Error);
  EXPECT_THROW(fixed_case(op, DType::f32, 1, {{"a", {2, 3}}}, {}), Error);
  EXPECT_THROW(
      fixed_case(find_op("conv2d"), DType::f32, 1, {{"x", {1, 2, 2, 1}}, {"w", {1, 3, 3, 1}}},
                 {{"stride", 1}, {"pad", 0}, {"dilation", 1}}),
      Error);
}

// The reference on a case small enough to check by hand.
TEST(Reference, Conv2dByHand) {
  Tensor x(DType::f64, {1, 3, 3, 1}), w(DType::f64, {1, 2, 2, 1});
  for (int i = 0; i < 9; ++i) x.set(i, i + 1);
  for (int i = 0; i < 4; ++i) w.set(i, 1);
  TensorMap y =
      reference("conv2d", {{"x", x}, {"w", w}}, {{"stride", 1}, {"pad", 0}, {"dilation", 1}});
  const Tensor& out = y.at("y");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(out.get(0), 1 + 2 + 4 + 5);
  EXPECT_EQ(out.get(3), 5 + 6 + 8 + 9);
  Tensor ties(DType::f32, {1, 3});
  ties.set(0, 2);
  ties.set(1, 2);
  EXPECT_EQ(reference("argmax", {{"x", ties}}, {}).at("y").get(0), 0);
}

}  // namespace
}  // namespace uops::oracle
