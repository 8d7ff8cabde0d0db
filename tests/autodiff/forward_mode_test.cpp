// Forward mode and Hessian-vector products: jvp of every op and of random graphs against central
// finite differences along the tangent (f64), and against reverse mode by the transpose identity
// sum(dy * J t) = sum(t * J^T dy); hvp of every op against finite differences of the gradient.
#include "uops/autodiff/forward_mode.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "autodiff/grad_check.h"
#include "autodiff/op_cases.h"
#include "support/random_graph.h"
#include "uops/ir.h"
#include "uops/ops/op_gradient.h"

namespace uops {

using namespace ir;

namespace {

constexpr int kTrials = 6;
constexpr double kStep = 1e-6;

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& op : all_ops()) names.push_back(op.name);
  return names;
}

// `inputs` moved by s * t<x> along every x in `wrt`.
TensorMap moved(const TensorMap& inputs, const TensorMap& tangents,
                const std::vector<std::string>& wrt, double s, const std::string& prefix) {
  TensorMap out = inputs;
  for (auto& x : wrt) {
    Tensor& v = out.at(x);
    const Tensor& t = tangents.at(prefix + x);
    for (int64_t i = 0; i < v.numel(); ++i) v.set(i, v.get(i) + s * t.get(i));
  }
  return out;
}

// Compares `analytic` (named <prefix><y>) with the central difference of `f` along the tangents,
// over every float output of f; elements where steps h and 2h disagree are unreliable and
// counted, not failed. "" when every other element matches.
std::string compare_along(const Program& f, const TensorMap& inputs, const TensorMap& tangents,
                          const std::vector<std::string>& wrt, const ParamMap& params,
                          const TensorMap& analytic, const std::string& prefix, int* unreliable) {
  auto diff = [&](double h) {
    TensorMap up = testing::run_with(f, moved(inputs, tangents, wrt, h, "t"), params);
    TensorMap down = testing::run_with(f, moved(inputs, tangents, wrt, -h, "t"), params);
    for (auto& [name, y] : up)
      for (int64_t i = 0; i < y.numel(); ++i) y.set(i, (y.get(i) - down.at(name).get(i)) / (2 * h));
    return up;
  };
  TensorMap one = diff(kStep), two = diff(2 * kStep);
  for (auto& [name, numeric] : one) {
    if (numeric.dtype == DType::i32) continue;
    auto it = analytic.find(prefix + name);
    if (it == analytic.end()) return "no " + prefix + name;
    for (int64_t i = 0; i < numeric.numel(); ++i) {
      double a = it->second.get(i), n = numeric.get(i), n2 = two.at(name).get(i);
      if (std::abs(a - n) <= 1e-5 * (1 + std::abs(n))) continue;
      if (unreliable && std::abs(n - n2) > 1e-4 * (1 + std::abs(n))) {
        ++*unreliable;
        continue;
      }
      std::ostringstream s;
      s << prefix << name << " element " << i << ": analytic " << a << ", finite differences " << n;
      return s.str();
    }
  }
  return "";
}

TensorMap tangents_for(const TensorMap& inputs, const std::vector<std::string>& wrt,
                       uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap t;
  for (auto& x : wrt)
    t["t" + x] = testing::random_tensor(DType::f64, inputs.at(x).shape, rng, -1, 1);
  return t;
}

TensorMap with(TensorMap a, const TensorMap& b) {
  for (auto& [name, t] : b) a[name] = t;
  return a;
}

class ForwardMode : public ::testing::TestWithParam<std::string> {};

TEST_P(ForwardMode, JvpMatchesFiniteDifferences) {
  const OpDef& op = find_op(GetParam());
  std::vector<std::string> wrt = differentiable_inputs(op);
  Program forward = forward_program(op, DType::f64);
  if (forward.outputs().size() == 1 && forward.tensors[forward.outputs()[0]].dtype == DType::i32) {
    // argmax: no float output moves, and jvp says so rather than giving an empty graph.
    EXPECT_THROW(jvp(op.build(DType::f64), wrt), Error);
    return;
  }
  Program tangent = lower(jvp(op.build(DType::f64), wrt));
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::OpCase c = testing::random_op_case(op, DType::f64, 200 + trial);
    TensorMap t = tangents_for(c.inputs, wrt, 300 + trial);
    TensorMap got = testing::run_with(tangent, with(c.inputs, t), c.params);
    ASSERT_EQ(compare_along(forward, c.inputs, t, wrt, c.params, got, "t", nullptr), "")
        << "trial " << trial;
  }
}

