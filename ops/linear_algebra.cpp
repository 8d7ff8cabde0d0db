#include "ops/families.h"

namespace uops::ops {

namespace {

OpDef matmul() {
  OpDef d;
  d.name = "matmul";
  d.inputs = {{"a", 2}, {"b", 2}};
  d.outputs = {"c"};
  d.build = [](DType t) {
    Graph g;
    Node a = g.input("a", 2, t), b = g.input("b", 2, t);
    // [M, N, K] products, summed over K.
    std::vector<std::string> mnk = {"dA0", "dB1", "dA1[=dB0]"};
    Node ab = g.binary(BinaryOp::mul, g.reindex(a, mnk, {"i0", "i2"}, {a, b}),
                       g.reindex(b, mnk, {"i2", "i1"}, {a, b}));
    g.output("c", g.squeeze(g.reduce(ReduceOp::sum, {2}, ab), {2}));
    return g;
  };
  d.example_shapes = {{"a", {64, 64}}, {"b", {64, 64}}};
  return d;
}

OpDef batched_matmul() {
  OpDef d;
  d.name = "batched_matmul";
  d.inputs = {{"a", 3}, {"b", 3}};
  d.outputs = {"c"};
  d.build = [](DType t) {
    Graph g;
    Node a = g.input("a", 3, t), b = g.input("b", 3, t);
    std::vector<std::string> bmnk = {"dA0[=dB0]", "dA1", "dB2", "dA2[=dB1]"};
    Node ab = g.binary(BinaryOp::mul, g.reindex(a, bmnk, {"i0", "i1", "i3"}, {a, b}),
                       g.reindex(b, bmnk, {"i0", "i3", "i2"}, {a, b}));
    g.output("c", g.squeeze(g.reduce(ReduceOp::sum, {3}, ab), {3}));
    return g;
  };
  d.example_shapes = {{"a", {8, 32, 32}}, {"b", {8, 32, 32}}};
  return d;
}

OpDef linear() {
  OpDef d;
  d.name = "linear";
  d.inputs = {{"x", 2}, {"w", 2}, {"b", 1}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), w = g.input("w", 2, t), b = g.input("b", 1, t);
    std::vector<std::string> mnk = {"dA0", "dB0", "dA1[=dB1]"};
    Node xw = g.binary(BinaryOp::mul, g.reindex(x, mnk, {"i0", "i2"}, {x, w}),
                       g.reindex(w, mnk, {"i1", "i2"}, {x, w}));
    Node bias = g.reindex(b, {"dA0", "dB0[=dC0]"}, {"i1"}, {x, w, b});
    g.output("y", g.binary(BinaryOp::add, g.squeeze(g.reduce(ReduceOp::sum, {2}, xw), {2}), bias));
    return g;
  };
  d.example_shapes = {{"x", {64, 128}}, {"w", {32, 128}}, {"b", {32}}};
  return d;
}

OpDef transpose() {
  OpDef d;
  d.name = "transpose";
  d.inputs = {{"x", 2}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t);
    g.output("y", g.reindex(x, {"dA1", "dA0"}, {"i1", "i0"}));
    return g;
  };
  d.example_shapes = {{"x", {256, 128}}};
  return d;
}

}  // namespace

void add_linear_algebra(std::vector<OpDef>& ops) {
  ops.push_back(matmul());
  ops.push_back(batched_matmul());
  ops.push_back(linear());
  ops.push_back(transpose());
}

}  // namespace uops::ops
