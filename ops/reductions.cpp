#include "ops/families.h"

namespace uops::ops {

namespace {

// x [M, N] reduced over axis 1 to y [M, 1].
OpDef row_reduce(const std::string& name, ReduceOp op) {
  OpDef d;
  d.name = name;
  d.inputs = {{"x", 2}};
  d.outputs = {"y"};
  d.build = [op](DType t) {
    Graph g;
    g.output("y", g.reduce(op, {1}, g.input("x", 2, t)));
    return g;
  };
  d.example_shapes = {{"x", {256, 256}}};
  return d;
}

}  // namespace

void add_reductions(std::vector<OpDef>& ops) {
  ops.push_back(row_reduce("sum", ReduceOp::sum));
  ops.push_back(row_reduce("mean", ReduceOp::mean));
  ops.push_back(row_reduce("max_reduce", ReduceOp::max));
  ops.back().values = {Values::uniform, Values::ties};
  ops.push_back(row_reduce("argmax", ReduceOp::argmax));
  ops.back().values = {Values::uniform, Values::ties};
}

}  // namespace uops::ops