TEST_P(ForwardMode, HvpMatchesFiniteDifferencesOfTheGradient) {
  const OpDef& op = find_op(GetParam());
  std::vector<std::string> wrt = differentiable_inputs(op);
  Program forward = forward_program(op, DType::f64);
  Program grad = gradient_program(op, DType::f64);
  Program h = lower(hvp(op.build(DType::f64), wrt));
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::OpCase c = testing::random_op_case(op, DType::f64, 400 + trial);
    TensorMap at = with(c.inputs, testing::random_output_grads(forward, c.inputs, c.params, trial));
    TensorMap t = tangents_for(c.inputs, wrt, 500 + trial);
    TensorMap got = testing::run_with(h, with(at, t), c.params);
    ASSERT_EQ(compare_along(grad, at, t, wrt, c.params, got, "t", nullptr), "")
        << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ForwardMode, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

int trials() {
  const char* env = std::getenv("UOPS_AUTODIFF_TRIALS");
  return env ? std::atoi(env) : 100;
}

double dot(const TensorMap& a, const TensorMap& b, const std::string& a_prefix,
           const std::string& b_prefix, const std::vector<std::string>& names) {
  double s = 0;
  for (auto& n : names) {
    const Tensor &x = a.at(a_prefix + n), &y = b.at(b_prefix + n);
    for (int64_t i = 0; i < x.numel(); ++i) s += x.get(i) * y.get(i);
  }
  return s;
}

// Random graphs: jvp against finite differences (counting unreliable elements as the gradient
// checker does) and against reverse mode through the transpose identity, which has no step.
TEST(RandomGraphForwardMode, MatchesFiniteDifferencesAndReverseMode) {
  int checked = 0, unreliable = 0;
  for (int seed = 0; seed < trials() && !HasFailure(); ++seed) {
    RandomGraphOptions options;
    options.dtype = DType::f64;
    options.smooth = true;
    RandomCase c = random_case(seed, options);
    std::vector<std::string> wrt, outs;
    for (auto& n : c.graph.nodes())
      if (n.kind == UopKind::input && is_float(n.dtype)) wrt.push_back(n.name);
    for (auto& [name, n] : c.graph.outputs())
      if (is_float(c.graph.nodes()[n].dtype)) outs.push_back(name);
    if (wrt.empty() || outs.empty()) continue;
    Program forward = lower(c.graph);
    if (!testing::all_finite(interpret(forward, c.inputs, c.params))) continue;
    TensorMap t = tangents_for(c.inputs, wrt, seed);
    TensorMap jt = testing::run_with(lower(jvp(c.graph, wrt)), with(c.inputs, t), c.params);
    std::string failure = compare_along(forward, c.inputs, t, wrt, c.params, jt, "t", &unreliable);
    EXPECT_EQ(failure, "") << "seed " << seed << "\n" << print(forward);

    TensorMap dy = testing::random_output_grads(forward, c.inputs, c.params, seed + 1);
    TensorMap vj = testing::run_with(gradient(c.graph, wrt), with(c.inputs, dy), c.params);
    double lhs = dot(dy, jt, "d", "t", outs), rhs = dot(t, vj, "t", "d", wrt);
    EXPECT_NEAR(lhs, rhs, 1e-9 * (1 + std::abs(lhs))) << "seed " << seed;
    ++checked;
  }
  EXPECT_GT(checked, trials() / 2);
  EXPECT_LE(unreliable, checked / 50 + 1) << "of " << checked << " graphs";
}

TEST(ForwardMode, RejectsWhatHasNoTangent) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), i = g.input("i", 1, DType::i32);
  g.input("tx", 1, DType::f32);
  g.output("y", g.select(0, x, i));
  EXPECT_THROW(jvp(g, {"z"}), Error);
  EXPECT_THROW(jvp(g, {"i"}), Error);
  EXPECT_THROW(jvp(g, {"x", "x"}), Error);
  try {
    jvp(g, {"x"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "jvp: the tangent of 'x' would be named 'tx', which is already a tensor of the "
                 "graph");
  }
}

}  // namespace
}  // namespace uops
