// y[i] = x[i with axis -> index[i]]  =>  dx[i with axis -> index[i]] += dy[i]: a scatter-add.
// An out-of-range index stores outside dx, which does nothing; the i32 index gets no gradient.
#include "rules.h"

namespace uops::autodiff {

using namespace ir;

void select_grad(GradContext& c, int n) {
  const UopNode& y = c.node(n);
  int x = y.operands[0], index = y.operands[1];
  if (!c.has_grad(x)) return;
  Block b;
  std::vector<Index> vars = c.nest(b, c.shape(n));
  std::vector<Index> at = vars;
  at[y.axis] = idx::data(c.value_tensor(index), vars);
  c.contribute(b, x, std::move(at), c.grad(n, vars), false);
  c.emit(std::move(b), "grad of select axis " + std::to_string(y.axis));
}

}  // namespace uops::autodiff
