// The 2-layer MLP that examples/train_mlp.cpp trains and tests/scheduled checks: linear -> relu ->
// linear -> cross_entropy with SGD, every op, gradient and update a uop program, chained through
// named buffers ("h", "dlogits", "dw1"...) so the runtime orders their blocks by the buffers
// they share.
#pragma once

#include <uops/backends/runtime_nodes.h>
#include <uops/uops.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace uops::mlp {

constexpr int64_t kBatch = 64, kFeatures = 16, kHidden = 32, kClasses = 4;
constexpr double kLearningRate = 0.5;
constexpr int kSteps = 5;

// w_next = w - lr * dw. Programs cannot write their inputs, so the update goes to "<w>.next"
// and a copy step puts it back into "<w>", ready for the next run of the graph.
inline Program sgd(int rank) {
  Graph g;
  Node w = g.input("w", rank, DType::f64), dw = g.input("dw", rank, DType::f64);
  g.output("w_next",
           g.binary(BinaryOp::sub, w, g.binary(BinaryOp::mul, g.fill(dw, kLearningRate), dw)));
  return optimize(lower(g));
}

// One training step: forward, loss, backward, update. Tensors not mapped keep their names
// ("x", "labels", "logits", "loss", "dloss", "dlogits").
inline std::vector<ChainStep> training_step() {
  const OpDef &linear = find_op("linear"), &relu = find_op("relu");
  const OpDef& xent = find_op("cross_entropy");
  Program linear_forward = optimize(forward_program(linear, DType::f64));
  std::vector<ChainStep> steps = {
      {"fc1", linear_forward, {{"w", "w1"}, {"b", "b1"}, {"y", "h_pre"}}, {}},
      {"relu", optimize(forward_program(relu, DType::f64)), {{"x", "h_pre"}, {"y", "h"}}, {}},
      {"fc2", linear_forward, {{"x", "h"}, {"w", "w2"}, {"b", "b2"}, {"y", "logits"}}, {}},
      {"loss", optimize(forward_program(xent, DType::f64)), {}, {}},
      {"loss grad", optimize(gradient_program(xent, DType::f64)), {}, {}},
      {"fc2 grad",
       optimize(gradient_program(linear, DType::f64)),
       {{"dy", "dlogits"}, {"x", "h"}, {"w", "w2"}, {"dx", "dh"}, {"dw", "dw2"}, {"db", "db2"}},
       {}},
      {"relu grad",
       optimize(gradient_program(relu, DType::f64)),
       {{"dy", "dh"}, {"x", "h_pre"}, {"dx", "dh_pre"}},
       {}},
      // The first layer's input is data: only its weights get a gradient.
      {"fc1 grad",
       optimize(gradient(linear.build(DType::f64), {"w", "b"})),
       {{"dy", "dh_pre"}, {"dw", "dw1"}, {"db", "db1"}},
       {}},
  };
  for (auto [name, rank] : {std::pair{"w1", 2}, {"b1", 1}, {"w2", 2}, {"b2", 1}}) {
    std::string p = name;
    steps.push_back(
        {"sgd " + p, sgd(rank), {{"w", p}, {"dw", "d" + p}, {"w_next", p + ".next"}}, {}});
    steps.push_back(
        {"copy " + p, copy_program(rank, DType::f64), {{"x", p + ".next"}, {"y", p}}, {}});
  }
  return steps;
}

// A random dataset labelled by a random linear teacher, and a random initial model.
inline TensorMap initial_buffers() {
  std::mt19937_64 rng(7);
  auto uniform = [&](std::vector<int64_t> shape, double bound) {
    Tensor t(DType::f64, std::move(shape));
    std::uniform_real_distribution<double> u(-bound, bound);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
    return t;
  };
  TensorMap b;
  b["x"] = uniform({kBatch, kFeatures}, 1.0);
  Tensor teacher = uniform({kClasses, kFeatures}, 1.0);
  b["labels"] = Tensor(DType::i32, {kBatch});
  for (int64_t m = 0; m < kBatch; ++m) {
    std::vector<double> score(kClasses, 0.0);
    for (int64_t c = 0; c < kClasses; ++c)
      for (int64_t k = 0; k < kFeatures; ++k)
        score[c] += b["x"].get(m * kFeatures + k) * teacher.get(c * kFeatures + k);
    b["labels"].set(m, double(std::max_element(score.begin(), score.end()) - score.begin()));
  }
  b["w1"] = uniform({kHidden, kFeatures}, 1.0 / std::sqrt(double(kFeatures)));
  b["b1"] = uniform({kHidden}, 0.1);
  b["w2"] = uniform({kClasses, kHidden}, 1.0 / std::sqrt(double(kHidden)));
  b["b2"] = uniform({kClasses}, 0.1);
  b["dloss"] = Tensor(DType::f64, {1});
  b["dloss"].set(0, 1.0);
  return b;
}

}  // namespace uops::mlp
