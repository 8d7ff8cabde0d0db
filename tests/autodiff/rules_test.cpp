// Each uop kind's gradient rule against central finite differences in f64, on random shapes
// and values (a dozen cases each), plus the conventions where the derivative is undefined.
#include <gtest/gtest.h>

#include <functional>

#include "autodiff/grad_check.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

using testing::compare_with_finite_differences;
using testing::random_output_grads;
using testing::random_tensor;
using testing::run_with;

constexpr int kTrials = 12;

struct Inputs {
  TensorMap tensors;
  ParamMap params;
};
using MakeInputs = std::function<Inputs(std::mt19937_64&)>;

void expect_matches_finite_differences(const Graph& g, const std::vector<std::string>& wrt,
                                       const MakeInputs& make, int trials = kTrials) {
  Program forward = lower(g);
  Program grad = gradient(g, wrt);
  verify_or_throw(grad, "gradient");
  for (int trial = 0; trial < trials; ++trial) {
    std::mt19937_64 rng(trial);
    Inputs in = make(rng);
    TensorMap dy = random_output_grads(forward, in.tensors, in.params, 1000 + trial);
    std::string failure =
        compare_with_finite_differences(forward, grad, in.tensors, dy, in.params, wrt);
    ASSERT_EQ(failure, "") << "trial " << trial << "\n" << print(grad);
  }
}

std::vector<int64_t> random_shape(std::mt19937_64& rng, int rank, int max = 4) {
  std::vector<int64_t> s;
  for (int a = 0; a < rank; ++a) s.push_back(std::uniform_int_distribution<int>(1, max)(rng));
  return s;
}

MakeInputs values(std::vector<std::string> names, int rank, double lo, double hi) {
  return [=](std::mt19937_64& rng) {
    Inputs in;
    std::vector<int64_t> shape = random_shape(rng, rank);
    for (auto& n : names) in.tensors[n] = random_tensor(DType::f64, shape, rng, lo, hi);
    return in;
  };
}

class UnaryGradient : public ::testing::TestWithParam<UnaryOp> {};

TEST_P(UnaryGradient, MatchesFiniteDifferences) {
  UnaryOp op = GetParam();
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  g.output("y", g.unary(op, x));
  bool positive =
      op == UnaryOp::log || op == UnaryOp::sqrt || op == UnaryOp::rsqrt || op == UnaryOp::recip;
  // floor: values away from integers, where its derivative is 0.
  double lo = positive ? 0.5 : op == UnaryOp::floor ? 0.1 : -1.5;
  double hi = op == UnaryOp::floor ? 0.9 : 1.5;
  expect_matches_finite_differences(g, {"x"}, values({"x"}, 2, lo, hi));
}

INSTANTIATE_TEST_SUITE_P(AllOps, UnaryGradient,
                         ::testing::Values(UnaryOp::neg, UnaryOp::abs, UnaryOp::exp, UnaryOp::log,
                                           UnaryOp::sqrt, UnaryOp::rsqrt, UnaryOp::recip,
                                           UnaryOp::tanh, UnaryOp::sigmoid, UnaryOp::sin,
                                           UnaryOp::cos, UnaryOp::floor),
                         [](const auto& info) { return std::string(op_name(info.param)); });

class BinaryGradient : public ::testing::TestWithParam<BinaryOp> {};

TEST_P(BinaryGradient, MatchesFiniteDifferences) {
  BinaryOp op = GetParam();
  Graph g;
  Node x = g.input("x", 2, DType::f64), y = g.input("y", 2, DType::f64);
  g.output("z", g.binary(op, x, y));
  // div and pow on positive values; random values elsewhere are distinct, away from ties.
  bool positive = op == BinaryOp::div || op == BinaryOp::pow;
  expect_matches_finite_differences(g, {"x", "y"},
                                    values({"x", "y"}, 2, positive ? 0.5 : -1.5, 1.5));
}

INSTANTIATE_TEST_SUITE_P(AllOps, BinaryGradient,
                         ::testing::Values(BinaryOp::add, BinaryOp::sub, BinaryOp::mul,
                                           BinaryOp::div, BinaryOp::pow, BinaryOp::max,
                                           BinaryOp::min, BinaryOp::eq, BinaryOp::ne, BinaryOp::lt,
                                           BinaryOp::le),
                         [](const auto& info) { return std::string(op_name(info.param)); });

// One-element f64 tensors make the exact checks below easy to read.
Tensor scalar(double v) {
  Tensor t(DType::f64, {1});
  t.set(0, v);
  return t;
}
Tensor vec(std::vector<double> v) {
  Tensor t(DType::f64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}
std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.get(i));
  return v;
}

