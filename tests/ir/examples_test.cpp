// Whole ops written with uops (support/example_graphs.h) against numbers worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/example_graphs.h"
#include "support/tensors.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

using testing::f32;
using testing::f64;
using testing::values;

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(Examples, Matmul) {
  Graph g;
  testing::build_matmul(g);
  Program p = lower(g);
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  // [[1 2 3] [4 5 6]] x [[7 8] [9 10] [11 12]]
  TensorMap out = interpret(
      p, {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({3, 2}, {7, 8, 9, 10, 11, 12})}});
  EXPECT_EQ(out.at("c").shape, (std::vector<int64_t>{2, 2}));
  expect_near(values(out.at("c")), {58, 64, 139, 154}, 0);
  EXPECT_THROW(
      interpret(p, {{"a", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", f32({2, 2}, {1, 2, 3, 4})}}),
      Error);
}

TEST(Examples, Conv2dWithPadding) {
  Graph g;
  testing::build_conv2d(g);
  Program p = lower(g);
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  // x = [[1 2] [3 4]], w = [[1 0] [0 -1]], pad 1: y[oh, ow] = x[oh-1, ow-1] - x[oh, ow] with
  // zeros outside x.
  TensorMap out = interpret(
      p, {{"x", f32({1, 2, 2, 1}, {1, 2, 3, 4})}, {"w", f32({1, 2, 2, 1}, {1, 0, 0, -1})}},
      {{"pad", 1}});
  EXPECT_EQ(out.at("y").shape, (std::vector<int64_t>{1, 3, 3, 1}));
  expect_near(values(out.at("y")), {-1, -2, 0, -3, -3, 2, 0, 3, 4}, 0);
}

TEST(Examples, Conv2dChannelsAndBatch) {
  Graph g;
  testing::build_conv2d(g, DType::f64);
  // Two images of 1x2 pixels with 2 channels, two 1x1 filters: [1 1] sums, [1 -1] differences.
  TensorMap out = interpret(lower(g),
                            {{"x", f64({2, 1, 2, 2}, {1, 2, 3, 4, 0.5, 0.25, -1, 1})},
                             {"w", f64({2, 1, 1, 2}, {1, 1, 1, -1})}},
                            {{"pad", 0}});
  EXPECT_EQ(out.at("y").shape, (std::vector<int64_t>{2, 1, 2, 2}));
  expect_near(values(out.at("y")), {3, -1, 7, -1, 0.75, 0.25, 0, -2}, 1e-15);
}

TEST(Examples, SoftmaxSubtractsTheMax) {
  Graph g;
  testing::build_softmax(g);
  Program p = lower(g);
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  // exp(1000) overflows f32; after subtracting the max, row 0 is softmax([-2, -1, 0]):
  // e^-2 = 0.1353352832, e^-1 = 0.3678794412, sum with 1 = 1.5032147244.
  TensorMap out = interpret(p, {{"x", f32({3, 3}, {1000, 1001, 1002, 0, 0, 0, -1, 0, -1})}});
  // Row 2: e^-1 / (1 + 2 e^-1) = 0.2119415576, 1 / (1 + 2 e^-1) = 0.5761168847.
  expect_near(values(out.at("y")),
              {0.0900305732, 0.2447284711, 0.6652409558, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.2119415576,
               0.5761168847, 0.2119415576},
              1e-6);
}

}  // namespace
}  // namespace uops
