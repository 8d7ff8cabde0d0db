// User ops whose wrong kernels only meet rare cases (issue 25): an even-only axis with a 16-lane
// tail, a softmax left at the default values, an index input with no declared range. Each comes
// with a right kernel and a wrong one; the oracle's tests and its escape-rate measure share them.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "uops/oracle/harness.h"

namespace uops::testing {

inline const OpDef& registered(const OpDef& op) {
  for (const OpDef& o : all_ops())
    if (o.name == op.name) return o;
  return register_op(op);
}

// Rotary embedding: x [S, D] (D even) as D / 2 pairs, pair p of row s rotated by pos[s] * (p + 1)
// radians. Large positions: sin and cos of arguments up to ~10^6.
inline OpDef rotary_op() {
  OpDef d;
  d.name = "reach_rotary";
  d.inputs = {{"x", 2}, {"pos", 1}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), pos = g.input("pos", 1, t);
    Node p = g.reindex(pos, {"dB0[=dA0]", "dB1"}, {"i0"}, {pos, x});
    Node angle = g.binary(BinaryOp::mul, p, g.iota({"dA0", "dA1"}, "i1 / 2 + 1", {x}, t));
    Node sign = g.iota({"dA0", "dA1"}, "2 * (i1 % 2) - 1", {x}, t);
    Node partner = g.reindex(x, {"dA0", "dA1"}, {"i0", "i1 + 1 - 2 * (i1 % 2)"});
    Node rotated = g.binary(BinaryOp::mul, g.binary(BinaryOp::mul, sign, partner),
                            g.unary(UnaryOp::sin, angle));
    g.output("y", g.binary(BinaryOp::add, g.binary(BinaryOp::mul, x, g.unary(UnaryOp::cos, angle)),
                           rotated));
    return g;
  };
  d.invalid = [](const Shapes& s, const ParamMap&) {
    return s.at("x")[1] % 2 ? std::string("D must be even") : std::string();
  };
  d.values = {Values::uniform, Values::large};
  return d;
}

// `tail`: pairs past the last full block of 16 lanes are copied through unrotated.
inline oracle::Implementation rotary_kernel(bool tail) {
  return [tail](const TensorMap& in, const ParamMap&) {
    const Tensor &x = in.at("x"), &pos = in.at("pos");
    int64_t s = x.shape[0], d = x.shape[1], body = tail && d > 16 ? d / 16 * 16 : d;
    Tensor y(x.dtype, x.shape);
    for (int64_t i = 0; i < s; ++i)
      for (int64_t j = 0; j < d; j += 2) {
        double a = x.get(i * d + j), b = x.get(i * d + j + 1);
        if (j >= body) {
          y.set(i * d + j, a);
          y.set(i * d + j + 1, b);
          continue;
        }
        // In the kernel's own dtype, as a real kernel computes.
        double angle = x.dtype == DType::f32 ? double(float(pos.get(i)) * float(j / 2 + 1))
                                             : pos.get(i) * double(j / 2 + 1);
        double c = std::cos(angle), sn = std::sin(angle);
        y.set(i * d + j, a * c - b * sn);
        y.set(i * d + j + 1, b * c + a * sn);
      }
    return TensorMap{{"y", y}};
  };
}

// Softmax over rows, described with the max shift; its values are left at the default.
inline OpDef softmax_op() {
  OpDef d;
  d.name = "reach_softmax";
  d.inputs = {{"x", 2}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t);
    auto rows = [&](Node col, Node like) {
      return g.reindex(col, {"dA0", "dA1"}, {"i0", "0"}, {like});
    };
    Node e =
        g.unary(UnaryOp::exp, g.binary(BinaryOp::sub, x, rows(g.reduce(ReduceOp::max, {1}, x), x)));
    g.output("y", g.binary(BinaryOp::div, e, rows(g.reduce(ReduceOp::sum, {1}, e), e)));
    return g;
  };
  return d;
}

// `shift` false: no max subtraction, so exp overflows on large inputs.
inline oracle::Implementation softmax_kernel(bool shift) {
  return [shift](const TensorMap& in, const ParamMap&) {
    const Tensor& x = in.at("x");
    int64_t m = x.shape[0], n = x.shape[1];
    Tensor y(x.dtype, x.shape);
    for (int64_t i = 0; i < m; ++i) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x.get(i * n + j));
      if (!shift) mx = 0;
      for (int64_t j = 0; j < n; ++j) sum += std::exp(x.get(i * n + j) - mx);
      for (int64_t j = 0; j < n; ++j) y.set(i * n + j, std::exp(x.get(i * n + j) - mx) / sum);
    }
    return TensorMap{{"y", y}};
  };
}

// Embedding lookup: row idx[i] of table [V, D]; no declared range for idx.
inline OpDef embedding_op() {
  OpDef d;
  d.name = "reach_embedding";
  d.inputs = {{"table", 2}, {"idx", 1, true, false}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node table = g.input("table", 2, t), idx = g.input("idx", 1, DType::i32);
    g.output("y", g.select(0, table, g.reindex(idx, {"dA0", "dB1"}, {"i0"}, {idx, table})));
    return g;
  };
  return d;
}

// `clamped`: indices are clamped to V - 2, one short of the last row.
inline oracle::Implementation embedding_kernel(bool clamped) {
  return [clamped](const TensorMap& in, const ParamMap&) {
    const Tensor &table = in.at("table"), &idx = in.at("idx");
    int64_t v = table.shape[0], d = table.shape[1];
    Tensor y(table.dtype, {idx.numel(), d});
    for (int64_t i = 0; i < idx.numel(); ++i) {
      int64_t row = int64_t(idx.get(i));
      if (clamped) row = std::clamp<int64_t>(row, 0, std::max<int64_t>(v - 2, 0));
      for (int64_t j = 0; j < d; ++j)
        y.set(i * d + j, row >= 0 && row < v ? table.get(row * d + j) : 0.0);
    }
    return TensorMap{{"y", y}};
  };
}

struct ReachKernel {
  std::string name;
  OpDef (*describe)();
  oracle::Implementation (*make)(bool wrong);
};

inline const std::vector<ReachKernel>& reach_kernels() {
  static const std::vector<ReachKernel> k = {
      {"rotary_even_axis_tail", rotary_op, [](bool w) { return rotary_kernel(w); }},
      {"user_softmax_without_max_shift", softmax_op, [](bool w) { return softmax_kernel(!w); }},
      {"embedding_clamped_at_bound", embedding_op, [](bool w) { return embedding_kernel(w); }},
  };
  return k;
}

}  // namespace uops::testing
