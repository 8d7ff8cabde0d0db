#include "grad_context.h"

#include <algorithm>

#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

GradContext::GradContext(const Graph& forward, Graph& g, std::vector<bool> needs)
    : forward_(forward),
      g_(g),
      needs_(std::move(needs)),
      sum_(needs_.size(), Node{-1}),
      scatters_(needs_.size()) {}

Node GradContext::grad(int n) {
  UOPS_ASSERT(has_grad(n), "reading the gradient of a node that has none");
  for (Node s : scatters_[n]) sum_[n] = sum_[n].id < 0 ? s : g_.binary(BinaryOp::add, sum_[n], s);
  scatters_[n].clear();
  return sum_[n];
}

// An elementwise contribution is added as it comes, so the sum follows it in the lowered program
// and the passes substitute it away; scatters are added last, in a chain that lowering
// accumulates into the gradient's one tensor.
void GradContext::contribute(int n, Node v) {
  if (!has_grad(n)) return;
  if (g_.node(v).kind == UopKind::scatter)
    scatters_[n].push_back(v);
  else
    sum_[n] = sum_[n].id < 0 ? v : g_.binary(BinaryOp::add, sum_[n], v);
}

Node GradContext::broadcast(Node x, const std::vector<Index>& shape, const std::vector<int>& axes) {
  std::vector<Index> at;
  for (int a = 0; a < int(shape.size()); ++a)
    at.push_back(std::count(axes.begin(), axes.end(), a) ? idx::constant(0) : idx::var(a));
  return g_.reindex_expr(x, shape, std::move(at), 0.0);
}

}  // namespace uops::autodiff
