// Gradients of the reductions, one rule for each op (the reference design handled sum only).
// Over every element x[i] of the input, with r(i) its reduced position in y:
//   sum   dx[i] += dy[r]
//   mean  dx[i] += dy[r] / count
//   prod  dx[i] += dy[r] * (product of the other elements of the row). Written as y / x[i] it
//         would divide by zero; instead a block counts the zeros z of each row and another
//         multiplies its nonzero elements p. The product of the others is then p / x[i] when
//         z = 0, p at the one zero when z = 1, and 0 otherwise.
//   max, min  all of dy goes to the first extremal element, the one argmax/argmin pick, so a
//         tie never doubles the gradient.
//   argmax, argmin  no gradient.
#include "rules.h"
#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

void reduce_grad(GradContext& g, int n) {
  const UopNode& y = g.node(n);
  int x = y.operands[0];
  if (is_arg_reduce(y.rop) || !g.has_grad(x)) return;
  std::vector<Index> shape = g.shape(x);
  const std::vector<int>& axes = y.axes;
  std::string origin = std::string("grad of reduce ") + op_name(y.rop);
  auto row = [&](const std::vector<Index>& vars) {
    std::vector<Index> r = vars;
    for (int a : axes) r[a] = idx::constant(0);
    return r;
  };
  auto eq = [](Value a, Value b) { return val::binary(BinaryOp::eq, a, b); };
  auto zero = val::constant(0.0);

  // Per-row temporaries some rules need, computed before the gradient block.
  int zeros = -1, nonzero_product = -1, first = -1;
  if (y.rop == ReduceOp::prod) {
    DType t = g.node(x).dtype;
    zeros =
        g.new_tensor(g.unique_name("zeros_t" + std::to_string(n)), t, g.shape(n), Role::temporary);
    g.emit_reduce(
        shape, axes, ReduceOp::sum, [&](const auto& v) { return eq(g.value(x, v), zero); }, zeros,
        origin + ": zeros");
    nonzero_product = g.new_tensor(g.unique_name("nonzero_prod_t" + std::to_string(n)), t,
                                   g.shape(n), Role::temporary);
    g.emit_reduce(
        shape, axes, ReduceOp::prod,
        [&](const auto& v) {
          Value xv = g.value(x, v);
          return val::ternary(eq(xv, zero), val::constant(1.0), xv);
        },
        nonzero_product, origin + ": nonzero product");
  }
  if (y.rop == ReduceOp::max || y.rop == ReduceOp::min) {
    first = g.new_tensor(g.unique_name("first_t" + std::to_string(n)), DType::i32, g.shape(n),
                         Role::temporary);
    g.emit_reduce(
        shape, axes, y.rop == ReduceOp::max ? ReduceOp::argmax : ReduceOp::argmin,
        [&](const auto& v) { return g.value(x, v); }, first, origin + ": first extremum");
  }

  Block b;
  std::vector<Index> vars = g.nest(b, shape);
  Value dy = g.grad(n, row(vars));
  Value contribution;
  switch (y.rop) {
    case ReduceOp::sum:
      contribution = dy;
      break;
    case ReduceOp::mean:
      contribution = val::binary(BinaryOp::div, dy, val::index(reduced_count(shape, axes)));
      break;
    case ReduceOp::prod: {
      Value xv = g.value(x, vars), z = val::load(zeros, row(vars)),
            p = val::load(nonzero_product, row(vars));
      Value others =
          val::ternary(eq(xv, zero), val::ternary(eq(z, val::constant(1.0)), p, zero),
                       val::ternary(eq(z, zero), val::binary(BinaryOp::div, p, xv), zero));
      contribution = val::binary(BinaryOp::mul, dy, others);
      break;
    }
    case ReduceOp::max:
    case ReduceOp::min:
      contribution = val::ternary(
          eq(val::index(reduced_position(shape, axes, vars)), val::load(first, row(vars))), dy,
          zero);
      break;
    default:
      UOPS_ASSERT(false, "reduce op without a gradient");
  }
  g.contribute(b, x, vars, contribution, true);
  g.emit(std::move(b), origin);
}

}  // namespace uops::autodiff