TEST(BinaryGradient, MaxAndMinSendATieToTheFirstOperand) {
  for (BinaryOp op : {BinaryOp::max, BinaryOp::min}) {
    Graph g;
    Node x = g.input("x", 1, DType::f64), y = g.input("y", 1, DType::f64);
    g.output("z", g.binary(op, x, y));
    auto out = interpret(gradient(g, {"x", "y"}),
                         {{"x", vec({2, 1, 3})}, {"y", vec({2, 3, 1})}, {"dz", vec({5, 6, 7})}});
    bool is_max = op == BinaryOp::max;
    EXPECT_EQ(values_of(out.at("dx")), (std::vector<double>{5, is_max ? 0 : 6., is_max ? 7 : 0.}))
        << op_name(op);
    EXPECT_EQ(values_of(out.at("dy")), (std::vector<double>{0, is_max ? 6 : 0., is_max ? 0 : 7.}))
        << op_name(op);
  }
}

TEST(BinaryGradient, PowGivesTheExponentNoGradientWhereTheBaseIsNotPositive) {
  Graph g;
  Node x = g.input("x", 1, DType::f64), y = g.input("y", 1, DType::f64);
  g.output("z", g.binary(BinaryOp::pow, x, y));
  auto out =
      interpret(gradient(g, {"x", "y"}), {{"x", scalar(0)}, {"y", scalar(2)}, {"dz", scalar(1)}});
  EXPECT_EQ(out.at("dx").get(0), 0);  // 2 * 0^1
  EXPECT_EQ(out.at("dy").get(0), 0);  // not 0 * log(0) = NaN
}

// docs/design.md §6: "its divide gradient lost a sign".
TEST(Traps, DivideGradientKeepsTheSignOfTheDivisor) {
  Graph g;
  Node x = g.input("x", 1, DType::f64), y = g.input("y", 1, DType::f64);
  g.output("z", g.binary(BinaryOp::div, x, y));
  auto out =
      interpret(gradient(g, {"x", "y"}), {{"x", scalar(3)}, {"y", scalar(2)}, {"dz", scalar(1)}});
  EXPECT_EQ(out.at("dx").get(0), 0.5);    // 1 / y
  EXPECT_EQ(out.at("dy").get(0), -0.75);  // -x / y^2
}

// docs/design.md §6: "gradients of a tensor used twice overwrote each other instead of
// accumulating".
TEST(Traps, ATensorUsedTwiceAccumulatesEveryUse) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  Node e = g.unary(UnaryOp::exp, x);
  // x * x uses x twice in one uop; exp(x) and the reindex use it twice more.
  Node z = g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, x), e);
  g.output("z", g.binary(BinaryOp::add, z, g.reindex(x, {"dA0"}, {"i0"})));
  auto out = interpret(gradient(g, {"x"}), {{"x", vec({0.5, -2})}, {"dz", vec({1, 1})}});
  EXPECT_DOUBLE_EQ(out.at("dx").get(0), 2 * 0.5 + std::exp(0.5) + 1);
  EXPECT_DOUBLE_EQ(out.at("dx").get(1), 2 * -2 + std::exp(-2) + 1);
  expect_matches_finite_differences(g, {"x"}, values({"x"}, 1, -1, 1));
}

TEST(Traps, AnOutputThatIsAlsoUsedAccumulatesItsSeedAndItsUses) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  Node s = g.unary(UnaryOp::sin, x);
  g.output("s", s);
  g.output("t", g.binary(BinaryOp::mul, s, s));
  g.output("u", x);
  expect_matches_finite_differences(g, {"x"}, values({"x"}, 1, -1, 1));
}

TEST(TernaryGradient, GoesToTheSelectedSideAndNeverToTheCondition) {
  Graph g;
  Node c = g.input("c", 2, DType::f64), a = g.input("a", 2, DType::f64),
       b = g.input("b", 2, DType::f64);
  g.output("z", g.ternary(c, a, b));
  auto make = [](std::mt19937_64& rng) {
    Inputs in;
    std::vector<int64_t> shape = random_shape(rng, 2);
    in.tensors["c"] = random_tensor(DType::f64, shape, rng, 0, 1.99);
    for (int64_t i = 0; i < in.tensors["c"].numel(); ++i)
      in.tensors["c"].set(i, std::floor(in.tensors["c"].get(i)));
    in.tensors["a"] = random_tensor(DType::f64, shape, rng, -1, 1);
    in.tensors["b"] = random_tensor(DType::f64, shape, rng, -1, 1);
    return in;
  };
  expect_matches_finite_differences(g, {"a", "b"}, make);
  // The condition's gradient is zero: it needs neither c nor a nor b, only dz for its shape.
  Tensor dz(DType::f64, {1, 2});
  dz.set(0, 4);
  dz.set(1, 5);
  auto out = interpret(gradient(g, {"c"}), {{"dz", dz}});
  EXPECT_EQ(values_of(out.at("dc")), (std::vector<double>{0, 0}));
}

