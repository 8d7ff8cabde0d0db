// A WGAN-GP-style critic trained with a gradient penalty: the loss holds the gradient of the
// critic with respect to its input (a gradient graph, composed with more uops), so training
// it differentiates a gradient. The critic D(x) = w2 · tanh(W1 x + b1) separates "real"
// samples (around +1) from "fake" ones (around -1); the loss
//   mean D(fake) - mean D(real) + 10 · mean_i (|∇x D(x̂_i)| - 1)²,
// x̂ between a real and a fake sample, goes down under plain gradient descent. Exits 1 when it
// does not.
#include <uops/uops.h>

#include <cmath>
#include <cstdio>
#include <random>

using namespace uops;

namespace {

constexpr int64_t kBatch = 16, kFeatures = 4, kHidden = 8;

// D over the rows of x [B, F]: [B, 1].
Node critic(Graph& g, Node x, Node w1, Node b1, Node w2) {
  Node xw =
      g.binary(BinaryOp::mul, g.reindex(x, {"dA0", "dB0", "dA1[=dB1]"}, {"i0", "i2"}, {x, w1}),
               g.reindex(w1, {"dA0", "dB0", "dA1"}, {"i1", "i2"}, {x, w1}));
  Node pre = g.squeeze(g.reduce(ReduceOp::sum, {2}, xw), {2});
  Node h = g.unary(UnaryOp::tanh,
                   g.binary(BinaryOp::add, pre, g.reindex(b1, {"dA0", "dB0"}, {"i1"}, {x, b1})));
  Node hw = g.binary(BinaryOp::mul, h, g.reindex(w2, {"dA0", "dA1"}, {"i1"}, {h}));
  return g.reduce(ReduceOp::sum, {1}, hw);
}

Node input_named(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i].kind == UopKind::input && g.nodes()[i].name == name) return Node{int(i)};
  return Node{};
}

Tensor normal(std::vector<int64_t> shape, double mean, double sd, std::mt19937_64& rng) {
  Tensor t(DType::f64, shape);
  std::normal_distribution<double> d(mean, sd);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(rng));
  return t;
}

}  // namespace

int main() {
  // The critic's gradient with respect to its input, as a graph: inputs xh, W1, b1, w2 and gd
  // (the seed: ones, so row i of gxh is the gradient of D(xh_i)).
  Graph d_of_xh;
  Node xh = d_of_xh.input("xh", 2, DType::f64), w1 = d_of_xh.input("W1", 2, DType::f64),
       b1 = d_of_xh.input("b1", 1, DType::f64), w2 = d_of_xh.input("w2", 1, DType::f64);
  d_of_xh.output("d", critic(d_of_xh, xh, w1, b1, w2));
  Graph penalty = gradient_graph(d_of_xh, {"xh"}, "g");

  // The loss, built on the gradient graph: the same weights score real and fake batches.
  Graph g = penalty.without_outputs();
  Node gx{penalty.outputs()[0].second};
  w1 = input_named(g, "W1"), b1 = input_named(g, "b1"), w2 = input_named(g, "w2");
  Node xr = g.input("xr", 2, DType::f64), xf = g.input("xf", 2, DType::f64);
  Node wasserstein =
      g.binary(BinaryOp::sub, g.reduce(ReduceOp::mean, {0, 1}, critic(g, xf, w1, b1, w2)),
               g.reduce(ReduceOp::mean, {0, 1}, critic(g, xr, w1, b1, w2)));
  Node norm = g.unary(UnaryOp::sqrt, g.reduce(ReduceOp::sum, {1}, g.binary(BinaryOp::mul, gx, gx)));
  Node off = g.binary(BinaryOp::sub, norm, g.fill(norm, 1.0));
  Node gp = g.reduce(ReduceOp::mean, {0, 1}, g.binary(BinaryOp::mul, off, off));
  g.output("loss",
           g.binary(BinaryOp::add, wasserstein, g.binary(BinaryOp::mul, g.fill(gp, 10.0), gp)));

  // Its gradient with respect to the weights differentiates the penalty's gradient again.
  Program loss = optimize(lower(g));
  Program step = optimize(gradient(g, {"W1", "b1", "w2"}));

  std::mt19937_64 rng(7);
  TensorMap in{{"W1", normal({kHidden, kFeatures}, 0, 0.5, rng)},
               {"b1", normal({kHidden}, 0, 0.1, rng)},
               {"w2", normal({kHidden}, 0, 0.5, rng)},
               {"gd", Tensor(DType::f64, {kBatch, 1})},
               {"dloss", Tensor(DType::f64, {1, 1})}};
  for (int64_t i = 0; i < kBatch; ++i) in["gd"].set(i, 1.0);
  in["dloss"].set(0, 1.0);
  const double rate = 0.02;
  double first = 0, last = 0;
  for (int it = 0; it < 30; ++it) {
    in["xr"] = normal({kBatch, kFeatures}, 1.0, 0.3, rng);
    in["xf"] = normal({kBatch, kFeatures}, -1.0, 0.3, rng);
    Tensor xhat(DType::f64, {kBatch, kFeatures});
    std::uniform_real_distribution<double> unit(0, 1);
    for (int64_t r = 0; r < kBatch; ++r) {
      double e = unit(rng);
      for (int64_t f = 0; f < kFeatures; ++f) {
        int64_t k = r * kFeatures + f;
        xhat.set(k, e * in["xr"].get(k) + (1 - e) * in["xf"].get(k));
      }
    }
    in["xh"] = xhat;
    TensorMap args;
    for (int t : loss.inputs()) args[loss.tensors[t].name] = in.at(loss.tensors[t].name);
    double l = interpret(loss, args).at("loss").get(0);
    if (it == 0) first = l;
    last = l;
    if (it % 5 == 0 || it == 29) std::printf("step %2d  loss %+.4f\n", it, l);
    args.clear();
    for (int t : step.inputs()) args[step.tensors[t].name] = in.at(step.tensors[t].name);
    TensorMap grads = interpret(step, args);
    for (const char* w : {"W1", "b1", "w2"}) {
      Tensor& v = in.at(w);
      const Tensor& dv = grads.at(std::string("d") + w);
      for (int64_t i = 0; i < v.numel(); ++i) v.set(i, v.get(i) - rate * dv.get(i));
    }
  }
  bool ok = std::isfinite(last) && last < first - 0.1;
  std::printf("loss %+.4f -> %+.4f: %s\n", first, last, ok ? "decreased" : "did not decrease");
  return ok ? 0 : 1;
}
