#include "ops/families.h"

namespace uops::ops {

using namespace ir;

namespace {

OpDef gather() {
  OpDef d;
  d.name = "gather";
  d.inputs = {{"table", 2}, {"idx", 1, true, false}};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    Node table = g.input("table", 2, t), idx = g.input("idx", 1, DType::i32);
    // Row idx[n] of the table for every column; out-of-range rows read zeros.
    Node rows = g.reindex(idx, {"dA0", "dB1"}, {"i0"}, {idx, table});
    g.output("y", g.select(0, table, rows));
    return g;
  };
  d.example_shapes = {{"table", {1000, 64}}, {"idx", {256}}};
  // Out of range now and then.
  d.inputs[1].values = [](const Shapes& s, const ParamMap&) {
    return std::pair<int64_t, int64_t>{-2, s.at("table")[0] + 1};
  };
  return d;
}

OpDef concat() {
  OpDef d;
  d.name = "concat";
  d.inputs = {{"x", 2}, {"y", 2}};
  d.outputs = {"z"};
  d.build = [](DType t) {
    Graph g;
    Node x = g.input("x", 2, t), y = g.input("y", 2, t);
    // Each part reads zeros where the other lies.
    std::vector<std::string> shape = {"dA0[=dB0]", "dA1 + dB1"};
    Node left = g.reindex(x, shape, {"i0", "i1"}, {x, y});
    Node right = g.reindex(y, shape, {"i0", "i1 - dA1"}, {x, y});
    g.output("z", g.binary(BinaryOp::add, left, right));
    return g;
  };
  d.example_shapes = {{"x", {256, 128}}, {"y", {256, 64}}};
  return d;
}

OpDef pad2d() {
  OpDef d;
  d.name = "pad2d";
  d.inputs = {{"x", 4}};
  d.params = {"pad"};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    g.param("pad");
    Node x = g.input("x", 4, t);
    g.output("y", g.reindex(x, {"dA0", "dA1 + 2 * $pad", "dA2 + 2 * $pad", "dA3"},
                            {"i0", "i1 - $pad", "i2 - $pad", "i3"}));
    return g;
  };
  d.example_shapes = {{"x", {2, 32, 32, 16}}};
  d.example_params = {{"pad", 2}};
  d.invalid = [](const Shapes&, const ParamMap& p) { return below(p, "pad", 0); };
  return d;
}

}  // namespace

void add_indexing(std::vector<OpDef>& ops) {
  ops.push_back(gather());
  ops.push_back(concat());
  ops.push_back(pad2d());
}

}  // namespace uops::ops
