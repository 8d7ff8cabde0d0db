// Ops described through the Graph API as a user would, with index values (iota), casts, squeeze
// and assert_equal, each beside the form that had to work around their absence: both against
// plain loops, the new form's gradient against finite differences, and the new form no larger
// after the passes (blocks, temporaries) than the workaround.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <random>

#include "autodiff/grad_check.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

using testing::random_tensor;

struct DescribedOp {
  std::string name;
  // `workaround`: the form written without iota, cast, squeeze and assert_equal.
  std::function<Graph(DType, bool workaround)> build;
  // Random inputs; `big` for the size figures.
  std::function<TensorMap(DType, bool big, std::mt19937_64&)> inputs;
  ParamMap params;
  std::function<TensorMap(const TensorMap&)> reference;
  std::vector<std::string> wrt;
};

// x[i] of a row-major tensor by multi-index.
double at(const Tensor& t, std::vector<int64_t> i) {
  int64_t flat = 0;
  for (size_t a = 0; a < i.size(); ++a) flat = flat * t.shape[a] + i[a];
  return t.get(flat);
}
void put(Tensor& t, std::vector<int64_t> i, double v) {
  int64_t flat = 0;
  for (size_t a = 0; a < i.size(); ++a) flat = flat * t.shape[a] + i[a];
  t.set(flat, v);
}

Node mul(Graph& g, Node a, Node b) {
  return g.binary(BinaryOp::mul, a, b);
}

// A size-1 axis dropped the way the workarounds did: a reindex reading index 0.
Node drop_axes(Graph& g, Node x, const std::vector<int>& axes) {
  std::vector<std::string> shape, index;
  for (int a = 0, k = 0; a < g.rank(x); ++a) {
    bool dropped = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!dropped) shape.push_back("dA" + std::to_string(a));
    index.push_back(dropped ? "0" : "i" + std::to_string(k++));
  }
  return g.reindex(x, shape, index);
}
Node squeeze(Graph& g, Node x, const std::vector<int>& axes, bool workaround) {
  return workaround ? drop_axes(g, x, axes) : g.squeeze(x, axes);
}

