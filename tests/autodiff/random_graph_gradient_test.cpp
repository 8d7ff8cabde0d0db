// Gradients of random uop graphs (tensors used several times, reindexes with padding, reductions,
// selects) against finite differences, and unchanged by the optimization pipeline.
// UOPS_AUTODIFF_TRIALS sets the number of graphs (default 150).
#include <gtest/gtest.h>

#include <cstdlib>

#include "autodiff/grad_check.h"
#include "support/random_graph.h"
#include "uops/autodiff/gradient.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

int trials() {
  const char* env = std::getenv("UOPS_AUTODIFF_TRIALS");
  return env ? std::atoi(env) : 150;
}

std::vector<std::string> float_inputs(const Graph& g) {
  std::vector<std::string> names;
  for (auto& n : g.nodes())
    if (n.kind == UopKind::input && is_float(n.dtype)) names.push_back(n.name);
  return names;
}

TEST(RandomGraphGradient, MatchesFiniteDifferencesAndSurvivesOptimization) {
  RandomGraphOptions options;
  options.dtype = DType::f64;
  options.smooth = true;
  int checked = 0, unreliable = 0;
  for (int seed = 0; seed < trials(); ++seed) {
    RandomCase c = random_case(seed, options);
    std::vector<std::string> wrt = float_inputs(c.graph);
    if (wrt.empty()) continue;
    Program forward = lower(c.graph);
    // Finite differences say nothing where chains of exp overflow.
    if (!testing::all_finite(interpret(forward, c.inputs, c.params))) continue;
    Program grad = gradient(c.graph, wrt);
    verify_or_throw(grad, "gradient");
    TensorMap dy = testing::random_output_grads(forward, c.inputs, c.params, seed);
    std::string failure = testing::compare_with_finite_differences(
        forward, grad, c.inputs, dy, c.params, wrt, 1e-5, &unreliable);
    ASSERT_EQ(failure, "") << "seed " << seed << "\n" << print(forward) << "\n" << print(grad);

    PipelineOptions verify;
    verify.verify = true;
    Program optimized = optimize(grad, verify);
    TensorMap available = c.inputs;
    for (auto& [name, t] : dy) available[name] = t;
    EXPECT_LE(testing::max_difference(testing::run_with(optimized, available, c.params),
                                      testing::run_with(grad, available, c.params)),
              1e-12)
        << "seed " << seed << "\n"
        << print(grad) << "\n"
        << print(optimized);
    ++checked;
  }
  EXPECT_GT(checked, trials() / 2);
  // Elements where finite differences do not converge are skipped; they must stay rare.
  EXPECT_LE(unreliable, checked / 50 + 1) << "of " << checked << " graphs";
}

}  // namespace
}  // namespace uops
