// A 2-layer MLP trained by generated kernels through the runtime: forward ops, cross_entropy,
// their gradient programs and SGD updates chained through named buffers, scheduled on two CPU
// streams, give the loss trajectory of the same steps run one by one by the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "uops/autodiff/gradient.h"
#include "uops/backends/runtime_nodes.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"
#include "uops/ops/gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/runtime/runtime.h"

namespace uops {
namespace {

constexpr int64_t kBatch = 64, kFeatures = 16, kHidden = 32, kClasses = 4;
constexpr double kLearningRate = 0.5;
constexpr int kSteps = 5;

// w_next = w - lr * dw. A program cannot write its input, so the update goes to "<w>.next" and
// a copy step puts it back into "<w>" for the next run.
Program sgd_program(int rank) {
  Graph g;
  Node w = g.input("w", rank, DType::f64), dw = g.input("dw", rank, DType::f64);
  g.output("w_next",
           g.binary(BinaryOp::sub, w, g.binary(BinaryOp::mul, g.fill(dw, kLearningRate), dw)));
  return optimize(lower(g));
}

std::vector<ChainStep> training_step() {
  const OpDef &linear = find_op("linear"), &relu = find_op("relu");
  const OpDef& cross_entropy = find_op("cross_entropy");
  Program linear_forward = optimize(forward_program(linear, DType::f64));
  // The first layer's input is data: only its weights need a gradient.
  Program linear_weights_grad = optimize(gradient(linear.build(DType::f64), {"w", "b"}));
  std::vector<ChainStep> steps = {
      {"fc1", linear_forward, {{"w", "w1"}, {"b", "b1"}, {"y", "h_pre"}}, {}},
      {"relu", optimize(forward_program(relu, DType::f64)), {{"x", "h_pre"}, {"y", "h"}}, {}},
      {"fc2", linear_forward, {{"x", "h"}, {"w", "w2"}, {"b", "b2"}, {"y", "logits"}}, {}},
      {"loss", optimize(forward_program(cross_entropy, DType::f64)), {}, {}},
      {"loss grad", optimize(gradient_program(cross_entropy, DType::f64)), {}, {}},
      {"fc2 grad",
       optimize(gradient_program(linear, DType::f64)),
       {{"dy", "dlogits"}, {"x", "h"}, {"w", "w2"}, {"dx", "dh"}, {"dw", "dw2"}, {"db", "db2"}},
       {}},
      {"relu grad",
       optimize(gradient_program(relu, DType::f64)),
       {{"dy", "dh"}, {"x", "h_pre"}, {"dx", "dh_pre"}},
       {}},
      {"fc1 grad", linear_weights_grad, {{"dy", "dh_pre"}, {"dw", "dw1"}, {"db", "db1"}}, {}},
  };
  for (auto [param, rank] : {std::pair{"w1", 2}, {"b1", 1}, {"w2", 2}, {"b2", 1}}) {
    std::string p = param;
    steps.push_back(
        {"sgd " + p, sgd_program(rank), {{"w", p}, {"dw", "d" + p}, {"w_next", p + ".next"}}, {}});
    steps.push_back(
        {"copy " + p, copy_program(rank, DType::f64), {{"x", p + ".next"}, {"y", p}}, {}});
  }
  return steps;
}

Tensor uniform(std::vector<int64_t> shape, double bound, std::mt19937_64& rng) {
  Tensor t(DType::f64, std::move(shape));
  std::uniform_real_distribution<double> u(-bound, bound);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// Random inputs labelled by a random linear teacher, so there is something to learn.
TensorMap initial_buffers() {
  std::mt19937_64 rng(2024);
  TensorMap b;
  b["x"] = uniform({kBatch, kFeatures}, 1.0, rng);
  Tensor teacher = uniform({kFeatures, kClasses}, 1.0, rng);
  b["labels"] = Tensor(DType::i32, {kBatch});
  for (int64_t m = 0; m < kBatch; ++m) {
    int best = 0;
    double best_score = -INFINITY;
    for (int c = 0; c < kClasses; ++c) {
      double score = 0;
      for (int64_t k = 0; k < kFeatures; ++k)
        score += b["x"].get(m * kFeatures + k) * teacher.get(k * kClasses + c);
      if (score > best_score) best = c, best_score = score;
    }
    b["labels"].set(m, best);
  }
  b["w1"] = uniform({kHidden, kFeatures}, 1.0 / std::sqrt(double(kFeatures)), rng);
  b["b1"] = uniform({kHidden}, 0.1, rng);
  b["w2"] = uniform({kClasses, kHidden}, 1.0 / std::sqrt(double(kHidden)), rng);
  b["b2"] = uniform({kClasses}, 0.1, rng);
  b["dloss"] = Tensor(DType::f64, {1});
  b["dloss"].set(0, 1.0);
  return b;
}

// Under ThreadSanitizer (gcc's, whose runtime the kernels then share) the generated kernels are
// instrumented too, so two nodes that touch one buffer without a dependency between them are
// reported, not only races in the runtime's own code.
CCompileOptions kernel_options() {
  CCompileOptions options;
#ifdef __SANITIZE_THREAD__
  options.extra_flags = {"-fsanitize=thread"};
#endif
  return options;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TrainMlp, RuntimeLossTrajectoryMatchesInterpreterAndDecreases) {
  std::vector<ChainStep> steps = training_step();
  TensorMap reference = initial_buffers();
  std::vector<double> expected;
  for (int s = 0; s < kSteps; ++s) {
    interpret_chain(steps, reference);
    expected.push_back(reference.at("loss").get(0));
  }

  ChainNodes nodes(steps, initial_buffers(), kernel_options());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u) << "the backward pass branches";
  std::vector<double> losses;
  for (int s = 0; s < kSteps; ++s) {
    executor.run();
    losses.push_back(nodes.read("loss").get(0));
  }

  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(losses[s], expected[s], 1e-9 * std::abs(expected[s])) << "step " << s;
    if (s > 0) {
      EXPECT_LT(losses[s], losses[s - 1]) << "step " << s;
    }
  }
  EXPECT_LT(losses.back(), 0.9 * losses.front());
  for (const char* w : {"w1", "b1", "w2", "b2"}) {
    const Tensor &a = reference.at(w), &b = nodes.read(w);
    for (int64_t i = 0; i < a.numel(); ++i)
      ASSERT_NEAR(a.get(i), b.get(i), 1e-9 * (1 + std::abs(a.get(i)))) << w << " " << i;
  }
}

TEST(TrainMlp, TraceAndDotOfOneStepNameTheNodes) {
  ChainNodes nodes(training_step(), initial_buffers(), kernel_options());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  runtime::Trace trace;
  executor.run(&trace);
  EXPECT_EQ(trace.events.size(), executor.graph().size());

  std::string json = testing::TempDir() + "train_mlp_step.json";
  std::string dot = testing::TempDir() + "train_mlp_step.dot";
  runtime::write_chrome_json(trace, json);
  runtime::write_dot(executor.graph(), dot);
  std::string json_text = read_file(json), dot_text = read_file(dot);
  for (const char* name : {"fc1: zero", "fc1: block 0", "loss grad: block 0", "relu grad: zero",
                           "sgd w1: block 0", "copy b2: block 0"}) {
    EXPECT_NE(json_text.find(name), std::string::npos) << name;
    EXPECT_NE(dot_text.find(name), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace uops
