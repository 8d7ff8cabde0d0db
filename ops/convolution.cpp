#include "ops/families.h"

namespace uops::ops {

namespace {

OpDef conv2d() {
  OpDef d;
  d.name = "conv2d";
  d.inputs = {{"x", 4}, {"w", 4}};
  d.params = {"stride", "pad", "dilation"};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    for (auto& p : {"stride", "pad", "dilation"}) g.param(p);
    Node x = g.input("x", 4, t), w = g.input("w", 4, t);
    // [N, OH, OW, O, KH, KW, C] products, summed over the window and the channels.
    std::vector<std::string> shape = {"dA0",
                                      "(dA1 + 2 * $pad - $dilation * (dB1 - 1) - 1) / $stride + 1",
                                      "(dA2 + 2 * $pad - $dilation * (dB2 - 1) - 1) / $stride + 1",
                                      "dB0",
                                      "dB1",
                                      "dB2",
                                      "dA3[=dB3]"};
    Node xs = g.reindex(x, shape,
                        {"i0", "i1 * $stride - $pad + i4 * $dilation",
                         "i2 * $stride - $pad + i5 * $dilation", "i6"},
                        {x, w});
    Node ws = g.reindex(w, shape, {"i3", "i4", "i5", "i6"}, {x, w});
    Node sum = g.reduce(ReduceOp::sum, {4, 5, 6}, g.binary(BinaryOp::mul, xs, ws));
    g.output("y", g.squeeze(sum, {4, 5, 6}));
    return g;
  };
  d.example_shapes = {{"x", {2, 16, 16, 8}}, {"w", {16, 3, 3, 8}}};
  d.example_params = {{"stride", 1}, {"pad", 1}, {"dilation", 1}};
  d.param_ranges = {{"stride", {1, 3}}, {"pad", {0, 4}}, {"dilation", {1, 3}}};
  d.invalid = [](const Shapes&, const ParamMap& p) {
    return first_of({below(p, "stride", 1), below(p, "dilation", 1), below(p, "pad", 0)});
  };
  return d;
}

OpDef depthwise_conv2d() {
  OpDef d;
  d.name = "depthwise_conv2d";
  d.inputs = {{"x", 4}, {"w", 3}};
  d.params = {"stride", "pad"};
  d.outputs = {"y"};
  d.build = [](DType t) {
    Graph g;
    for (auto& p : {"stride", "pad"}) g.param(p);
    Node x = g.input("x", 4, t), w = g.input("w", 3, t);
    // [N, OH, OW, C, KH, KW] products, summed over the window.
    std::vector<std::string> shape = {"dA0",
                                      "(dA1 + 2 * $pad - dB0) / $stride + 1",
                                      "(dA2 + 2 * $pad - dB1) / $stride + 1",
                                      "dA3[=dB2]",
                                      "dB0",
                                      "dB1"};
    Node xs = g.reindex(
        x, shape, {"i0", "i1 * $stride - $pad + i4", "i2 * $stride - $pad + i5", "i3"}, {x, w});
    Node ws = g.reindex(w, shape, {"i4", "i5", "i3"}, {x, w});
    Node sum = g.reduce(ReduceOp::sum, {4, 5}, g.binary(BinaryOp::mul, xs, ws));
    g.output("y", g.squeeze(sum, {4, 5}));
    return g;
  };
  d.example_shapes = {{"x", {2, 32, 32, 16}}, {"w", {3, 3, 16}}};
  d.example_params = {{"stride", 1}, {"pad", 1}};
  d.param_ranges = {{"stride", {1, 3}}, {"pad", {0, 4}}};
  d.invalid = [](const Shapes&, const ParamMap& p) {
    return first_of({below(p, "stride", 1), below(p, "pad", 0)});
  };
  return d;
}

}  // namespace

void add_convolution(std::vector<OpDef>& ops) {
  ops.push_back(conv2d());
  ops.push_back(depthwise_conv2d());
}

}  // namespace uops::ops
