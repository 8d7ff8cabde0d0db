// while and case nodes: an iterative solver that runs until its residual buffer falls under a
// tolerance gives exactly what the same steps unrolled give; case runs the selected branch.
#include "uops/runtime/control_flow.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

// Newton's iteration for sqrt(a) with its residual |x^2 - a|, on plain variables the nodes
// declare as buffers.
struct Solver {
  double a = 2, x = 0, residual = 0;
  std::size_t steps = 0;

  void add_step(GraphBuilder& b) {
    b.add("newton", [this] { x = (x + a / x) / 2, ++steps; }, {buffer_id(&a)}, {buffer_id(&x)});
    b.add("residual", [this] { residual = std::abs(x * x - a); }, {buffer_id(&x)},
          {buffer_id(&residual)});
  }
  Graph body() {
    GraphBuilder b;
    add_step(b);
    return std::move(b).build();
  }
};

TEST(ControlFlow, WhileRunsUntilTheResidualIsSmallAndMatchesTheUnrolledSteps) {
  Solver looped;
  GraphBuilder b;
  // Nodes before and after the loop are ordered against it through the buffers it touches.
  b.add("start", [&] { looped.x = looped.a, looped.residual = 1; }, {},
        {buffer_id(&looped.x), buffer_id(&looped.residual)});
  b.add(while_node(
      "solve", buffer_id(&looped.residual), [&] { return looped.residual > 1e-12; }, looped.body(),
      100));
  double result = 0;
  b.add("use", [&] { result = looped.x; }, {buffer_id(&looped.x)}, {buffer_id(&result)});
  Graph graph = std::move(b).build();
  CpuExecutor executor(graph);
  executor.run();
  const std::size_t steps = looped.steps;
  EXPECT_GT(steps, 2u);
  EXPECT_LT(std::abs(result - std::sqrt(2.0)), 1e-9);
  // A second run starts over and repeats the same iterations.
  executor.run();
  EXPECT_EQ(looped.steps, 2 * steps);

  Solver unrolled;
  unrolled.x = unrolled.a;
  GraphBuilder u;
  for (std::size_t i = 0; i < steps; ++i) unrolled.add_step(u);
  CpuExecutor(std::move(u).build()).run();
  EXPECT_EQ(unrolled.x, result);  // bit for bit: the same operations in the same order
  EXPECT_EQ(unrolled.residual, looped.residual);
}

TEST(ControlFlow, WhileWhoseConditionIsFalseRunsNothing) {
  Solver s;
  s.x = 1;
  GraphBuilder b;
  b.add(while_node(
      "never", buffer_id(&s.residual), [] { return false; }, s.body(), 10));
  CpuExecutor(std::move(b).build()).run();
  EXPECT_EQ(s.steps, 0u);
}

TEST(ControlFlow, WhilePastItsIterationLimitFails) {
  Solver s;
  s.x = 1;
  GraphBuilder b;
  b.add(while_node(
      "forever", buffer_id(&s.residual), [] { return true; }, s.body(), 5));
  CpuExecutor executor(std::move(b).build());
  EXPECT_THROW(executor.run(), Error);
  EXPECT_EQ(s.steps, 5u);
}

TEST(ControlFlow, CaseRunsTheSelectedBranch) {
  int selector = 0, value = 10;
  auto branch = [&](int delta) {
    GraphBuilder b;
    b.add("update", [&value, delta] { value += delta; }, {}, {buffer_id(&value)});
    return std::move(b).build();
  };
  GraphBuilder b;
  NodeRef pick = b.add(case_node("pick", buffer_id(&selector),
                                 [&] { return std::size_t(selector); }, {branch(1), branch(100)}));
  Graph graph = std::move(b).build();
  const Node& node = graph.node(pick.index());
  EXPECT_EQ(node.reads, std::vector<BufferId>{buffer_id(&selector)});
  EXPECT_EQ(node.writes, std::vector<BufferId>{buffer_id(&value)});
  CpuExecutor executor(graph);
  executor.run();
  EXPECT_EQ(value, 11);
  selector = 1;
  executor.run();
  EXPECT_EQ(value, 111);
  selector = 2;
  EXPECT_THROW(executor.run(), Error);
  EXPECT_EQ(value, 111);
}

TEST(ControlFlow, RejectsMissingConditions) {
  EXPECT_THROW(while_node("w", 1, nullptr, GraphBuilder().build(), 1), Error);
  EXPECT_THROW(case_node("c", 1, nullptr, {}), Error);
}

}  // namespace
}  // namespace uops::runtime
