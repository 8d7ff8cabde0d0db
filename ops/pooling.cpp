#include <limits>

#include "ops/families.h"

namespace uops::ops {

namespace {

// [N, OH, OW, C, k, k] windows of x; positions in the padding read `fill`.
Node windows(Graph& g, Node x, const std::string& pad, double fill) {
  std::string oh = "(dA1 + 2 * " + pad + " - $k) / $stride + 1";
  std::string ow = "(dA2 + 2 * " + pad + " - $k) / $stride + 1";
  return g.reindex(
      x, {"dA0", oh, ow, "dA3", "$k", "$k"},
      {"i0", "i1 * $stride - " + pad + " + i4", "i2 * $stride - " + pad + " + i5", "i3"}, {x},
      fill);
}

OpDef maxpool2d() {
  OpDef d;
  d.name = "maxpool2d";
  d.inputs = {{"x", 4}};
  d.params = {"k", "stride", "pad"};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    for (auto& p : {"k", "stride", "pad"}) g.param(p);
    Node x = g.input("x", 4, t);
    // Padding reads -inf so it never wins.
    Node win = windows(g, x, "$pad", -std::numeric_limits<double>::infinity());
    g.output("y", g.squeeze(g.reduce(ReduceOp::max, {4, 5}, win), {4, 5}));
    return g;
  };
  d.example_shapes = {{"x", {2, 32, 32, 16}}};
  d.example_params = {{"k", 2}, {"stride", 2}, {"pad", 0}};
  d.param_ranges = {{"k", {1, 4}}, {"stride", {1, 4}}, {"pad", {0, 3}}};
  // pad < k: every window then holds at least one element of x.
  d.invalid = [](const Shapes&, const ParamMap& p) {
    std::string r = first_of({below(p, "k", 1), below(p, "stride", 1), below(p, "pad", 0)});
    if (r.empty() && p.count("k") && p.count("pad") && p.at("pad") >= p.at("k"))
      r = "pad must be below k (a window of padding alone has no maximum)";
    return r;
  };
  d.values = {Values::uniform, Values::ties};
  return d;
}

OpDef avgpool2d() {
  OpDef d;
  d.name = "avgpool2d";
  d.inputs = {{"x", 4}};
  d.params = {"k", "stride"};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    for (auto& p : {"k", "stride"}) g.param(p);
    Node x = g.input("x", 4, t);
    // No padding, so the mean of a window divides by k·k.
    Node win = windows(g, x, "0", 0.0);
    g.output("y", g.squeeze(g.reduce(ReduceOp::mean, {4, 5}, win), {4, 5}));
    return g;
  };
  d.example_shapes = {{"x", {2, 32, 32, 16}}};
  d.example_params = {{"k", 2}, {"stride", 2}};
  d.param_ranges = {{"k", {1, 4}}, {"stride", {1, 4}}};
  d.invalid = [](const Shapes&, const ParamMap& p) {
    return first_of({below(p, "k", 1), below(p, "stride", 1)});
  };
  return d;
}

}  // namespace

void add_pooling(std::vector<OpDef>& ops) {
  ops.push_back(maxpool2d());
  ops.push_back(avgpool2d());
}

}  // namespace uops::ops
