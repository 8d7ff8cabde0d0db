#include "ops/families.h"

namespace uops::ops {

namespace {

OpDef row_op(const std::string& name, std::vector<OpInput> inputs,
             std::function<Node(Graph&, const std::vector<Node>&)> f) {
  OpDef d;
  d.name = name;
  d.inputs = inputs;
  d.outputs = {"y"};
  d.build = [inputs, f](DType t) {
    Graph g;
    std::vector<Node> in;
    for (auto& i : inputs) in.push_back(g.input(i.name, i.rank, t));
    g.output("y", f(g, in));
    return g;
  };
  d.example_shapes = {{"x", {128, 256}}};
  return d;
}

// x - max(x) over the row: the shift that keeps exp from overflowing. The result does not
// depend on the shift, so no gradient goes through it (an argmax per row and a select, adding
// what is zero but for rounding).
Node shifted(Graph& g, Node x) {
  Node mx = g.stop_gradient(g.reduce(ReduceOp::max, {1}, x));
  return g.binary(BinaryOp::sub, x, broadcast_rows(g, mx, x));
}

Node softmax(Graph& g, const std::vector<Node>& in) {
  Node e = g.unary(UnaryOp::exp, shifted(g, in[0]));
  return g.binary(BinaryOp::div, e, broadcast_rows(g, g.reduce(ReduceOp::sum, {1}, e), e));
}

Node log_softmax(Graph& g, const std::vector<Node>& in) {
  Node s = shifted(g, in[0]);
  Node lse = g.unary(UnaryOp::log, g.reduce(ReduceOp::sum, {1}, g.unary(UnaryOp::exp, s)));
  return g.binary(BinaryOp::sub, s, broadcast_rows(g, lse, s));
}

// (x - mean) / sqrt(biased variance + 1e-5) · gamma + beta, over the last axis.
Node layernorm(Graph& g, const std::vector<Node>& in) {
  Node x = in[0];
  Node xc = g.binary(BinaryOp::sub, x, broadcast_rows(g, g.reduce(ReduceOp::mean, {1}, x), x));
  Node var = g.reduce(ReduceOp::mean, {1}, g.binary(BinaryOp::mul, xc, xc));
  Node rstd = g.unary(UnaryOp::rsqrt, g.binary(BinaryOp::add, var, g.fill(var, 1e-5)));
  auto row = [&](Node v) { return g.reindex(v, {"dA0", "dA1[=dB0]"}, {"i1"}, {x, v}); };
  Node y = g.binary(BinaryOp::mul, xc, broadcast_rows(g, rstd, x));
  return g.binary(BinaryOp::add, g.binary(BinaryOp::mul, y, row(in[1])), row(in[2]));
}

}  // namespace

void add_normalization(std::vector<OpDef>& ops) {
  ops.push_back(row_op("softmax", {{"x", 2}}, softmax));
  ops.back().values = {Values::uniform, Values::large};
  ops.push_back(row_op("log_softmax", {{"x", 2}}, log_softmax));
  ops.back().values = {Values::uniform, Values::large};
  OpDef ln = row_op("layernorm", {{"x", 2}, {"gamma", 1}, {"beta", 1}}, layernorm);
  ln.example_shapes = {{"x", {128, 256}}, {"gamma", {256}}, {"beta", {256}}};
  ops.push_back(ln);
}

}  // namespace uops::ops
