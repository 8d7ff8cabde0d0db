// Ops written with uops the way a user would, shared by the example and golden-text suites.
#pragma once

#include <string>
#include <vector>

#include "uops/ir/graph.h"

namespace uops::testing {

// c[m, n] = sum_k a[m, k] * b[k, n]
inline void build_matmul(Graph& g, DType dt = DType::f32) {
  Node a = g.input("a", 2, dt), b = g.input("b", 2, dt);
  Node ar = g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b});
  Node br = g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b});
  Node prod = g.binary(BinaryOp::mul, ar, br);
  Node sum = g.reduce(ReduceOp::sum, {2}, prod);
  g.output("c", g.reindex(sum, {"dA0", "dA1"}, {"i0", "i1", "0"}));
}

// s[b, i, j] = sum_d q[b, i, d] * k[b, j, d]: attention's scores, a batched q k^T, for q [B, M, D]
// and k [B, N, D].
inline Node attention_scores(Graph& g, Node q, Node k) {
  const std::vector<std::string> bijd = {"dA0[=dB0]", "dA1", "dB1", "dA2[=dB2]"};
  Node qk = g.binary(BinaryOp::mul, g.reindex(q, bijd, {"i0", "i1", "i3"}, {q, k}),
                     g.reindex(k, bijd, {"i0", "i2", "i3"}, {q, k}));
  return g.squeeze(g.reduce(ReduceOp::sum, {3}, qk), {3});
}

// o = softmax(q k^T / 8) v over a batch, for q [B, M, D], k and v [B, N, D].
inline void build_attention(Graph& g, DType dt = DType::f32) {
  Node q = g.input("q", 3, dt), k = g.input("k", 3, dt), v = g.input("v", 3, dt);
  Node s = attention_scores(g, q, k);
  s = g.binary(BinaryOp::mul, s, g.fill(s, 0.125));
  auto rows = [&](Node col) {
    return g.reindex(col, {"dA0", "dA1", "dA2"}, {"i0", "i1", "0"}, {s});
  };
  Node e = g.unary(UnaryOp::exp, g.binary(BinaryOp::sub, s, rows(g.reduce(ReduceOp::max, {2}, s))));
  Node p = g.binary(BinaryOp::div, e, rows(g.reduce(ReduceOp::sum, {2}, e)));
  const std::vector<std::string> bidj = {"dA0[=dB0]", "dA1", "dB2", "dA2[=dB1]"};
  Node pv = g.binary(BinaryOp::mul, g.reindex(p, bidj, {"i0", "i1", "i3"}, {p, v}),
                     g.reindex(v, bidj, {"i0", "i3", "i2"}, {p, v}));
  g.output("o", g.squeeze(g.reduce(ReduceOp::sum, {3}, pv), {3}));
}

// Attention-shaped graphs as users write them, drawn with `pick(n)` (a number below n): the
// scores of q [B, M, D] and k [B, N, D], an epilogue on them (a scale, a bias [N] over the
// columns, a causal mask, or none), a reduction of the rows (max, min, sum or mean), and what
// reads both (exp(s - r), s * r or s - r), as output "out"; f32 or f64.
template <class Pick>
Graph random_attention_scores(Pick&& pick) {
  DType dt = pick(2) ? DType::f32 : DType::f64;
  Graph g;
  Node q = g.input("q", 3, dt), k = g.input("k", 3, dt), bias = g.input("bias", 1, dt);
  Node s = attention_scores(g, q, k);
  switch (pick(4)) {
    case 0:
      s = g.binary(BinaryOp::mul, s, g.fill(s, 0.125));
      break;
    case 1:
      s = g.binary(BinaryOp::add, s, g.reindex(bias, {"dA0", "dA1", "dA2"}, {"i2"}, {s}));
      break;
    case 2: {
      Node causal = g.binary(BinaryOp::le, g.iota({"dA0", "dA1", "dA2"}, "i2", {s}),
                             g.iota({"dA0", "dA1", "dA2"}, "i1", {s}));
      s = g.ternary(causal, s, g.fill(s, -1e30));
      break;
    }
    default:
      break;
  }
  const ReduceOp ops[] = {ReduceOp::max, ReduceOp::min, ReduceOp::sum, ReduceOp::mean};
  Node r = g.reindex(g.reduce(ops[pick(4)], {2}, s), {"dA0", "dA1", "dA2"}, {"i0", "i1", "0"}, {s});
  const BinaryOp joins[] = {BinaryOp::sub, BinaryOp::mul, BinaryOp::sub};
  int join = pick(3);
  Node out = g.binary(joins[join], s, r);
  if (join == 0) out = g.unary(UnaryOp::exp, out);
  g.output("out", out);
  return g;
}

// y[n, oh, ow, o] = sum_{kh, kw, c} x[n, oh + kh - pad, ow + kw - pad, c] * w[o, kh, kw, c]
// (stride 1, zero padding read as the reindex fill), for x [N, H, W, C] and w [O, KH, KW, C].
inline void build_conv2d(Graph& g, DType dt = DType::f32) {
  g.param("pad");
  Node x = g.input("x", 4, dt), w = g.input("w", 4, dt);
  const std::vector<std::string> shape = {
      "dA0",      "dA1 + 2 * $pad - dB1 + 1", "dA2 + 2 * $pad - dB2 + 1", "dB0", "dB1", "dB2",
      "dA3[=dB3]"};
  Node xr = g.reindex(x, shape, {"i0", "i1 + i4 - $pad", "i2 + i5 - $pad", "i6"}, {x, w});
  Node wr = g.reindex(w, shape, {"i3", "i4", "i5", "i6"}, {x, w});
  Node sum = g.reduce(ReduceOp::sum, {4, 5, 6}, g.binary(BinaryOp::mul, xr, wr));
  g.output("y",
           g.reindex(sum, {"dA0", "dA1", "dA2", "dA3"}, {"i0", "i1", "i2", "i3", "0", "0", "0"}));
}

// y = exp(x - max(x)) / sum(exp(x - max(x))) along the last axis of x [M, N].
inline void build_softmax(Graph& g, DType dt = DType::f32) {
  Node x = g.input("x", 2, dt);
  Node m = g.reduce(ReduceOp::max, {1}, x);
  Node shifted = g.binary(BinaryOp::sub, x, g.reindex(m, {"dA0", "dB1"}, {"i0", "0"}, {m, x}));
  Node e = g.unary(UnaryOp::exp, shifted);
  Node s = g.reduce(ReduceOp::sum, {1}, e);
  g.output("y", g.binary(BinaryOp::div, e, g.reindex(s, {"dA0", "dB1"}, {"i0", "0"}, {s, x})));
}

}  // namespace uops::testing
