// Gradients of the elementwise uops: dx = dy * y'(x), as elementwise nodes. Derivatives are
// written over the forward values x and y where that is cheaper (exp' = y). max/min send a tie
// to the first operand, as `a >= b ? a : b` selects it; comparisons and floor have no gradient;
// a ternary's condition gets none; a cast passes the gradient between float types.
#include "rules.h"
#include "uops/error.h"

namespace uops::autodiff {

Node unary_derivative(GradContext& c, UnaryOp op, Node x, Node y, Node dy) {
  auto k = [&](double v) { return c.constant(x, v); };
  auto mul = [&](Node a, Node b) { return c.binary(BinaryOp::mul, a, b); };
  auto sub = [&](Node a, Node b) { return c.binary(BinaryOp::sub, a, b); };
  auto lt = [&](Node a, Node b) { return c.binary(BinaryOp::lt, a, b); };
  auto neg = [&](Node a) { return c.unary(UnaryOp::neg, a); };
  switch (op) {
    case UnaryOp::neg:
      return neg(dy);
    case UnaryOp::abs:
      return mul(dy, sub(lt(k(0), x), lt(x, k(0))));
    case UnaryOp::exp:
      return mul(dy, y);
    case UnaryOp::log:
      return c.binary(BinaryOp::div, dy, x);
    case UnaryOp::sqrt:
      return c.binary(BinaryOp::div, mul(dy, k(0.5)), y);
    case UnaryOp::rsqrt:
      return mul(dy, mul(k(-0.5), mul(y, mul(y, y))));
    case UnaryOp::recip:
      return neg(mul(dy, mul(y, y)));
    case UnaryOp::tanh:
      return mul(dy, sub(k(1), mul(y, y)));
    case UnaryOp::sigmoid:
      return mul(dy, mul(y, sub(k(1), y)));
    case UnaryOp::sin:
      return mul(dy, c.unary(UnaryOp::cos, x));
    case UnaryOp::cos:
      return neg(mul(dy, c.unary(UnaryOp::sin, x)));
    case UnaryOp::floor:
      break;
  }
  UOPS_ASSERT(false, "unary op without a gradient");
}

void unary_grad(GradContext& c, int n, Node dn) {
  const UopNode& y = c.node(n);
  int x = y.operands[0];
  if (y.uop == UnaryOp::floor || !c.has_grad(x)) return;
  c.contribute(x, unary_derivative(c, y.uop, Node{x}, Node{n}, dn));
}

// Between float types the gradient passes through, converted; an i32 end has none.
void cast_grad(GradContext& c, int n, Node dn) {
  int x = c.node(n).operands[0];
  if (c.has_grad(x)) c.contribute(x, c.graph().cast(dn, c.node(x).dtype));
}

Node binary_partial(GradContext& c, int n, int slot, Node dz) {
  const UopNode& z = c.node(n);
  Node x{z.operands[0]}, y{z.operands[1]};
  auto k = [&](double v) { return c.constant(x, v); };
  auto mul = [&](Node a, Node b) { return c.binary(BinaryOp::mul, a, b); };
  auto le = [&](Node a, Node b) { return c.binary(BinaryOp::le, a, b); };
  if (slot == 0) {
    switch (z.bop) {
      case BinaryOp::add:
      case BinaryOp::sub:
        return dz;
      case BinaryOp::mul:
        return mul(dz, y);
      case BinaryOp::div:
        return c.binary(BinaryOp::div, dz, y);
      case BinaryOp::pow:
        return mul(dz, mul(y, c.binary(BinaryOp::pow, x, c.binary(BinaryOp::sub, y, k(1)))));
      case BinaryOp::max:
        return c.pick(le(y, x), dz, k(0));  // x >= y, also false on NaN
      case BinaryOp::min:
        return c.pick(le(x, y), dz, k(0));
      default:
        break;
    }
  } else {
    switch (z.bop) {
      case BinaryOp::add:
        return dz;
      case BinaryOp::sub:
        return c.unary(UnaryOp::neg, dz);
      case BinaryOp::mul:
        return mul(dz, x);
      // d(x/y)/dy = -x/y^2: the sign the reference design lost.
      case BinaryOp::div:
        return mul(dz, c.unary(UnaryOp::neg, c.binary(BinaryOp::div, x, mul(y, y))));
      // x^y * log(x) is real only for x > 0; 0^y is constant (0) for y > 0. The log reads 1
      // where x is not positive, so the dropped branch has no infinite slope for a second
      // derivative to multiply by zero.
      case BinaryOp::pow: {
        Node positive = c.binary(BinaryOp::lt, k(0), x);
        return c.pick(positive,
                      mul(dz, mul(Node{n}, c.unary(UnaryOp::log, c.pick(positive, x, k(1))))),
                      k(0));
      }
      case BinaryOp::max:
        return c.pick(le(y, x), k(0), dz);
      case BinaryOp::min:
        return c.pick(le(x, y), k(0), dz);
      default:
        break;
    }
  }
  UOPS_ASSERT(false, "binary op without a gradient");
}

void binary_grad(GradContext& c, int n, Node dz) {
  const UopNode& z = c.node(n);
  if (is_comparison(z.bop)) return;
  // x and y may be one node (x * x): both contributions add up in its gradient.
  for (int slot : {0, 1})
    if (c.has_grad(z.operands[slot]))
      c.contribute(z.operands[slot], binary_partial(c, n, slot, dz));
}

void ternary_grad(GradContext& c, int n, Node dn) {
  const UopNode& t = c.node(n);
  Node cond{t.operands[0]};
  int a = t.operands[1], b = t.operands[2];
  if (c.has_grad(a)) c.contribute(a, c.pick(cond, dn, c.constant(dn, 0)));
  if (c.has_grad(b)) c.contribute(b, c.pick(cond, c.constant(dn, 0), dn));
}

}  // namespace uops::autodiff
