#include "ops/families.h"

namespace uops::ops {

namespace {

OpDef cross_entropy() {
  OpDef d;
  d.name = "cross_entropy";
  d.inputs = {{"logits", 2}, {"labels", 1, true, false}};
  d.outputs = {"loss"};
  d.build = [](DType t) {
    Graph g;
    Node logits = g.input("logits", 2, t), labels = g.input("labels", 1, DType::i32);
    // logsumexp shifted by the row max, then minus the labelled logit, averaged over rows. The
    // shift cancels out, so no gradient goes through it.
    Node mx = g.stop_gradient(g.reduce(ReduceOp::max, {1}, logits));
    Node s = g.binary(BinaryOp::sub, logits, broadcast_rows(g, mx, logits));
    Node lse =
        g.binary(BinaryOp::add, mx,
                 g.unary(UnaryOp::log, g.reduce(ReduceOp::sum, {1}, g.unary(UnaryOp::exp, s))));
    Node col = g.reindex(labels, {"dA0[=dB0]", "1"}, {"i0"}, {logits, labels});
    Node per_row = g.binary(BinaryOp::sub, lse, g.select(1, logits, col));
    g.output("loss", g.reindex(g.reduce(ReduceOp::mean, {0}, per_row), {"1"}, {"0", "0"}));
    return g;
  };
  d.example_shapes = {{"logits", {256, 1000}}, {"labels", {256}}};
  d.inputs[1].values = [](const Shapes& s, const ParamMap&) {
    return std::pair<int64_t, int64_t>{0, s.at("logits")[1] - 1};
  };
  d.values = {Values::uniform, Values::large};
  return d;
}

}  // namespace

void add_losses(std::vector<OpDef>& ops) {
  ops.push_back(cross_entropy());
}

}  // namespace uops::ops
