// Gradients of the reductions, one rule for each op (the reference design handled sum only).
// Over every element x[i] of the input, with dy[r(i)] the gradient of its row broadcast back:
//   sum   dx[i] = dy[r]
//   mean  dx[i] = dy[r] / count (a float iota)
//   prod  dx[i] = dy[r] * (product of the other elements of the row). Written as y / x[i] it
//         would divide by zero; instead a reduction counts the zeros z of each row and another
//         multiplies its nonzero elements p. The product of the others is then p / x[i] when
//         z = 0, p at the one zero when z = 1, and 0 otherwise.
//   max, min  all of dy goes to the first extremal element, the one argmax/argmin pick, so a
//         tie never doubles the gradient: the position among the reduced axes (a float iota,
//         which the passes turn into the index value) is compared with the argmax.
//   argmax, argmin  no gradient.
#include "rules.h"
#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

Node reduce_partial(GradContext& c, int n, Node v) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  Graph& g = c.graph();
  const std::vector<Index> shape = c.node(x).shape;
  const std::vector<int> axes = y.axes;
  DType dtype = c.node(x).dtype;
  Node xv{x};
  auto k = [&](double v) { return c.constant(xv, v); };
  auto row = [&](Node r) { return c.broadcast(r, shape, axes); };
  auto eq = [&](Node a, Node b) { return c.binary(BinaryOp::eq, a, b); };
  Node contribution;
  switch (y.rop) {
    case ReduceOp::sum:
      contribution = v;
      break;
    case ReduceOp::mean: {
      Index count = idx::constant(1);
      for (int a : axes) count = idx::mul(count, shape[a]);
      contribution = c.binary(BinaryOp::div, v, g.iota_expr(shape, count, dtype));
      break;
    }
    case ReduceOp::prod: {
      Node is_zero = eq(xv, k(0));
      Node z = row(g.reduce(ReduceOp::sum, axes, is_zero));
      Node p = row(g.reduce(ReduceOp::prod, axes, c.pick(is_zero, k(1), xv)));
      // Divided by 1 where x is zero, so that no branch the ternary drops divides by zero: a
      // second derivative would multiply that branch's infinite slope by its zero gradient.
      Node safe_x = c.pick(is_zero, k(1), xv);
      Node others = c.pick(is_zero, c.pick(eq(z, k(1)), p, k(0)),
                           c.pick(eq(z, k(0)), c.binary(BinaryOp::div, p, safe_x), k(0)));
      contribution = c.binary(BinaryOp::mul, v, others);
      break;
    }
    case ReduceOp::max:
    case ReduceOp::min: {
      Node first = g.reduce(y.rop == ReduceOp::max ? ReduceOp::argmax : ReduceOp::argmin, axes, xv);
      Index position = idx::constant(0);
      for (int a : axes) position = idx::add(idx::mul(position, shape[a]), idx::var(a));
      Node at_first = eq(g.iota_expr(shape, position, dtype), g.cast(row(first), dtype));
      contribution = c.pick(at_first, v, k(0));
      break;
    }
    default:
      UOPS_ASSERT(false, "reduce op without a gradient");
  }
  return contribution;
}

void reduce_grad(GradContext& c, int n, Node dy) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (is_arg_reduce(y.rop) || !c.has_grad(x)) return;
  c.contribute(x, reduce_partial(c, n, c.broadcast(dy, c.node(x).shape, y.axes)));
}

}  // namespace uops::autodiff