// out = softmax(q k^T / sqrt(D)) v over q [B,S,D], k [B,T,D], v [B,T,E]. The workaround took
// D as a sum of ones.
DescribedOp attention() {
  DescribedOp op;
  op.name = "attention";
  op.wrt = {"q", "k", "v"};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    Node q = g.input("q", 3, dt), k = g.input("k", 3, dt), v = g.input("v", 3, dt);
    std::vector<std::string> bstd = {"dA0", "dA1", "dB1", "dA2[=dB2]"};
    Node qk = mul(g, g.reindex(q, bstd, {"i0", "i1", "i3"}, {q, k}),
                  g.reindex(k, bstd, {"i0", "i2", "i3"}, {q, k}));
    Node scores = squeeze(g, g.reduce(ReduceOp::sum, {3}, qk), {3}, workaround);  // [B,S,T]
    Node size;
    if (workaround) {
      Node d = g.reduce(ReduceOp::sum, {2}, g.fill(q, 1.0));  // [B,S,1]
      size = g.reindex(d, {"dA0", "dA1", "dB1"}, {"i0", "i1", "0"}, {q, k});
    } else {
      size = g.iota({"dA0", "dA1", "dB1"}, "dA2", {q, k}, dt);
    }
    Node s = mul(g, scores, g.unary(UnaryOp::rsqrt, size));
    Node m = g.reduce(ReduceOp::max, {2}, s);
    Node e = g.unary(
        UnaryOp::exp,
        g.binary(BinaryOp::sub, s, g.reindex(m, {"dA0", "dA1", "dB2"}, {"i0", "i1", "0"}, {m, s})));
    Node z = g.reduce(ReduceOp::sum, {2}, e);
    Node p =
        g.binary(BinaryOp::div, e, g.reindex(z, {"dA0", "dA1", "dB2"}, {"i0", "i1", "0"}, {z, e}));
    std::vector<std::string> bste = {"dA0", "dA1", "dA2[=dB1]", "dB2"};
    Node pv = mul(g, g.reindex(p, bste, {"i0", "i1", "i2"}, {p, v}),
                  g.reindex(v, bste, {"i0", "i2", "i3"}, {p, v}));
    g.output("out", squeeze(g, g.reduce(ReduceOp::sum, {2}, pv), {2}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t b = 2, s = big ? 64 : 3, t = big ? 64 : 5, d = big ? 32 : 4, e = big ? 32 : 3;
    return TensorMap{{"q", random_tensor(dt, {b, s, d}, rng, -1, 1)},
                     {"k", random_tensor(dt, {b, t, d}, rng, -1, 1)},
                     {"v", random_tensor(dt, {b, t, e}, rng, -1, 1)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    int64_t B = q.shape[0], S = q.shape[1], D = q.shape[2], T = k.shape[1], E = v.shape[2];
    Tensor out(q.dtype, {B, S, E});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t s = 0; s < S; ++s) {
        std::vector<double> w(T);
        double mx = -INFINITY, z = 0;
        for (int64_t t = 0; t < T; ++t) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += at(q, {b, s, d}) * at(k, {b, t, d});
          w[t] = dot / std::sqrt(double(D));
          mx = std::max(mx, w[t]);
        }
        for (auto& x : w) z += x = std::exp(x - mx);
        for (int64_t e = 0; e < E; ++e) {
          double acc = 0;
          for (int64_t t = 0; t < T; ++t) acc += w[t] / z * at(v, {b, t, e});
          put(out, {b, s, e}, acc);
        }
      }
    return TensorMap{{"out", out}};
  };
  return op;
}

// y = x * rsqrt(mean(x^2) + eps) * w over x [N,D], w [D]. `mean` already divides by D, so
// the new form needs none of the new pieces; the workaround column divides by a sum of ones.
DescribedOp rmsnorm() {
  DescribedOp op;
  op.name = "rmsnorm";
  op.wrt = {"x", "w"};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    Node x = g.input("x", 2, dt), w = g.input("w", 1, dt);
    Node ms = workaround ? g.binary(BinaryOp::div, g.reduce(ReduceOp::sum, {1}, mul(g, x, x)),
                                    g.reduce(ReduceOp::sum, {1}, g.fill(x, 1.0)))
                         : g.reduce(ReduceOp::mean, {1}, mul(g, x, x));
    Node r = g.unary(UnaryOp::rsqrt, g.binary(BinaryOp::add, ms, g.fill(ms, 1e-5)));
    Node y = mul(g, mul(g, x, g.reindex(r, {"dB0", "dB1"}, {"i0", "0"}, {r, x})),
                 g.reindex(w, {"dB0", "dA0[=dB1]"}, {"i1"}, {w, x}));
    g.output("y", y);
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t n = big ? 64 : 3, d = big ? 128 : 5;
    return TensorMap{{"x", random_tensor(dt, {n, d}, rng, -1, 1)},
                     {"w", random_tensor(dt, {d}, rng, 0.5, 1.5)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &x = in.at("x"), &w = in.at("w");
    Tensor y(x.dtype, x.shape);
    for (int64_t n = 0; n < x.shape[0]; ++n) {
      double ss = 0;
      for (int64_t d = 0; d < x.shape[1]; ++d) ss += at(x, {n, d}) * at(x, {n, d});
      double r = 1 / std::sqrt(ss / double(x.shape[1]) + 1e-5);
      for (int64_t d = 0; d < x.shape[1]; ++d) put(y, {n, d}, at(x, {n, d}) * r * at(w, {d}));
    }
    return TensorMap{{"y", y}};
  };
  return op;
}

// y[n,o,h,w] = sum x[n, (o / Og) Cg + c, h + kh, w + kw] w[o,c,kh,kw] with $groups groups over
// x [N,C,H,W], w [O,Cg,KH,KW], Og = O / groups. The new form asserts C = groups Cg and
// O % groups = 0; the workaround could not, and read zeros on a mismatch.
DescribedOp grouped_conv() {
  DescribedOp op;
  op.name = "grouped_conv2d";
  op.wrt = {"x", "w"};
  op.params = {{"groups", 2}};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    g.param("groups");
    Node x = g.input("x", 4, dt), w = g.input("w", 4, dt);
    if (!workaround) {
      g.assert_equal("dA1", "dB1 * $groups", {x, w});
      g.assert_equal("dB0 % $groups", "0", {x, w});
    }
    std::vector<std::string> shape = {"dA0", "dB0", "dA2 - dB2 + 1", "dA3 - dB3 + 1", "dB1",
                                      "dB2", "dB3"};
    Node xs = g.reindex(x, shape, {"i0", "i1 / (dB0 / $groups) * dB1 + i4", "i2 + i5", "i3 + i6"},
                        {x, w});
    Node ws = g.reindex(w, shape, {"i1", "i4", "i5", "i6"}, {x, w});
    Node sum = g.reduce(ReduceOp::sum, {4, 5, 6}, mul(g, xs, ws));
    g.output("y", squeeze(g, sum, {4, 5, 6}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t n = 2, c = big ? 8 : 4, hw = big ? 16 : 5;  // groups = 2: Cg = C / 2
    return TensorMap{{"x", random_tensor(dt, {n, c, hw, hw}, rng, -1, 1)},
                     {"w", random_tensor(dt, {big ? 8 : 6, c / 2, 3, 3}, rng, -1, 1)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &x = in.at("x"), &w = in.at("w");
    int64_t N = x.shape[0], H = x.shape[2] - 2, W = x.shape[3] - 2, O = w.shape[0], Cg = w.shape[1],
            Og = O / 2;
    Tensor y(x.dtype, {N, O, H, W});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t v = 0; v < W; ++v) {
            double acc = 0;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t kh = 0; kh < 3; ++kh)
                for (int64_t kw = 0; kw < 3; ++kw)
                  acc += at(x, {n, o / Og * Cg + c, h + kh, v + kw}) * at(w, {o, c, kh, kw});
            put(y, {n, o, h, v}, acc);
          }
    return TensorMap{{"y", y}};
  };
  return op;
}

// y[n,o,l] = sum x[n,c, l - (K-1-k) $dil] w[o,c,k], reading zeros before the start: the causal
// padding is an out-of-range read by design.
DescribedOp causal_conv1d() {
  DescribedOp op;
  op.name = "dilated_causal_conv1d";
  op.wrt = {"x", "w"};
  op.params = {{"dil", 2}};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    g.param("dil");
    Node x = g.input("x", 3, dt), w = g.input("w", 3, dt);
    std::vector<std::string> shape = {"dA0", "dB0", "dA2", "dA1[=dB1]", "dB2"};
    Node xs = g.reindex(x, shape, {"i0", "i3", "i2 - (dB2 - 1 - i4) * $dil"}, {x, w});
    Node ws = g.reindex(w, shape, {"i1", "i3", "i4"}, {x, w});
    Node sum = g.reduce(ReduceOp::sum, {3, 4}, mul(g, xs, ws));
    g.output("y", squeeze(g, sum, {3, 4}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t c = big ? 8 : 3, l = big ? 64 : 9;
    return TensorMap{{"x", random_tensor(dt, {2, c, l}, rng, -1, 1)},
                     {"w", random_tensor(dt, {big ? 8 : 4, c, 3}, rng, -1, 1)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &x = in.at("x"), &w = in.at("w");
    int64_t N = x.shape[0], C = x.shape[1], L = x.shape[2], O = w.shape[0], K = w.shape[2];
    Tensor y(x.dtype, {N, O, L});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t l = 0; l < L; ++l) {
          double acc = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t k = 0; k < K; ++k) {
              int64_t src = l - (K - 1 - k) * 2;
              if (src >= 0) acc += at(x, {n, c, src}) * at(w, {o, c, k});
            }
          put(y, {n, o, l}, acc);
        }
    return TensorMap{{"y", y}};
  };
  return op;
}

// y[m,i] = sum over j <= i of x[m,j]. The new form masks with a comparison of two index values;
// the workaround read out of range on purpose where j > i.
DescribedOp cumsum() {
  DescribedOp op;
  op.name = "cumsum";
  op.wrt = {"x"};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    Node x = g.input("x", 2, dt);
    std::vector<std::string> mnn = {"dA0", "dA1", "dA1"};
    Node terms;
    if (workaround) {
      terms = g.reindex(x, mnn, {"i0", "i2 + max(i2 - i1, 0) * dA1"});
    } else {
      Node mask = g.binary(BinaryOp::le, g.iota(mnn, "i2", {x}, dt), g.iota(mnn, "i1", {x}, dt));
      Node xs = g.reindex(x, mnn, {"i0", "i2"});
      terms = g.ternary(mask, xs, g.fill(xs, 0.0));
    }
    g.output("y", squeeze(g, g.reduce(ReduceOp::sum, {2}, terms), {2}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    return TensorMap{{"x", random_tensor(dt, {big ? 4 : 3, big ? 168 : 6}, rng, -1, 1)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor& x = in.at("x");
    Tensor y(x.dtype, x.shape);
    for (int64_t m = 0; m < x.shape[0]; ++m) {
      double acc = 0;
      for (int64_t i = 0; i < x.shape[1]; ++i) put(y, {m, i}, acc += at(x, {m, i}));
    }
    return TensorMap{{"y", y}};
  };
  return op;
}

// y = (x - mean[c]) rsqrt(var[c] + eps) gamma[c] + beta[c] over x [N,C,H,W]: needs none of the
// new pieces (the two forms are the same graph).
DescribedOp batchnorm() {
  DescribedOp op;
  op.name = "batchnorm_inference";
  op.wrt = {"x", "mean", "var", "gamma", "beta"};
  op.build = [](DType dt, bool) {
    Graph g;
    Node x = g.input("x", 4, dt);
    auto channel = [&](const char* name) {
      Node c = g.input(name, 1, dt);
      return g.reindex(c, {"dB0", "dA0[=dB1]", "dB2", "dB3"}, {"i1"}, {c, x});
    };
    Node mean = channel("mean"), var = channel("var"), gamma = channel("gamma"),
         beta = channel("beta");
    Node r = g.unary(UnaryOp::rsqrt, g.binary(BinaryOp::add, var, g.fill(var, 1e-5)));
    Node y =
        g.binary(BinaryOp::add, mul(g, mul(g, g.binary(BinaryOp::sub, x, mean), r), gamma), beta);
    g.output("y", y);
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t c = big ? 16 : 3, hw = big ? 8 : 4;
    return TensorMap{{"x", random_tensor(dt, {2, c, hw, hw}, rng, -1, 1)},
                     {"mean", random_tensor(dt, {c}, rng, -0.5, 0.5)},
                     {"var", random_tensor(dt, {c}, rng, 0.5, 1.5)},
                     {"gamma", random_tensor(dt, {c}, rng, -1, 1)},
                     {"beta", random_tensor(dt, {c}, rng, -1, 1)}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor& x = in.at("x");
    Tensor y(x.dtype, x.shape);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t c = i / (x.shape[2] * x.shape[3]) % x.shape[1];
      y.set(i, (x.get(i) - in.at("mean").get(c)) / std::sqrt(in.at("var").get(c) + 1e-5) *
                       in.at("gamma").get(c) +
                   in.at("beta").get(c));
    }
    return TensorMap{{"y", y}};
  };
  return op;
}

// The fraction of rows of logits [N,K] whose argmax is the i32 label. The new form casts the
// i32 comparison to float; the workaround picked between ones and zeros read out of range.
DescribedOp top1_accuracy() {
  DescribedOp op;
  op.name = "top1_accuracy";
  op.wrt = {"logits"};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    Node logits = g.input("logits", 2, dt), labels = g.input("labels", 1, DType::i32);
    Node pred = squeeze(g, g.reduce(ReduceOp::argmax, {1}, logits), {1}, workaround);  // [N]
    Node hit = g.binary(BinaryOp::eq, pred, g.reindex(labels, {"dB0"}, {"i0"}, {labels, pred}));
    Node hits;
    if (workaround) {
      Node ones = g.reindex(logits, {"dA0"}, {"-1", "0"}, {logits}, 1.0);
      hits = g.ternary(hit, ones, g.fill(ones, 0.0));
    } else {
      hits = g.cast(hit, dt);
    }
    g.output("accuracy", squeeze(g, g.reduce(ReduceOp::mean, {0}, hits), {0}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t n = big ? 128 : 12, k = big ? 10 : 4;
    return TensorMap{{"logits", random_tensor(dt, {n, k}, rng, -1, 1)},
                     {"labels", random_tensor(DType::i32, {n}, rng, 0, double(k - 1))}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &x = in.at("logits"), &labels = in.at("labels");
    double hits = 0;
    for (int64_t n = 0; n < x.shape[0]; ++n) {
      int64_t best = 0;
      for (int64_t k = 1; k < x.shape[1]; ++k)
        if (at(x, {n, k}) > at(x, {n, best})) best = k;
      hits += best == int64_t(labels.get(n));
    }
    Tensor a(x.dtype, {});
    a.set(0, hits / double(x.shape[0]));
    return TensorMap{{"accuracy", a}};
  };
  return op;
}

// out[b,e] = sum over l of table[idx[b,l], e]: a gather along the table's rows, summed.
DescribedOp embedding_bag() {
  DescribedOp op;
  op.name = "embedding_bag";
  op.wrt = {"table"};
  op.build = [](DType dt, bool workaround) {
    Graph g;
    Node table = g.input("table", 2, dt), idx = g.input("idx", 2, DType::i32);
    Node rows = g.reindex(table, {"dB0", "dA0", "dB1", "dA1"}, {"i1", "i3"}, {table, idx});
    Node at = g.reindex(idx, {"dA0", "1", "dA1", "dB1"}, {"i0", "i2"}, {idx, table});
    Node picked = g.select(1, rows, at);  // [B,1,L,E]
    g.output("out", squeeze(g, g.reduce(ReduceOp::sum, {2}, picked), {1, 2}, workaround));
    return g;
  };
  op.inputs = [](DType dt, bool big, std::mt19937_64& rng) {
    int64_t v = big ? 100 : 7;
    return TensorMap{
        {"table", random_tensor(dt, {v, big ? 16 : 4}, rng, -1, 1)},
        {"idx", random_tensor(DType::i32, {big ? 32 : 3, big ? 8 : 5}, rng, 0, double(v - 1))}};
  };
  op.reference = [](const TensorMap& in) {
    const Tensor &table = in.at("table"), &idx = in.at("idx");
    Tensor out(table.dtype, {idx.shape[0], table.shape[1]});
    for (int64_t b = 0; b < idx.shape[0]; ++b)
      for (int64_t e = 0; e < table.shape[1]; ++e) {
        double acc = 0;
        for (int64_t l = 0; l < idx.shape[1]; ++l) acc += at(table, {int64_t(at(idx, {b, l})), e});
        put(out, {b, e}, acc);
      }
    return TensorMap{{"out", out}};
  };
  return op;
}

std::vector<DescribedOp> described_ops() {
  return {attention(), rmsnorm(),   grouped_conv(),  causal_conv1d(),
          cumsum(),    batchnorm(), top1_accuracy(), embedding_bag()};
}

double max_error(const TensorMap& got, const TensorMap& want) {
  double worst = 0;
  for (auto& [name, w] : want) {
    const Tensor& g = got.at(name);
    if (g.shape != w.shape) return INFINITY;
    for (int64_t i = 0; i < w.numel(); ++i)
      worst = std::max(worst, std::fabs(g.get(i) - w.get(i)) / (1 + std::fabs(w.get(i))));
  }
  return worst;
}

class DescribedOps : public ::testing::TestWithParam<int> {
 protected:
  DescribedOp op = described_ops()[size_t(GetParam())];
};

TEST_P(DescribedOps, BothFormsMatchPlainLoops) {
  for (DType dt : {DType::f32, DType::f64})
    for (bool workaround : {false, true}) {
      Program p = lower(op.build(dt, workaround));
      PipelineOptions o;
      o.verify = true;
      Program q = optimize(p, o);
      for (int trial = 0; trial < 3; ++trial) {
        std::mt19937_64 rng(trial);
        TensorMap in = op.inputs(dt, false, rng);
        TensorMap want = op.reference(in);
        double tol = dt == DType::f32 ? 1e-5 : 1e-12;
        EXPECT_LE(max_error(interpret(p, in, op.params), want), tol)
            << dtype_name(dt) << (workaround ? " workaround" : "");
        EXPECT_LE(max_error(interpret(q, in, op.params), want), tol)
            << dtype_name(dt) << (workaround ? " workaround" : "") << " optimized\n"
            << print(q);
      }
    }
}

TEST_P(DescribedOps, GradientMatchesFiniteDifferences) {
  Graph g = op.build(DType::f64, false);
  Program forward = lower(g), grad = gradient(g, op.wrt);
  for (int trial = 0; trial < 2; ++trial) {
    std::mt19937_64 rng(100 + trial);
    TensorMap in = op.inputs(DType::f64, false, rng);
    TensorMap dy = testing::random_output_grads(forward, in, op.params, trial);
    EXPECT_EQ(testing::compare_with_finite_differences(forward, grad, in, dy, op.params, op.wrt),
              "");
    // And the optimized gradient program gives the same.
    TensorMap available = in;
    available.insert(dy.begin(), dy.end());
    EXPECT_LE(testing::max_difference(testing::run_with(optimize(grad), available, op.params),
                                      testing::run_with(grad, available, op.params)),
              1e-12);
  }
}

TEST_P(DescribedOps, NoLargerThanTheWorkaroundAfterThePasses) {
  std::mt19937_64 rng(0);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (auto& [name, t] : op.inputs(DType::f32, true, rng)) shapes[name] = t.shape;
  ProgramStats now = program_stats(optimize(lower(op.build(DType::f32, false))), shapes, op.params);
  ProgramStats before =
      program_stats(optimize(lower(op.build(DType::f32, true))), shapes, op.params);
  std::cout << "| " << op.name << " | " << before.blocks << " | " << before.temporaries << " | "
            << before.temporary_bytes << " | " << now.blocks << " | " << now.temporaries << " | "
            << now.temporary_bytes << " |\n";
  EXPECT_LE(now.blocks, before.blocks);
  EXPECT_LE(now.temporaries, before.temporaries);
  EXPECT_LE(now.temporary_bytes, before.temporary_bytes);
}

INSTANTIATE_TEST_SUITE_P(Ops, DescribedOps, ::testing::Range(0, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return described_ops()[size_t(info.param)].name;
                         });

TEST(DescribedOpErrors, GroupedConvWithMismatchedChannelsFailsAtBind) {
  DescribedOp op = grouped_conv();
  Program p = lower(op.build(DType::f32, false));
  std::mt19937_64 rng(0);
  TensorMap in = op.inputs(DType::f32, false, rng);
  in["w"] = random_tensor(DType::f32, {6, 3, 3, 3}, rng, -1, 1);  // C = 4 but groups * Cg = 6
  try {
    interpret(p, in, op.params);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("equal assertion failed: x.1 = 4"), std::string::npos)
        << e.what();
  }
  in["w"] = random_tensor(DType::f32, {5, 2, 3, 3}, rng, -1, 1);  // O = 5 is not 2 groups
  EXPECT_THROW(interpret(p, in, op.params), Error);
}

TEST(DescribedOpErrors, FloatOnlyOpsOnI32AreErrorsNamingOpAndDtype) {
  Graph g;
  Node k = g.input("k", 1, DType::i32);
  for (UnaryOp op : {UnaryOp::exp, UnaryOp::log, UnaryOp::sqrt, UnaryOp::rsqrt, UnaryOp::recip,
                     UnaryOp::tanh, UnaryOp::sigmoid, UnaryOp::sin, UnaryOp::cos}) {
    try {
      g.unary(op, k);
      FAIL() << op_name(op);
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(op_name(op)), std::string::npos) << what;
      EXPECT_NE(what.find("i32"), std::string::npos) << what;
    }
  }
  EXPECT_THROW(g.reduce(ReduceOp::mean, {0}, k), Error);
  for (UnaryOp op : {UnaryOp::neg, UnaryOp::abs, UnaryOp::floor}) EXPECT_NO_THROW(g.unary(op, k));
  EXPECT_NO_THROW(g.reduce(ReduceOp::sum, {0}, k));
  EXPECT_NO_THROW(g.unary(UnaryOp::exp, g.cast(k, DType::f32)));
}

TEST(DescribedOpErrors, AGraphWithoutOutputsIsAnError) {
  Graph g;
  g.unary(UnaryOp::neg, g.input("x", 1, DType::f32));
  EXPECT_THROW(lower(g), Error);
}

TEST(DescribedOpErrors, SqueezeOfAnAxisNotOfSizeOne) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  EXPECT_THROW(g.squeeze(g.reindex(x, {"2", "dA1"}, {"0", "i1"}), {0}), Error);  // now
  EXPECT_THROW(g.squeeze(x, {2}), Error);
  g.output("y", g.squeeze(x, {0}));  // x.0 = 1 is asserted at bind
  Program p = lower(g);
  TensorMap good{{"x", Tensor(DType::f32, {1, 3})}}, bad{{"x", Tensor(DType::f32, {2, 3})}};
  EXPECT_EQ(interpret(p, good).at("y").shape, (std::vector<int64_t>{3}));
  EXPECT_THROW(interpret(p, bad), Error);
}

TEST(DescribedOpValues, IotaAndCastByHand) {
  Graph g;
  g.param("p");
  Node x = g.input("x", 2, DType::f32);
  g.output("pos", g.iota({"dA0", "dA1"}, "i0 * 10 + i1 - $p", {x}));
  g.output("size", g.iota({"1"}, "dA1", {x}, DType::f64));
  g.output("trunc", g.cast(x, DType::i32));
  g.output("back", g.cast(g.cast(x, DType::i32), DType::f32));
  Program p = lower(g);
  Tensor in(DType::f32, {2, 3});
  std::vector<double> xs = {1.5, -1.5, 2.9, -0.2, 1e10, 0};
  for (int i = 0; i < 6; ++i) in.set(i, xs[size_t(i)]);
  for (const Program& q : {p, optimize(p)}) {
    TensorMap out = interpret(q, {{"x", in}}, {{"p", 1}});
    EXPECT_EQ(out.at("pos").dtype, DType::i32);
    std::vector<double> pos, trunc, back;
    for (int i = 0; i < 6; ++i) {
      pos.push_back(out.at("pos").get(i));
      trunc.push_back(out.at("trunc").get(i));
      back.push_back(out.at("back").get(i));
    }
    EXPECT_EQ(pos, (std::vector<double>{-1, 0, 1, 9, 10, 11}));
    EXPECT_EQ(out.at("size").get(0), 3.0);
    EXPECT_EQ(trunc, (std::vector<double>{1, -1, 2, 0, 0, 0}));  // 1e10 is outside i32: 0
    EXPECT_EQ(back, trunc);
  }
}

TEST(DescribedOpValues, CastPassesTheGradientBetweenFloatTypesAndStopsAtI32) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  Node x32 = g.cast(x, DType::f32);
  g.output("y", g.cast(g.binary(BinaryOp::mul, x32, x32), DType::f64));
  g.output("z", g.cast(g.cast(x, DType::i32), DType::f64));  // truncation: no gradient
  Program grad = gradient(g, {"x"});
  Tensor in(DType::f64, {3}), dy(DType::f64, {3}), dz(DType::f64, {3});
  for (int i = 0; i < 3; ++i) {
    in.set(i, 0.25 + i);
    dy.set(i, 1.5 - i);
    dz.set(i, 7.0);
  }
  for (const Program& p : {grad, optimize(grad)}) {
    Tensor dx = interpret(p, {{"x", in}, {"dy", dy}, {"dz", dz}}).at("dx");
    for (int i = 0; i < 3; ++i) EXPECT_EQ(dx.get(i), 2 * in.get(i) * dy.get(i)) << i;
  }
}

}  // namespace
}  // namespace uops
