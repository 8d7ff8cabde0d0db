// Gradients given saved forward values (gradient(g, wrt, prefix, saved)): for every op of the
// registry and for random graphs, the gradient fed what with_saved_outputs(g, saved) kept equals
// the gradient that recomputes everything, for the residuals and for random choices of nodes;
// given all its residuals, a gradient recomputes no forward value but views, and softmax's reads
// neither x nor an exponential.
// UOPS_AUTODIFF_TRIALS sets the number of random graphs (default 150).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "autodiff/grad_check.h"
#include "autodiff/op_cases.h"
#include "support/random_graph.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/error.h"
#include "uops/ir.h"
#include "uops/ops/op_gradient.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;

namespace {

std::vector<std::string> float_inputs(const Graph& g) {
  std::vector<std::string> names;
  for (auto& n : g.nodes())
    if (n.kind == UopKind::input && is_float(n.dtype)) names.push_back(n.name);
  return names;
}

std::vector<std::string> input_names(const Program& p) {
  std::vector<std::string> names;
  for (int t : p.inputs()) names.push_back(p.tensors[t].name);
  return names;
}

// The largest difference between the gradient of `g` given the values of `saved` (kept by its
// forward pass on `inputs`) and the gradient that recomputes them, both optimized or not.
double saved_vs_recomputed(const Graph& g, const std::vector<std::string>& wrt,
                           const std::vector<int>& saved, const TensorMap& inputs,
                           const ParamMap& params, uint64_t seed, bool optimized) {
  Program forward = lower(with_saved_outputs(g, saved));
  TensorMap available = interpret(forward, inputs, params);
  for (auto& [name, t] : inputs) available[name] = t;
  for (auto& [name, t] : testing::random_output_grads(lower(g), inputs, params, seed))
    available[name] = t;
  Program given = gradient(g, wrt, "d", saved), recomputed = gradient(g, wrt);
  verify_or_throw(given, "gradient given saved values");
  if (optimized) {
    PipelineOptions verify;
    verify.verify = true;
    given = optimize(given, verify);
  }
  return testing::max_difference(testing::run_with(given, available, params),
                                 testing::run_with(recomputed, available, params));
}

// The forward nodes other than reindexes that the optimized gradient given `saved` still computes
// (its temporaries t<id> are named after their nodes), as text; "" when none. (Unoptimized, a
// rule's constant shaped like a forward value still reads it, at no index.)
std::string recomputed_forward_values(const Graph& g, const std::vector<std::string>& wrt,
                                      const std::vector<int>& saved) {
  std::string out;
  for (const TensorInfo& t : optimize(gradient(g, wrt, "d", saved)).tensors) {
    if (t.role != Role::temporary || t.name.size() < 2 || t.name[0] != 't') continue;
    int id = std::atoi(t.name.c_str() + 1);
    if (id < int(g.nodes().size()) && g.nodes()[size_t(id)].kind != UopKind::reindex)
      out += " " + t.name + " (" + uop_kind_name(g.nodes()[size_t(id)].kind) + ")";
  }
  return out;
}

// Every non-input node of `g` with probability 1/3.
std::vector<int> random_nodes(const Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> out;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].kind != UopKind::input && rng() % 3 == 0) out.push_back(int(i));
  return out;
}

class SavedValues : public ::testing::TestWithParam<std::string> {};

