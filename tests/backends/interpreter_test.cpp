// The interpreter on every uop kind and dtype, against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "support/tensors.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

using testing::f32;
using testing::f64;
using testing::i32;
using testing::values;

TensorMap run_all(const Graph& g, const TensorMap& in, const ParamMap& params = {}) {
  Program p = lower(g);
  EXPECT_EQ(verify(p), std::vector<std::string>{});
  return interpret(p, in, params);
}

Tensor run(const Graph& g, const TensorMap& in, const ParamMap& params = {}) {
  TensorMap out = run_all(g, in, params);
  EXPECT_EQ(out.size(), 1u);
  return out.begin()->second;
}

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 0) {
  std::vector<double> got = values(t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
    else if (std::isinf(want[i]))
      EXPECT_EQ(got[i], want[i]) << "element " << i;
    else
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

double tolerance(DType t) {
  return t == DType::f32 ? 1e-6 : 1e-14;
}

TEST(Interpreter, ReindexTransposeFlipBroadcast) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("t", g.reindex(x, {"dA1", "dA0"}, {"i1", "i0"}));
  g.output("flip", g.reindex(x, {"dA0", "dA1"}, {"dA0 - 1 - i0", "i1"}));
  g.output("bcast", g.reindex(x, {"2", "dA0", "dA1"}, {"i1", "i2"}));
  TensorMap out = run_all(g, {{"x", f32({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(out.at("t").shape, (std::vector<int64_t>{3, 2}));
  expect_values(out.at("t"), {1, 4, 2, 5, 3, 6});
  expect_values(out.at("flip"), {4, 5, 6, 1, 2, 3});
  EXPECT_EQ(out.at("bcast").shape, (std::vector<int64_t>{2, 2, 3}));
  expect_values(out.at("bcast"), {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
}

TEST(Interpreter, ReindexPaddingReadsFill) {
  Graph g;
  g.param("pad");
  Node x = g.input("x", 1, DType::f64);
  g.output("zero", g.reindex(x, {"dA0 + 2 * $pad"}, {"i0 - $pad"}));
  g.output("fill", g.reindex(x, {"dA0 + 2"}, {"i0 - 1"}, {}, -1.5));
  g.output("const", g.fill(x, 2.5));
  TensorMap out = run_all(g, {{"x", f64({3}, {7, 8, 9})}}, {{"pad", 2}});
  expect_values(out.at("zero"), {0, 0, 7, 8, 9, 0, 0});
  expect_values(out.at("fill"), {-1.5, 7, 8, 9, -1.5});
  expect_values(out.at("const"), {2.5, 2.5, 2.5});
}

TEST(Interpreter, ReindexFloorDivModAndStride) {
  Graph g;
  g.param("s");
  Node x = g.input("x", 1, DType::f32);
  g.output("strided", g.reindex(x, {"(dA0 - 1) / $s + 1"}, {"i0 * $s"}));
  g.output("wrap", g.reindex(x, {"5"}, {"(i0 - 2) % dA0"}));
  g.output("halves", g.reindex(x, {"6"}, {"(i0 - 3) / 2 + 1"}));
  TensorMap out = run_all(g, {{"x", f32({7}, {0, 1, 2, 3, 4, 5, 6})}}, {{"s", 3}});
  expect_values(out.at("strided"), {0, 3, 6});
  // (i0 - 2) % 7 for i0 = 0..4: 5, 6, 0, 1, 2.
  expect_values(out.at("wrap"), {5, 6, 0, 1, 2});
  // (i0 - 3) / 2 + 1 for i0 = 0..5: -1, 0, 0, 1, 1, 2 (floor division); -1 reads the fill.
  expect_values(out.at("halves"), {0, 0, 0, 1, 1, 2});
}

TEST(Interpreter, ReindexKeepsI32) {
  Graph g;
  Node k = g.input("k", 1, DType::i32);
  g.output("r", g.reindex(k, {"dA0"}, {"dA0 - 1 - i0"}));
  Tensor r = run(g, {{"k", i32({3}, {-5, 0, 16777216})}});
  EXPECT_EQ(r.dtype, DType::i32);
  expect_values(r, {16777216, 0, -5});
}

TEST(Interpreter, DivisionByZeroInAnIndexIsAnError) {
  Graph g;
  g.param("k");
  Node x = g.input("x", 1, DType::f32);
  g.output("d", g.reindex(x, {"dA0"}, {"i0 / $k"}));
  g.output("m", g.reindex(x, {"dA0"}, {"i0 % $k"}));
  Program p = lower(g);
  TensorMap in = {{"x", f32({2}, {1, 2})}};
  EXPECT_THROW(interpret(p, in, {{"k", 0}}), Error);
  TensorMap out = interpret(p, in, {{"k", 2}});
  expect_values(out.at("d"), {1, 1});
  expect_values(out.at("m"), {1, 2});
}

struct UnaryCase {
  UnaryOp op;
  std::vector<double> in, want;
};

TEST(Interpreter, EveryUnaryOpInF32AndF64) {
  const double pi = 3.14159265358979323846;
  const std::vector<UnaryCase> cases = {
      {UnaryOp::neg, {0.5, -1, 4}, {-0.5, 1, -4}},
      {UnaryOp::abs, {-2, 0, 3.5}, {2, 0, 3.5}},
      {UnaryOp::exp, {0, 1, -1}, {1, 2.718281828459045, 0.36787944117144233}},
      {UnaryOp::log, {1, 2.718281828459045, 0.5}, {0, 1, -0.6931471805599453}},
      {UnaryOp::sqrt, {0, 4, 2}, {0, 2, 1.4142135623730951}},
      {UnaryOp::rsqrt, {4, 0.25, 1}, {0.5, 2, 1}},
      {UnaryOp::recip, {2, -4, 0.5}, {0.5, -0.25, 2}},
      {UnaryOp::tanh, {0, 1, -1}, {0, 0.7615941559557649, -0.7615941559557649}},
      {UnaryOp::sigmoid, {0, 2, -2}, {0.5, 0.8807970779778823, 0.11920292202211755}},
      {UnaryOp::sin, {0, pi / 2, pi / 6}, {0, 1, 0.5}},
      {UnaryOp::cos, {0, pi, pi / 3}, {1, -1, 0.5}},
      {UnaryOp::floor, {1.5, -1.5, 2}, {1, -2, 2}},
  };
  for (DType dt : {DType::f32, DType::f64}) {
    for (const UnaryCase& c : cases) {
      SCOPED_TRACE(std::string(op_name(c.op)) + " " + dtype_name(dt));
      Graph g;
      g.output("y", g.unary(c.op, g.input("x", 1, dt)));
      Tensor y = run(g, {{"x", testing::make_tensor(dt, {3}, c.in)}});
      EXPECT_EQ(y.dtype, dt);
      expect_values(y, c.want, tolerance(dt));
    }
  }
}

TEST(Interpreter, UnaryEdgeValues) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  g.output("log", g.unary(UnaryOp::log, x));
  g.output("recip", g.unary(UnaryOp::recip, x));
  g.output("sqrt", g.unary(UnaryOp::sqrt, x));
  TensorMap out = run_all(g, {{"x", f64({2}, {0, -1})}});
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  expect_values(out.at("log"), {-inf, nan});
  expect_values(out.at("recip"), {inf, -1});
  expect_values(out.at("sqrt"), {0, nan});
}

struct BinaryCase {
  BinaryOp op;
  std::vector<double> want;
};

TEST(Interpreter, EveryBinaryOpInF32AndF64) {
  const std::vector<double> x = {1, 2, -3, 5}, y = {4, 2, 2, -0.5};
  const std::vector<BinaryCase> cases = {
      {BinaryOp::add, {5, 4, -1, 4.5}},
      {BinaryOp::sub, {-3, 0, -5, 5.5}},
      {BinaryOp::mul, {4, 4, -6, -2.5}},
      {BinaryOp::div, {0.25, 1, -1.5, -10}},
      {BinaryOp::pow, {1, 4, 9, 0.4472135954999579}},
      {BinaryOp::max, {4, 2, 2, 5}},
      {BinaryOp::min, {1, 2, -3, -0.5}},
      {BinaryOp::eq, {0, 1, 0, 0}},
      {BinaryOp::ne, {1, 0, 1, 1}},
      {BinaryOp::lt, {1, 0, 1, 0}},
      {BinaryOp::le, {1, 1, 1, 0}},
  };
  for (DType dt : {DType::f32, DType::f64}) {
    for (const BinaryCase& c : cases) {
      SCOPED_TRACE(std::string(op_name(c.op)) + " " + dtype_name(dt));
      Graph g;
      g.output("z", g.binary(c.op, g.input("x", 1, dt), g.input("y", 1, dt)));
      Tensor z = run(
          g, {{"x", testing::make_tensor(dt, {4}, x)}, {"y", testing::make_tensor(dt, {4}, y)}});
      expect_values(z, c.want, tolerance(dt));
    }
  }
}

TEST(Interpreter, MaxMinTiesAndNaN) {
  // Ties pick the first operand (visible on signed zeros); a NaN first operand gives the second.
  const double nan = std::nan("");
  Graph g;
  Node x = g.input("x", 1, DType::f64), y = g.input("y", 1, DType::f64);
  g.output("max", g.binary(BinaryOp::max, x, y));
  g.output("min", g.binary(BinaryOp::min, x, y));
  TensorMap out =
      run_all(g, {{"x", f64({4}, {-0.0, 0.0, nan, 1})}, {"y", f64({4}, {0.0, -0.0, 1, nan})}});
  std::vector<double> mx = values(out.at("max")), mn = values(out.at("min"));
  EXPECT_TRUE(std::signbit(mx[0]));
  EXPECT_FALSE(std::signbit(mx[1]));
  EXPECT_TRUE(std::signbit(mn[0]));
  EXPECT_FALSE(std::signbit(mn[1]));
  EXPECT_EQ(mx[2], 1);
  EXPECT_TRUE(std::isnan(mx[3]));
  EXPECT_EQ(mn[2], 1);
  EXPECT_TRUE(std::isnan(mn[3]));
}

TEST(Interpreter, I32BinaryStoresTruncateTowardZero) {
  Graph g;
  Node x = g.input("x", 1, DType::i32), y = g.input("y", 1, DType::i32);
  g.output("add", g.binary(BinaryOp::add, x, y));
  g.output("div", g.binary(BinaryOp::div, x, y));
  g.output("lt", g.binary(BinaryOp::lt, x, y));
  TensorMap out = run_all(g, {{"x", i32({4}, {7, -7, 3, 1})}, {"y", i32({4}, {2, 2, 3, 0})}});
  EXPECT_EQ(out.at("div").dtype, DType::i32);
  expect_values(out.at("add"), {9, -5, 6, 1});
  // 3.5 -> 3, -3.5 -> -3, 1, and 1/0 = inf is outside i32 so it stores 0.
  expect_values(out.at("div"), {3, -3, 1, 0});
  expect_values(out.at("lt"), {0, 1, 0, 0});
}

TEST(Interpreter, F64KeepsDoublePrecision) {
  Graph g;
  g.output("z", g.binary(BinaryOp::add, g.input("x", 1, DType::f64), g.input("y", 1, DType::f64)));
  Tensor z = run(g, {{"x", f64({1}, {0.1})}, {"y", f64({1}, {0.2})}});
  EXPECT_EQ(z.get(0), 0.1 + 0.2);
  EXPECT_NE(z.get(0), 0.3);
}

TEST(Interpreter, Ternary) {
  for (DType dt : {DType::f32, DType::f64}) {
    Graph g;
    Node c = g.input("c", 1, dt), a = g.input("a", 1, dt), b = g.input("b", 1, dt);
    g.output("r", g.ternary(c, a, b));
    Tensor r = run(g, {{"c", testing::make_tensor(dt, {4}, {1, 0, -2, -0.0})},
                       {"a", testing::make_tensor(dt, {4}, {10, 20, 30, 40})},
                       {"b", testing::make_tensor(dt, {4}, {-1, -2, -3, -4})}});
    expect_values(r, {10, -2, 30, -4});
  }
  Graph g;
  Node c = g.input("c", 1, DType::i32), a = g.input("a", 1, DType::f32);
  g.output("r", g.ternary(c, a, g.unary(UnaryOp::neg, a)));
  expect_values(run(g, {{"c", i32({3}, {0, 5, -1})}, {"a", f32({3}, {1, 2, 3})}}), {-1, 2, 3});
}

struct ReduceCase {
  ReduceOp op;
  std::vector<int> axes;
  std::vector<int64_t> shape;
  std::vector<double> want;
};

TEST(Interpreter, EveryReduceOp) {
  // x = [[1, 5, 2], [-1, 3, 3]]
  const std::vector<ReduceCase> cases = {
      {ReduceOp::sum, {1}, {2, 1}, {8, 5}},
      {ReduceOp::prod, {1}, {2, 1}, {10, -9}},
      {ReduceOp::mean, {1}, {2, 1}, {8.0 / 3, 5.0 / 3}},
      {ReduceOp::max, {1}, {2, 1}, {5, 3}},
      {ReduceOp::min, {1}, {2, 1}, {1, -1}},
      {ReduceOp::argmax, {1}, {2, 1}, {1, 1}},  // row 1: 3, 3 tie, first index wins
      {ReduceOp::argmin, {1}, {2, 1}, {0, 0}},
      {ReduceOp::sum, {0}, {1, 3}, {0, 8, 5}},
      {ReduceOp::prod, {0}, {1, 3}, {-1, 15, 6}},
      {ReduceOp::mean, {0}, {1, 3}, {0, 4, 2.5}},
      {ReduceOp::max, {0}, {1, 3}, {1, 5, 3}},
      {ReduceOp::min, {0}, {1, 3}, {-1, 3, 2}},
      {ReduceOp::argmax, {0}, {1, 3}, {0, 0, 1}},
      {ReduceOp::argmin, {0}, {1, 3}, {1, 1, 0}},
      {ReduceOp::sum, {0, 1}, {1, 1}, {13}},
      {ReduceOp::prod, {0, 1}, {1, 1}, {-90}},
      {ReduceOp::mean, {0, 1}, {1, 1}, {13.0 / 6}},
      {ReduceOp::max, {0, 1}, {1, 1}, {5}},
      {ReduceOp::min, {0, 1}, {1, 1}, {-1}},
      {ReduceOp::argmax, {0, 1}, {1, 1}, {1}},  // row-major position among the reduced axes
      {ReduceOp::argmin, {0, 1}, {1, 1}, {3}},
  };
  for (DType dt : {DType::f32, DType::f64}) {
    for (const ReduceCase& c : cases) {
      SCOPED_TRACE(std::string(op_name(c.op)) + " over " + std::to_string(c.axes.size()) +
                   " axes from " + std::to_string(c.axes[0]) + " " + dtype_name(dt));
      Graph g;
      g.output("r", g.reduce(c.op, c.axes, g.input("x", 2, dt)));
      Tensor r = run(g, {{"x", testing::make_tensor(dt, {2, 3}, {1, 5, 2, -1, 3, 3})}});
      EXPECT_EQ(r.shape, c.shape);
      EXPECT_EQ(r.dtype, is_arg_reduce(c.op) ? DType::i32 : dt);
      expect_values(r, c.want, tolerance(dt));
    }
  }
}

TEST(Interpreter, ArgReductionTiesKeepFirstIndex) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("amax", g.reduce(ReduceOp::argmax, {1}, x));
  g.output("amin", g.reduce(ReduceOp::argmin, {1}, x));
  TensorMap out = run_all(g, {{"x", f32({3, 4}, {2, 2, 1, 2, 7, 7, 7, 7, 3, 1, 9, 1})}});
  expect_values(out.at("amax"), {0, 0, 2});
  expect_values(out.at("amin"), {2, 0, 1});
}

TEST(Interpreter, AllAxesReductionToRankZero) {
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  Node total = g.reduce(ReduceOp::sum, {0, 1}, x);
  g.output("scalar", g.reindex(total, {}, {"0", "0"}));
  g.output("of_scalar", g.reduce(ReduceOp::max, {}, g.reindex(total, {}, {"0", "0"})));
  TensorMap out = run_all(g, {{"x", f64({2, 2}, {1.5, 2.5, -1, 4})}});
  EXPECT_TRUE(out.at("scalar").shape.empty());
  expect_values(out.at("scalar"), {7});
  EXPECT_TRUE(out.at("of_scalar").shape.empty());
  expect_values(out.at("of_scalar"), {7});
}

TEST(Interpreter, ReduceOverAnEmptyAxisGivesTheIdentity) {
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  g.output("sum", g.reduce(ReduceOp::sum, {1}, x));
  g.output("prod", g.reduce(ReduceOp::prod, {1}, x));
  g.output("max", g.reduce(ReduceOp::max, {1}, x));
  g.output("argmax", g.reduce(ReduceOp::argmax, {1}, x));
  TensorMap out = run_all(g, {{"x", f64({2, 0}, {})}});
  expect_values(out.at("sum"), {0, 0});
  expect_values(out.at("prod"), {1, 1});
  expect_values(out.at("max"), {-std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity()});
  expect_values(out.at("argmax"), {0, 0});
}

TEST(Interpreter, SelectGathersAndReadsZeroOutOfRange) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  Node cols = g.input("cols", 2, DType::i32), rows = g.input("rows", 2, DType::i32);
  g.output("by_col", g.select(1, x, cols));
  g.output("by_row", g.select(0, x, rows));
  TensorMap out = run_all(g, {{"x", f32({2, 4}, {10, 11, 12, 13, 20, 21, 22, 23})},
                              {"cols", i32({2, 3}, {3, 0, -1, 4, 1, 1})},
                              {"rows", i32({3, 4}, {1, 0, 1, 0, 0, 0, 0, 0, 2, -1, 1, 1})}});
  EXPECT_EQ(out.at("by_col").shape, (std::vector<int64_t>{2, 3}));
  expect_values(out.at("by_col"), {13, 10, 0, 0, 21, 21});
  EXPECT_EQ(out.at("by_row").shape, (std::vector<int64_t>{3, 4}));
  expect_values(out.at("by_row"), {20, 11, 22, 13, 10, 11, 12, 13, 0, 0, 22, 23});
}

TEST(Interpreter, SelectInF64WithComputedIndex) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  Node order = g.reduce(ReduceOp::argmax, {0}, x);  // [1] i32
  g.output("best", g.select(0, x, order));
  expect_values(run(g, {{"x", f64({4}, {0.5, -2, 8.25, 8})}}), {8.25});
}

TEST(Interpreter, OutputsNamingInputsOrSharedNodes) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  Node e = g.unary(UnaryOp::abs, x);
  g.output("a", e);
  g.output("b", e);
  g.output("same", x);
  TensorMap out = run_all(g, {{"x", f32({2}, {-1, 2})}});
  expect_values(out.at("a"), {1, 2});
  expect_values(out.at("b"), {1, 2});
  expect_values(out.at("same"), {-1, 2});
}

}  // namespace
}  // namespace uops
