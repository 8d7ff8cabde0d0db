#include "uops/autodiff/forward_mode.h"

#include <algorithm>

#include "rules.h"
#include "uops/error.h"

namespace uops {

using namespace ir;

namespace {

using autodiff::GradContext;

// The tangent of node n, given its operands' tangents (-1: zero), or -1 when it has none.
Node tangent(GradContext& c, int n, const std::vector<Node>& t) {
  const UopNode& y = c.node(n);
  Graph& g = c.graph();
  auto of = [&](int slot) { return t[y.operands[slot]]; };
  auto zero = [&](Node like) { return c.constant(like, 0); };
  if (!is_float(y.dtype) || y.stop_gradient) return Node{-1};
  bool any = false;
  for (int o : y.operands) any |= t[o].id >= 0;
  if (!any) return Node{-1};
  switch (y.kind) {
    case UopKind::reindex:
      return g.reindex_expr(of(0), y.shape, y.index, 0.0);
    case UopKind::scatter:
      return y.operands.size() == 2 ? g.scatter_expr(y.axis, of(0), Node{y.operands[1]}, y.shape)
                                    : g.scatter_expr(of(0), y.shape, y.index);
    case UopKind::select:
      return of(0).id < 0 ? Node{-1} : g.select(y.axis, of(0), Node{y.operands[1]});
    case UopKind::cast:
      return g.cast(of(0), y.dtype);
    case UopKind::unary:
      if (y.uop == UnaryOp::floor) return Node{-1};
      return autodiff::unary_derivative(c, y.uop, Node{y.operands[0]}, Node{n}, of(0));
    case UopKind::binary: {
      if (is_comparison(y.bop)) return Node{-1};
      Node sum{-1};
      for (int slot : {0, 1}) {
        if (of(slot).id < 0) continue;
        Node part = autodiff::binary_partial(c, n, slot, of(slot));
        sum = sum.id < 0 ? part : c.binary(BinaryOp::add, sum, part);
      }
      return sum;
    }
    case UopKind::ternary: {
      Node a = of(1), b = of(2);
      if (a.id < 0 && b.id < 0) return Node{-1};
      return c.pick(Node{y.operands[0]}, a.id < 0 ? zero(b) : a, b.id < 0 ? zero(a) : b);
    }
    case UopKind::reduce:
      if (is_arg_reduce(y.rop)) return Node{-1};
      return g.reduce(ReduceOp::sum, y.axes, autodiff::reduce_partial(c, n, of(0)));
    case UopKind::input:
    case UopKind::iota:
      break;
  }
  return Node{-1};
}

}  // namespace

Graph jvp(const Graph& g, const std::vector<std::string>& wrt, const std::string& prefix) {
  const auto& nodes = g.nodes();
  Graph out = g.without_outputs();
  GradContext c(g, out, std::vector<bool>(nodes.size(), false));
  std::vector<Node> t(nodes.size(), Node{-1});
  auto taken = [&](const std::string& name) {
    for (auto& n : nodes)
      if (n.kind == UopKind::input && n.name == name) return true;
    for (auto& [o, id] : g.outputs())
      if (o == name) return true;
    return false;
  };
  for (auto& name : wrt) {
    auto it = std::find_if(nodes.begin(), nodes.end(), [&](const UopNode& n) {
      return n.kind == UopKind::input && n.name == name;
    });
    if (it == nodes.end()) throw Error("jvp: '" + name + "' is not an input of the graph");
    int n = int(it - nodes.begin());
    if (!is_float(it->dtype))
      throw Error("jvp: input '" + name + "' is " + dtype_name(it->dtype) + " and has no tangent");
    if (t[n].id >= 0) throw Error("jvp: '" + name + "' is given twice");
    if (taken(prefix + name))
      throw Error("jvp: the tangent of '" + name + "' would be named '" + prefix + name +
                  "', which is already a tensor of the graph");
    t[n] = out.input_shaped(prefix + name, it->shape, it->dtype);
  }
  for (int n = 0; n < int(nodes.size()); ++n)
    if (nodes[n].kind != UopKind::input) t[n] = tangent(c, n, t);
  for (auto& [name, n] : g.outputs()) {
    if (!is_float(nodes[n].dtype)) continue;
    if (taken(prefix + name))
      throw Error("jvp: the tangent of output '" + name + "' would be named '" + prefix + name +
                  "', which is already a tensor of the graph");
    // An output no tangent reaches moves by zero, which reads nothing (an iota).
    Node d = t[n].id >= 0 ? t[n] : out.iota_expr(nodes[n].shape, idx::constant(0), nodes[n].dtype);
    out.output(prefix + name, d);
  }
  if (out.outputs().empty()) throw Error("jvp: the graph has no float output");
  return out;
}

Graph hvp(const Graph& g, const std::vector<std::string>& wrt) {
  Graph first = gradient_graph(g, wrt, "d");
  return jvp(first, wrt, "t");
}

}  // namespace uops