TEST_P(SavedValues, GiveTheGradientThatRecomputesThem) {
  const OpDef& op = find_op(GetParam());
  Graph g = op.build(DType::f64);
  std::vector<std::string> wrt = differentiable_inputs(op);
  if (wrt.empty()) GTEST_SKIP() << op.name << " has no float input";
  for (int trial = 0; trial < 3; ++trial) {
    testing::OpCase c = testing::random_op_case(op, DType::f64, 300 + trial);
    std::vector<int> residuals = gradient_residuals(g, wrt);
    EXPECT_LE(saved_vs_recomputed(g, wrt, residuals, c.inputs, c.params, trial, trial % 2), 1e-12)
        << "residuals, trial " << trial;
    if (trial == 0) {
      EXPECT_EQ(recomputed_forward_values(g, wrt, residuals), "");
    }
    EXPECT_LE(saved_vs_recomputed(g, wrt, random_nodes(g, trial), c.inputs, c.params, trial, false),
              1e-12)
        << "random nodes, trial " << trial;
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& op : all_ops()) names.push_back(op.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, SavedValues, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

int trials() {
  const char* env = std::getenv("UOPS_AUTODIFF_TRIALS");
  return env ? std::atoi(env) : 150;
}

TEST(SavedValuesOfRandomGraphs, GiveTheGradientThatRecomputesThem) {
  RandomGraphOptions options;
  options.dtype = DType::f64;
  options.smooth = true;
  int checked = 0;
  for (int seed = 0; seed < trials() && !HasFailure(); ++seed) {
    RandomCase c = random_case(seed, options);
    std::vector<std::string> wrt = float_inputs(c.graph);
    if (wrt.empty()) continue;
    Program every_tensor = lower(c.graph);
    for (TensorInfo& t : every_tensor.tensors)
      if (t.role == Role::temporary) t.role = Role::output;
    // Overflowing chains make NaN of both sides, which compare unequal.
    if (!testing::all_finite(interpret(every_tensor, c.inputs, c.params))) continue;
    ++checked;
    std::vector<int> residuals = gradient_residuals(c.graph, wrt);
    EXPECT_LE(saved_vs_recomputed(c.graph, wrt, residuals, c.inputs, c.params, seed, seed % 2),
              1e-12)
        << "seed " << seed << ", residuals";
    EXPECT_EQ(recomputed_forward_values(c.graph, wrt, residuals), "") << "seed " << seed;
    EXPECT_LE(saved_vs_recomputed(c.graph, wrt, random_nodes(c.graph, seed), c.inputs, c.params,
                                  seed, false),
              1e-12)
        << "seed " << seed << ", random nodes";
  }
  EXPECT_GT(checked, trials() / 2);
}

// Given its residuals (the exponentials and their row sums), softmax's gradient is
// dx = e * (dy / s - sum(dy * e) / s^2): two passes over what the forward pass kept, as a
// framework's softmax backward reads y, and no exponential.
TEST(SavedValues, SoftmaxReadsItsExponentialsNotX) {
  Graph g = find_op("softmax").build(DType::f32);
  std::vector<int> residuals = gradient_residuals(g, {"x"});
  ASSERT_EQ(residuals.size(), 2u);
  const UopNode& e = g.nodes()[residuals[0]];
  const UopNode& s = g.nodes()[residuals[1]];
  EXPECT_EQ(e.kind, UopKind::unary);
  EXPECT_EQ(e.uop, UnaryOp::exp);
  EXPECT_EQ(s.kind, UopKind::reduce);  // the row sum, not its broadcast back over the row
  std::string se = "saved" + std::to_string(residuals[0]);
  std::string ss = "saved" + std::to_string(residuals[1]);
  std::vector<std::string> names = input_names(gradient(g, {"x"}, "d", residuals));
  std::sort(names.begin(), names.end());
  std::vector<std::string> expected = {"dy", se, ss};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(names, expected);
  // The forward pass keeps them beside y.
  Program forward = lower(with_saved_outputs(g, residuals));
  std::vector<std::string> outputs;
  for (int t : forward.outputs()) outputs.push_back(forward.tensors[t].name);
  std::sort(outputs.begin(), outputs.end());
  expected = {"y", se, ss};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(outputs, expected);
}

TEST(SavedValues, BadChoicesAreClearErrors) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), other = g.input("saved3", 1, DType::f32);
  Node e = g.unary(UnaryOp::exp, x);
  Node y = g.binary(BinaryOp::mul, e, other);
  g.output("y", y);
  auto message = [&](const std::vector<int>& saved) {
    try {
      gradient(g, {"x"}, "d", saved);
    } catch (const Error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({e.id}), "no error");
  EXPECT_NE(message({7}).find("not in the graph"), std::string::npos) << message({7});
  EXPECT_NE(message({-1}).find("not in the graph"), std::string::npos) << message({-1});
  EXPECT_NE(message({x.id}).find("the input 'x'"), std::string::npos) << message({x.id});
  EXPECT_NE(message({e.id, e.id}).find("saved twice"), std::string::npos);
  // Node 3 would be named saved3, which an input is called already.
  EXPECT_NE(message({y.id}).find("already a tensor"), std::string::npos) << message({y.id});
  EXPECT_THROW(with_saved_outputs(g, {y.id}), Error);
}

}  // namespace
}  // namespace uops
