// Two ops a user describes and registers (RMSNorm and single-head attention), with a right and a
// wrong hand-written kernel for each: what the user-op tests of the oracle and of uopc share.
#pragma once

#include <cmath>

#include "uops/oracle/harness.h"

namespace uops::testing {

inline Node rows_of(Graph& g, Node col, Node like) {
  return g.reindex(col, {"dA0", "dA1"}, {"i0", "0"}, {like});
}

// y = x · rsqrt(mean(x²) + 1e-6) · w over the last axis.
inline OpDef rmsnorm_op() {
  OpDef d;
  d.name = "user_rmsnorm";
  d.inputs = {{"x", 2}, {"w", 1}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), w = g.input("w", 1, t);
    Node ms = g.reduce(ReduceOp::mean, {1}, g.binary(BinaryOp::mul, x, x));
    Node r = g.unary(UnaryOp::rsqrt, g.binary(BinaryOp::add, ms, g.fill(ms, 1e-6)));
    Node ww = g.reindex(w, {"dA0", "dA1[=dB0]"}, {"i1"}, {x, w});
    g.output("y", g.binary(BinaryOp::mul, g.binary(BinaryOp::mul, x, rows_of(g, r, x)), ww));
    return g;
  };
  return d;
}

// y = softmax(q kᵀ) v, rows of q against rows of k.
inline OpDef attention_op() {
  OpDef d;
  d.name = "user_attention";
  d.inputs = {{"q", 2}, {"k", 2}, {"v", 2}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node q = g.input("q", 2, t), k = g.input("k", 2, t), v = g.input("v", 2, t);
    std::vector<std::string> lsd = {"dA0", "dB0", "dA1[=dB1]"};
    Node qk = g.binary(BinaryOp::mul, g.reindex(q, lsd, {"i0", "i2"}, {q, k}),
                       g.reindex(k, lsd, {"i1", "i2"}, {q, k}));
    Node s = g.reindex(g.reduce(ReduceOp::sum, {2}, qk), {"dA0", "dA1"}, {"i0", "i1", "0"});
    Node e = g.unary(UnaryOp::exp,
                     g.binary(BinaryOp::sub, s, rows_of(g, g.reduce(ReduceOp::max, {1}, s), s)));
    Node p = g.binary(BinaryOp::div, e, rows_of(g, g.reduce(ReduceOp::sum, {1}, e), e));
    std::vector<std::string> les = {"dA0", "dB1", "dA1[=dB0]"};
    Node pv = g.binary(BinaryOp::mul, g.reindex(p, les, {"i0", "i2"}, {p, v}),
                       g.reindex(v, les, {"i2", "i1"}, {p, v}));
    g.output("y", g.reindex(g.reduce(ReduceOp::sum, {2}, pv), {"dA0", "dA1"}, {"i0", "i1", "0"}));
    return g;
  };
  return d;
}

inline double at2(const Tensor& t, int64_t i, int64_t j) {
  return t.get(i * t.shape[1] + j);
}

// `tail` > 0: the sum of squares runs in blocks of `tail` and drops the columns past the last
// full block (a vector-width tail bug).
inline oracle::Implementation rmsnorm_kernel(int64_t tail = 0) {
  return [tail](const TensorMap& in, const ParamMap&) {
    const Tensor &x = in.at("x"), &w = in.at("w");
    int64_t m = x.shape[0], n = x.shape[1];
    int64_t summed = tail && n > tail ? n / tail * tail : n;
    Tensor y(x.dtype, {m, n});
    for (int64_t i = 0; i < m; ++i) {
      double ss = 0;
      for (int64_t j = 0; j < summed; ++j) ss += at2(x, i, j) * at2(x, i, j);
      double r = 1 / std::sqrt(ss / double(n) + 1e-6);
      for (int64_t j = 0; j < n; ++j) y.set(i * n + j, at2(x, i, j) * r * w.get(j));
    }
    return TensorMap{{"y", y}};
  };
}

// `tail` > 0: keys past the first `tail` are ignored when there are more (a tiling bug).
inline oracle::Implementation attention_kernel(int64_t tail = 0) {
  return [tail](const TensorMap& in, const ParamMap&) {
    const Tensor &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
    int64_t l = q.shape[0], dd = q.shape[1], s = k.shape[0], e = v.shape[1];
    int64_t keys = tail && s > tail ? tail : s;
    Tensor y(q.dtype, {l, e});
    for (int64_t i = 0; i < l; ++i) {
      std::vector<double> score(size_t(keys), 0.0);
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        for (int64_t c = 0; c < dd; ++c) score[j] += at2(q, i, c) * at2(k, j, c);
        mx = std::max(mx, score[j]);
      }
      for (double& sc : score) sum += (sc = std::exp(sc - mx));
      for (int64_t c = 0; c < e; ++c) {
        double acc = 0;
        for (int64_t j = 0; j < keys; ++j) acc += score[j] / sum * at2(v, j, c);
        y.set(i * e + c, acc);
      }
    }
    return TensorMap{{"y", y}};
  };
}

}  // namespace uops::testing