// docs/design.md §6: "its reduce gradient handled sum only". Every reduce op, over every subset of
// the axes of a rank-3 input.
class ReduceGradient : public ::testing::TestWithParam<ReduceOp> {};

TEST_P(ReduceGradient, MatchesFiniteDifferencesOverEveryAxisSet) {
  ReduceOp op = GetParam();
  for (int mask = 0; mask < 8; ++mask) {
    std::vector<int> axes;
    for (int a = 0; a < 3; ++a)
      if (mask & (1 << a)) axes.push_back(a);
    Graph g;
    Node x = g.input("x", 3, DType::f64);
    Node r = g.reduce(op, axes, x);
    g.output("y", r);
    // An arg-reduction has no gradient: give the graph a float output too.
    if (is_arg_reduce(op)) g.output("z", g.unary(UnaryOp::sin, x));
    SCOPED_TRACE("axes mask " + std::to_string(mask));
    expect_matches_finite_differences(g, {"x"}, values({"x"}, 3, -2, 2), 4);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ReduceGradient,
                         ::testing::Values(ReduceOp::sum, ReduceOp::prod, ReduceOp::mean,
                                           ReduceOp::max, ReduceOp::min, ReduceOp::argmax,
                                           ReduceOp::argmin),
                         [](const auto& info) { return std::string(op_name(info.param)); });

TEST(Traps, ReduceProdGradientIsExactAtZeros) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  g.output("y", g.reduce(ReduceOp::prod, {0}, x));
  Program p = gradient(g, {"x"});
  auto grad_at = [&](std::vector<double> v) {
    return values_of(interpret(p, {{"x", vec(v)}, {"dy", vec({2})}}).at("dx"));
  };
  EXPECT_EQ(grad_at({2, 5, 3}), (std::vector<double>{30, 12, 20}));
  EXPECT_EQ(grad_at({2, 0, 3}), (std::vector<double>{0, 12, 0}));  // y / x would give NaN
  EXPECT_EQ(grad_at({0, 0, 3}), (std::vector<double>{0, 0, 0}));
}

TEST(Traps, ReduceMaxAndMinGradientGoesToTheFirstExtremumOnly) {
  for (ReduceOp op : {ReduceOp::max, ReduceOp::min}) {
    Graph g;
    Node x = g.input("x", 1, DType::f64);
    g.output("y", g.reduce(op, {0}, x));
    double e = op == ReduceOp::max ? 3 : -3;
    auto out = interpret(gradient(g, {"x"}), {{"x", vec({1, e, 0, e})}, {"dy", vec({2})}});
    EXPECT_EQ(values_of(out.at("dx")), (std::vector<double>{0, 2, 0, 0})) << op_name(op);
  }
}

TEST(Traps, ReduceMeanDividesByTheCountOfEveryReducedAxis) {
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  g.output("y", g.reduce(ReduceOp::mean, {0, 1}, x));
  Tensor t(DType::f64, {2, 3}), dy(DType::f64, {1, 1});
  dy.set(0, 6);
  auto out = interpret(gradient(g, {"x"}), {{"x", t}, {"dy", dy}});
  EXPECT_EQ(values_of(out.at("dx")), std::vector<double>(6, 1.0));
}

TEST(ReindexGradient, ScatterAddsAndSkipsFillPositions) {
  Graph g;
  g.param("p");
  Node x = g.input("x", 2, DType::f64);
  // Padding by $p (fill 7), a transpose, a broadcast, a flip and a strided read.
  Node padded = g.reindex(x, {"dA0 + 2 * $p", "dA1 + 2 * $p"}, {"i0 - $p", "i1 - $p"}, {x}, 7.0);
  Node t = g.reindex(x, {"dA1", "dA0"}, {"i1", "i0"});
  Node b = g.reindex(x, {"dA0", "dA1", "3"}, {"i0", "i1"});
  Node flip = g.reindex(x, {"dA0", "dA1"}, {"dA0 - 1 - i0", "i1"});
  Node strided = g.reindex(x, {"(dA0 + 1) / 2", "dA1"}, {"2 * i0", "i1"});
  g.output("padded", g.unary(UnaryOp::sin, padded));
  g.output("t", t);
  g.output("b", b);
  g.output("flip", g.binary(BinaryOp::mul, flip, x));
  g.output("strided", strided);
  auto make = [](std::mt19937_64& rng) {
    Inputs in;
    in.tensors["x"] = random_tensor(DType::f64, random_shape(rng, 2), rng, -1, 1);
    in.params["p"] = std::uniform_int_distribution<int>(0, 2)(rng);
    return in;
  };
  expect_matches_finite_differences(g, {"x"}, make);
}

