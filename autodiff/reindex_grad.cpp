// A gather's gradient is a scatter-add, and a scatter-add's gradient is a gather:
//   reindex  y[i] = x[index(i)]               =>  dx = scatter(dy): dx[index(i)] += dy[i]
//   scatter  y[index(i)] += x[i]              =>  dx[i] = dy[index(i)] (a reindex, fill 0)
//   select   y[i] = x[i, axis -> index[i]]    =>  dx[i, axis -> index[i]] += dy[i] (a scatter)
//   scatter  y[i, axis -> index[i]] += x[i]   =>  dx = select(axis, dy, index)
// A fill position or an index out of range lands outside the tensor, where a store does nothing
// and a load reads 0: it contributes nothing either way. The i32 index gets no gradient.
// A reindex that only permutes axes (and drops axes of size 1) is a bijection: its gradient is
// the gather of the inverse permutation, which writes every element once in the gradient's own
// order (a transpose's gradient is a transpose, not a strided scatter).
#include <optional>

#include "rules.h"

namespace uops::autodiff {

using namespace ir;

namespace {

// The inverse of a reindex that maps y's axes one to one onto x's axes of equal size, x's other
// axes being read at 0 and of size 1; none when it is no such bijection.
std::optional<std::vector<Index>> inverse_permutation(const UopNode& y, const UopNode& x) {
  std::vector<Index> inverse(y.shape.size());
  for (size_t a = 0; a < y.index.size(); ++a) {
    const Index& e = y.index[a];
    int64_t v;
    if (is_const(e, &v) && v == 0 && is_const(x.shape[a], &v) && v == 1) continue;
    if (e->kind != IndexKind::Var || inverse[e->var] || !equal(y.shape[e->var], x.shape[a]))
      return std::nullopt;
    inverse[e->var] = idx::var(int(a));
  }
  for (auto& i : inverse)
    if (!i) return std::nullopt;
  return inverse;
}

}  // namespace

void reindex_grad(GradContext& c, int n, Node dn) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (!c.has_grad(x)) return;
  std::optional<std::vector<Index>> inverse = inverse_permutation(y, c.node(x));
  c.contribute(x, inverse ? c.graph().reindex_expr(dn, c.node(x).shape, std::move(*inverse), 0.0)
                          : c.graph().scatter_expr(dn, c.node(x).shape, y.index));
}

void select_grad(GradContext& c, int n, Node dn) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (c.has_grad(x))
    c.contribute(x, c.graph().scatter_expr(y.axis, dn, Node{y.operands[1]}, c.node(x).shape));
}

void scatter_grad(GradContext& c, int n, Node dn) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (!c.has_grad(x)) return;
  if (y.operands.size() == 2)
    c.contribute(x, c.graph().select(y.axis, dn, Node{y.operands[1]}));
  else
    c.contribute(x, c.graph().reindex_expr(dn, c.node(x).shape, y.index, 0.0));
}

}  // namespace uops::autodiff
