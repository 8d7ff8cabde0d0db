// What every gradient rule works on: the forward graph, the gradient graph being built (the
// forward nodes at their own ids, then the gradient nodes), and each node's gradient.
// Internal to autodiff/.
#pragma once

#include <vector>

#include "uops/ir/graph.h"

namespace uops::autodiff {

class GradContext {
 public:
  // `g` starts as `forward` without its outputs; `needs[n]` says whether node n gets a gradient.
  GradContext(const Graph& forward, Graph& g, std::vector<bool> needs);

  Graph& graph() { return g_; }
  // Forward node `n`; its value in the gradient graph is Node{n}.
  const UopNode& node(int n) const { return forward_.nodes()[n]; }

  bool has_grad(int n) const { return needs_[n]; }
  // The gradient of `n`, complete once every later node has contributed: the sum of its
  // contributions in the order they came, or none (-1) when nothing contributed.
  Node grad(int n);
  // Adds `v` (shaped like n) to the gradient of `n`; nothing when n has none.
  void contribute(int n, Node v);

  // Elementwise helpers over nodes of one shape; `constant` is shaped like `like`.
  Node constant(Node like, double v) { return g_.fill(like, v); }
  Node unary(UnaryOp op, Node a) { return g_.unary(op, a); }
  Node binary(BinaryOp op, Node a, Node b) { return g_.binary(op, a, b); }
  Node pick(Node cond, Node a, Node b) { return g_.ternary(cond, a, b); }
  // x's element at i, for i over `shape`, with the axes in `axes` read at 0: a reduction's
  // result broadcast back over its input.
  Node broadcast(Node x, const std::vector<ir::Index>& shape, const std::vector<int>& axes);

 private:
  const Graph& forward_;
  Graph& g_;
  std::vector<bool> needs_;
  std::vector<Node> sum_;
  std::vector<std::vector<Node>> scatters_;
};

}  // namespace uops::autodiff
