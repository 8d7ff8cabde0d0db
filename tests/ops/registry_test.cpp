#include "uops/ops/registry.h"

#include <gtest/gtest.h>

#include <cmath>

#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/verifier.h"

namespace uops {

using namespace ir;

namespace {

Tensor make(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  Tensor x(t, shape);
  for (size_t i = 0; i < values.size(); ++i) x.set(int64_t(i), values[i]);
  return x;
}

TEST(Registry, TableOrderAndNames) {
  std::vector<std::string> expected = {"add",          "sub",
                                       "mul",          "div",
                                       "max",          "min",
                                       "relu",         "sigmoid",
                                       "tanh",         "exp",
                                       "log",          "gelu",
                                       "matmul",       "batched_matmul",
                                       "linear",       "transpose",
                                       "conv2d",       "depthwise_conv2d",
                                       "maxpool2d",    "avgpool2d",
                                       "softmax",      "log_softmax",
                                       "layernorm",    "sum",
                                       "mean",         "max_reduce",
                                       "argmax",       "gather",
                                       "concat",       "pad2d",
                                       "cross_entropy"};
  std::vector<std::string> names;
  for (auto& op : all_ops()) names.push_back(op.name);
  EXPECT_EQ(names, expected);
}

TEST(Registry, UnknownOpListsNames) {
  try {
    find_op("conv3d");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d"), std::string::npos) << e.what();
  }
}

// Every op lowers, verifies and runs on its example shapes in both float types.
TEST(Registry, EveryOpRunsItsExample) {
  for (const OpDef& op : all_ops()) {
    for (DType t : {DType::f32, DType::f64}) {
      SCOPED_TRACE(op.name + " " + dtype_name(t));
      Program p = forward_program(op, t);
      EXPECT_TRUE(verify(p).empty());
      TensorMap in;
      for (auto& i : op.inputs) {
        Tensor x(i.is_index ? DType::i32 : t, op.example_shapes.at(i.name));
        for (int64_t e = 0; e < x.numel(); ++e) x.set(e, i.is_index ? e % 7 : 0.5 + (e % 5) * 0.1);
        in[i.name] = x;
      }
      TensorMap out = interpret(p, in, op.example_params);
      ASSERT_EQ(out.size(), op.outputs.size());
      for (auto& name : op.outputs) {
        const Tensor& y = out.at(name);
        for (int64_t e = 0; e < y.numel(); ++e) ASSERT_TRUE(std::isfinite(y.get(e)));
      }
    }
  }
}

TEST(Registry, MatmulByHand) {
  TensorMap out = interpret(forward_program(find_op("matmul"), DType::f64),
                            {{"a", make(DType::f64, {2, 3}, {1, 2, 3, 4, 5, 6})},
                             {"b", make(DType::f64, {3, 2}, {7, 8, 9, 10, 11, 12})}});
  const Tensor& c = out.at("c");
  ASSERT_EQ(c.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.get(0), 58);
  EXPECT_EQ(c.get(1), 64);
  EXPECT_EQ(c.get(2), 139);
  EXPECT_EQ(c.get(3), 154);
}

TEST(Registry, ArgmaxKeepsFirstMaximum) {
  TensorMap out = interpret(forward_program(find_op("argmax"), DType::f32),
                            {{"x", make(DType::f32, {2, 4}, {1, 5, 5, 2, 7, 7, 7, 7})}});
  EXPECT_EQ(out.at("y").dtype, DType::i32);
  EXPECT_EQ(out.at("y").get(0), 1);
  EXPECT_EQ(out.at("y").get(1), 0);
}

TEST(Registry, GatherOutOfRangeGivesZeros) {
  TensorMap out = interpret(forward_program(find_op("gather"), DType::f32),
                            {{"table", make(DType::f32, {2, 2}, {1, 2, 3, 4})},
                             {"idx", make(DType::i32, {3}, {1, 2, -1})}});
  const Tensor& y = out.at("y");
  std::vector<double> got;
  for (int64_t e = 0; e < y.numel(); ++e) got.push_back(y.get(e));
  EXPECT_EQ(got, (std::vector<double>{3, 4, 0, 0, 0, 0}));
}

TEST(Registry, MaxpoolPaddingNeverWins) {
  // All values negative: a zero padding would win; -inf padding does not.
  TensorMap out = interpret(forward_program(find_op("maxpool2d"), DType::f32),
                            {{"x", make(DType::f32, {1, 2, 2, 1}, {-1, -2, -3, -4})}},
                            {{"k", 2}, {"stride", 2}, {"pad", 1}});
  const Tensor& y = out.at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(y.get(0), -1);
  EXPECT_EQ(y.get(1), -2);
  EXPECT_EQ(y.get(2), -3);
  EXPECT_EQ(y.get(3), -4);
}

TEST(Registry, ConcatAndCrossEntropy) {
  TensorMap out = interpret(
      forward_program(find_op("concat"), DType::f32),
      {{"x", make(DType::f32, {2, 1}, {1, 2})}, {"y", make(DType::f32, {2, 2}, {3, 4, 5, 6})}});
  std::vector<double> got;
  for (int64_t e = 0; e < 6; ++e) got.push_back(out.at("z").get(e));
  EXPECT_EQ(got, (std::vector<double>{1, 3, 4, 2, 5, 6}));

  out = interpret(forward_program(find_op("cross_entropy"), DType::f64),
                  {{"logits", make(DType::f64, {2, 2}, {0, 0, 1000, 0})},
                   {"labels", make(DType::i32, {2}, {1, 0})}});
  ASSERT_EQ(out.at("loss").shape, (std::vector<int64_t>{1}));
  // Row 0: log 2 - 0; row 1: (1000 + log(1 + e^-1000)) - 1000 = 0.
  EXPECT_NEAR(out.at("loss").get(0), std::log(2.0) / 2, 1e-12);
}

TEST(Registry, ConvShapeMismatchIsAnError) {
  Program p = forward_program(find_op("conv2d"), DType::f32);
  EXPECT_THROW(
      interpret(p,
                {{"x", Tensor(DType::f32, {1, 5, 5, 3})}, {"w", Tensor(DType::f32, {2, 3, 3, 4})}},
                {{"stride", 1}, {"pad", 0}, {"dilation", 1}}),
      Error);
}

}  // namespace
}  // namespace uops
