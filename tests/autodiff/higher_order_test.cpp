// Second derivatives: gradient_graph of a gradient graph, for every op of the registry and for
// random graphs, against central finite differences (f64) of the first derivative. The first
// derivative is itself a graph whose inputs are the op's inputs and g<output>; its outputs
// g<input> are differentiated with respect to both (named d<input> and dg<output>).
#include <gtest/gtest.h>

#include <cstdlib>

#include "autodiff/grad_check.h"
#include "autodiff/op_cases.h"
#include "support/random_graph.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/ir.h"
#include "uops/ops/op_gradient.h"

namespace uops {

using namespace ir;

namespace {

constexpr int kTrials = 4;

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& op : all_ops()) names.push_back(op.name);
  return names;
}

std::vector<std::string> float_inputs(const Graph& g) {
  std::vector<std::string> names;
  for (auto& n : g.nodes())
    if (n.kind == UopKind::input && is_float(n.dtype)) names.push_back(n.name);
  return names;
}

// Checks the derivatives of `first` (a gradient graph) at `inputs` with respect to every float
// input; "" when they match.
std::string check_second(const Graph& first, const TensorMap& inputs, const ParamMap& params,
                         uint64_t seed, double tol, int* unreliable) {
  std::vector<std::string> wrt = float_inputs(first);
  Program forward = lower(first);
  Program second = gradient(first, wrt);
  verify_or_throw(second, "second derivative");
  TensorMap dd = testing::random_output_grads(forward, inputs, params, seed);
  return testing::compare_with_finite_differences(forward, second, inputs, dd, params, wrt, tol,
                                                  unreliable);
}

class SecondDerivative : public ::testing::TestWithParam<std::string> {};

TEST_P(SecondDerivative, MatchesFiniteDifferencesOfTheFirst) {
  const OpDef& op = find_op(GetParam());
  Graph g = op.build(DType::f64);
  Graph first = gradient_graph(g, differentiable_inputs(op), "g");
  Program forward = forward_program(op, DType::f64);
  int unreliable = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::OpCase c = testing::random_op_case(op, DType::f64, 100 + trial);
    TensorMap inputs = c.inputs;
    for (auto& [name, t] : testing::random_output_grads(forward, c.inputs, c.params, 700 + trial))
      inputs["g" + name.substr(1)] = t;
    std::string failure = check_second(first, inputs, c.params, 900 + trial, 1e-5, &unreliable);
    ASSERT_EQ(failure, "") << "trial " << trial;
  }
  EXPECT_EQ(unreliable, 0);
}

INSTANTIATE_TEST_SUITE_P(AllOps, SecondDerivative, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

// A third derivative goes through scatters and their reindexes again: softmax's, whose second
// derivative has every rule of the first in it.
TEST(ThirdDerivative, SoftmaxMatchesFiniteDifferencesOfTheSecond) {
  const OpDef& op = find_op("softmax");
  Graph first = gradient_graph(op.build(DType::f64), {"x"}, "g");
  Graph second = gradient_graph(first, {"x", "gy"}, "h");
  testing::OpCase c = testing::random_op_case(op, DType::f64, 3);
  TensorMap inputs = c.inputs;
  Program forward = forward_program(op, DType::f64);
  for (auto& [name, t] : testing::random_output_grads(forward, c.inputs, c.params, 4))
    inputs["g" + name.substr(1)] = t;
  for (auto& [name, t] : testing::random_output_grads(lower(first), inputs, c.params, 5))
    inputs["h" + name.substr(1)] = t;
  EXPECT_EQ(check_second(second, inputs, c.params, 6, 1e-5, nullptr), "");
}

int trials() {
  const char* env = std::getenv("UOPS_AUTODIFF_TRIALS");
  return env ? std::atoi(env) : 40;
}

// Random graphs (tensors used several times, padding, reductions, selects, iotas and casts):
// second derivatives with the same care about unreliable differences as the first.
TEST(RandomGraphSecondDerivative, MatchesFiniteDifferencesOfTheFirst) {
  int checked = 0, unreliable = 0;
  for (int seed = 0; seed < trials() && !HasFailure(); ++seed) {
    RandomGraphOptions options;
    options.dtype = DType::f64;
    options.smooth = true;
    RandomCase c = random_case(seed, options);
    std::vector<std::string> wrt = float_inputs(c.graph);
    if (wrt.empty()) continue;
    Program forward = lower(c.graph);
    TensorMap y = interpret(forward, c.inputs, c.params);
    if (!testing::all_finite(y)) continue;
    Graph first = gradient_graph(c.graph, wrt, "g");
    TensorMap inputs = c.inputs;
    for (auto& [name, t] : testing::random_output_grads(forward, c.inputs, c.params, seed))
      inputs["g" + name.substr(1)] = t;
    if (!testing::all_finite(interpret(lower(first), inputs, c.params))) continue;
    std::string failure = check_second(first, inputs, c.params, seed + 1, 1e-5, &unreliable);
    EXPECT_EQ(failure, "") << "seed " << seed << "\n" << print(forward);
    ++checked;
  }
  EXPECT_GT(checked, trials() / 2);
  EXPECT_LE(unreliable, checked / 50 + 1) << "of " << checked << " graphs";
}

}  // namespace
}  // namespace uops