TEST(ReindexGradient, FillPositionsContributeNothing) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  g.output("y", g.reindex(x, {"dA0 + 2"}, {"i0 - 1"}, {x}, 9.0));
  auto out = interpret(gradient(g, {"x"}), {{"x", vec({1, 2})}, {"dy", vec({10, 20, 30, 40})}});
  EXPECT_EQ(values_of(out.at("dx")), (std::vector<double>{20, 30}));
}

TEST(SelectGradient, ScatterAddsAndIgnoresOutOfRangeIndices) {
  Graph g;
  Node x = g.input("x", 2, DType::f64), index = g.input("index", 2, DType::i32);
  g.output("y", g.select(1, x, index));
  auto make = [](std::mt19937_64& rng) {
    Inputs in;
    std::vector<int64_t> shape = random_shape(rng, 2);
    in.tensors["x"] = random_tensor(DType::f64, shape, rng, -1, 1);
    shape[1] = std::uniform_int_distribution<int>(1, 5)(rng);
    in.tensors["index"] = random_tensor(DType::i32, shape, rng, -1, 4);
    return in;
  };
  expect_matches_finite_differences(g, {"x"}, make);

  Tensor tx(DType::f64, {1, 3}), ti(DType::i32, {1, 4}), dy(DType::f64, {1, 4});
  std::vector<int> positions = {2, -1, 2, 3};
  for (int i = 0; i < 4; ++i) {
    ti.set(i, positions[i]);
    dy.set(i, i + 1);
  }
  auto out = interpret(gradient(g, {"x"}), {{"x", tx}, {"index", ti}, {"dy", dy}});
  EXPECT_EQ(values_of(out.at("dx")), (std::vector<double>{0, 0, 1 + 3}));
}

// scatter is reindex's and select's transpose: its value adds up what lands on each position
// (dropping what lands outside), and its gradient is the gather back.
TEST(Scatter, AddsWhatLandsOnEachPositionAndDropsTheRest) {
  Graph g;
  Node x = g.input("x", 1, DType::f64), index = g.input("index", 1, DType::i32);
  // x[i] lands on i / 2 of a [2] tensor: x[4] lands outside.
  g.output("y", g.scatter(x, {"2"}, {"i0 / 2"}));
  g.output("z", g.scatter(0, x, index, "3"));
  Tensor ti(DType::i32, {5});
  std::vector<int> positions = {2, -1, 2, 0, 3};
  for (int i = 0; i < 5; ++i) ti.set(i, positions[i]);
  auto out = interpret(lower(g), {{"x", vec({1, 2, 3, 4, 5})}, {"index", ti}});
  EXPECT_EQ(values_of(out.at("y")), (std::vector<double>{1 + 2, 3 + 4}));
  EXPECT_EQ(values_of(out.at("z")), (std::vector<double>{4, 0, 1 + 3}));
}

TEST(Scatter, GradientIsTheGatherBack) {
  Graph g;
  g.param("p");
  Node x = g.input("x", 2, DType::f64), index = g.input("index", 2, DType::i32);
  // A transpose with padding by $p, a sum over axis 1 written as a scatter, and select's
  // transpose; each is multiplied by something of x so that x's gradient has several uses.
  Node t = g.scatter(x, {"dA1 + 2 * $p", "dA0"}, {"i1 + $p", "i0"});
  Node rows = g.scatter(x, {"dA0", "1"}, {"i0", "0"});
  Node sel = g.scatter(1, x, index, "3");
  g.output("t", g.unary(UnaryOp::sin, t));
  g.output("rows", g.binary(BinaryOp::mul, rows, rows));
  g.output("sel", g.unary(UnaryOp::exp, sel));
  auto make = [](std::mt19937_64& rng) {
    Inputs in;
    std::vector<int64_t> shape = random_shape(rng, 2);
    in.tensors["x"] = random_tensor(DType::f64, shape, rng, -1, 1);
    in.tensors["index"] = random_tensor(DType::i32, shape, rng, -1, 3);
    in.params["p"] = std::uniform_int_distribution<int>(0, 2)(rng);
    return in;
  };
  expect_matches_finite_differences(g, {"x"}, make);
}

TEST(Scatter, RejectsAnIndexOfTheWrongKind) {
  Graph g;
  Node x = g.input("x", 2, DType::f64), fx = g.input("fx", 2, DType::f64);
  EXPECT_THROW(g.scatter(1, x, fx, "3"), Error);
  EXPECT_THROW(g.scatter(x, {"2"}, {"i0", "i1"}), Error);
  EXPECT_THROW(g.scatter(x, {"2"}, {"i2"}), Error);
}

}  // namespace
}  // namespace uops
