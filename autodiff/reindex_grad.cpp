// A gather's gradient is a scatter-add, and a scatter-add's gradient is a gather:
//   reindex  y[i] = x[index(i)]               =>  dx = scatter(dy): dx[index(i)] += dy[i]
//   scatter  y[index(i)] += x[i]              =>  dx[i] = dy[index(i)] (a reindex, fill 0)
//   select   y[i] = x[i, axis -> index[i]]    =>  dx[i, axis -> index[i]] += dy[i] (a scatter)
//   scatter  y[i, axis -> index[i]] += x[i]   =>  dx = select(axis, dy, index)
// A fill position or an index out of range lands outside the tensor, where a store does nothing
// and a load reads 0: it contributes nothing either way. The i32 index gets no gradient.
#include "rules.h"

namespace uops::autodiff {

void reindex_grad(GradContext& c, int n, Node dn) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (c.has_grad(x)) c.contribute(x, c.graph().scatter_expr(dn, c.node(x).shape, y.index));
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
