#include <cmath>

#include "ops/families.h"

namespace uops::ops {

namespace {

OpDef binary_op(const std::string& name, BinaryOp op) {
  OpDef d;
  d.name = name;
  d.inputs = {{"x", 2}, {"y", 2}};
  d.outputs = {"z"};
  d.build = [op](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), y = g.input("y", 2, t);
    g.output("z", g.binary(op, x, y));
    return g;
  };
  d.example_shapes = {{"x", {256, 256}}, {"y", {256, 256}}};
  return d;
}

OpDef unary_op(const std::string& name, std::function<Node(Graph&, Node)> f) {
  OpDef d;
  d.name = name;
  d.inputs = {{"x", 2}};
  d.outputs = {"y"};
  d.build = [f](DType t) {
    Graph g;
    Node x = g.input("x", 2, t);
    g.output("y", f(g, x));
    return g;
  };
  d.example_shapes = {{"x", {256, 256}}};
  return d;
}

Node unary(Graph& g, UnaryOp op, Node x) {
  return g.unary(op, x);
}

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
Node gelu(Graph& g, Node x) {
  auto c = [&](double v) { return g.fill(x, v); };
  auto mul = [&](Node a, Node b) { return g.binary(BinaryOp::mul, a, b); };
  Node cube = mul(mul(x, x), x);
  Node inner = mul(c(std::sqrt(2.0 / M_PI)), g.binary(BinaryOp::add, x, mul(c(0.044715), cube)));
  Node one_plus = g.binary(BinaryOp::add, c(1.0), g.unary(UnaryOp::tanh, inner));
  return mul(mul(c(0.5), x), one_plus);
}

}  // namespace

void add_elementwise(std::vector<OpDef>& ops) {
  ops.push_back(binary_op("add", BinaryOp::add));
  ops.push_back(binary_op("sub", BinaryOp::sub));
  ops.push_back(binary_op("mul", BinaryOp::mul));
  OpDef div = binary_op("div", BinaryOp::div);
  div.inputs[1].nonzero = true;
  ops.push_back(div);
  for (auto [name, op] : {std::pair{"max", BinaryOp::max}, std::pair{"min", BinaryOp::min}}) {
    ops.push_back(binary_op(name, op));
    ops.back().values = {Values::uniform, Values::ties};
  }
  ops.push_back(unary_op(
      "relu", [](Graph& g, Node x) { return g.binary(BinaryOp::max, x, g.fill(x, 0.0)); }));
  ops.back().values = {Values::uniform, Values::ties};
  ops.push_back(
      unary_op("sigmoid", [](Graph& g, Node x) { return unary(g, UnaryOp::sigmoid, x); }));
  ops.push_back(unary_op("tanh", [](Graph& g, Node x) { return unary(g, UnaryOp::tanh, x); }));
  ops.push_back(unary_op("exp", [](Graph& g, Node x) { return unary(g, UnaryOp::exp, x); }));
  ops.push_back(unary_op("log", [](Graph& g, Node x) { return unary(g, UnaryOp::log, x); }));
  ops.back().values = {Values::positive};
  ops.push_back(unary_op("gelu", gelu));
}

}  // namespace uops::ops
