// Gradients of the elementwise uops: one block per operand, dx[i] += dy[i] * y'(x)[i].
// Derivatives are written over the forward values x and y where that is cheaper (exp' = y).
// max/min send a tie to the first operand, as `a >= b ? a : b` selects it; comparisons and
// floor have no gradient; a ternary's condition gets none; a cast passes the gradient between
// float types.
#include "rules.h"
#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

namespace {

Value c(double v) {
  return val::constant(v);
}
Value neg(Value a) {
  return val::unary(UnaryOp::neg, std::move(a));
}
Value mul(Value a, Value b) {
  return val::binary(BinaryOp::mul, std::move(a), std::move(b));
}
Value div(Value a, Value b) {
  return val::binary(BinaryOp::div, std::move(a), std::move(b));
}
Value sub(Value a, Value b) {
  return val::binary(BinaryOp::sub, std::move(a), std::move(b));
}
Value lt(Value a, Value b) {
  return val::binary(BinaryOp::lt, std::move(a), std::move(b));
}
Value le(Value a, Value b) {
  return val::binary(BinaryOp::le, std::move(a), std::move(b));
}
Value pick(Value cond, Value a, Value b) {
  return val::ternary(std::move(cond), std::move(a), std::move(b));
}

// Accumulates `contribution(vars)` into the gradient of `operand` over n's shape.
template <typename F>
void contribute(GradContext& g, int n, int operand, const std::string& origin, F contribution) {
  if (!g.has_grad(operand)) return;
  Block b;
  std::vector<Index> vars = g.nest(b, g.shape(n));
  g.contribute(b, operand, vars, contribution(vars), true);
  g.emit(std::move(b), origin);
}

// d/dx of op at x, with y = op(x), times dy.
Value unary_derivative(UnaryOp op, Value x, Value y, Value dy) {
  switch (op) {
    case UnaryOp::neg:
      return neg(dy);
    case UnaryOp::abs:
      return mul(dy, sub(lt(c(0), x), lt(x, c(0))));
    case UnaryOp::exp:
      return mul(dy, y);
    case UnaryOp::log:
      return div(dy, x);
    case UnaryOp::sqrt:
      return div(mul(dy, c(0.5)), y);
    case UnaryOp::rsqrt:
      return mul(dy, mul(c(-0.5), mul(y, mul(y, y))));
    case UnaryOp::recip:
      return neg(mul(dy, mul(y, y)));
    case UnaryOp::tanh:
      return mul(dy, sub(c(1), mul(y, y)));
    case UnaryOp::sigmoid:
      return mul(dy, mul(y, sub(c(1), y)));
    case UnaryOp::sin:
      return mul(dy, val::unary(UnaryOp::cos, x));
    case UnaryOp::cos:
      return neg(mul(dy, val::unary(UnaryOp::sin, x)));
    case UnaryOp::floor:
      break;
  }
  UOPS_ASSERT(false, "unary op without a gradient");
}

}  // namespace

void unary_grad(GradContext& g, int n) {
  const UopNode& y = g.node(n);
  if (y.uop == UnaryOp::floor) return;
  int x = y.operands[0];
  contribute(g, n, x, std::string("grad of ") + op_name(y.uop), [&](const std::vector<Index>& v) {
    return unary_derivative(y.uop, g.value(x, v), g.value(n, v), g.grad(n, v));
  });
}

// Between float types the gradient passes through (converted by the store); an i32 end has none.
void cast_grad(GradContext& g, int n) {
  contribute(g, n, g.node(n).operands[0], "grad of cast",
             [&](const std::vector<Index>& v) { return g.grad(n, v); });
}

void binary_grad(GradContext& g, int n) {
  const UopNode& z = g.node(n);
  if (is_comparison(z.bop)) return;
  int x = z.operands[0], y = z.operands[1];
  std::string origin = std::string("grad of ") + op_name(z.bop);
  auto to_x = [&](const std::vector<Index>& v) -> Value {
    Value dz = g.grad(n, v), xv = g.value(x, v), yv = g.value(y, v);
    switch (z.bop) {
      case BinaryOp::add:
      case BinaryOp::sub:
        return dz;
      case BinaryOp::mul:
        return mul(dz, yv);
      case BinaryOp::div:
        return div(dz, yv);
      case BinaryOp::pow:
        return mul(dz, mul(yv, val::binary(BinaryOp::pow, xv, sub(yv, c(1)))));
      case BinaryOp::max:
        return pick(le(yv, xv), dz, c(0));  // x >= y, also false on NaN
      case BinaryOp::min:
        return pick(le(xv, yv), dz, c(0));
      default:
        break;
    }
    UOPS_ASSERT(false, "binary op without a gradient");
  };
  auto to_y = [&](const std::vector<Index>& v) -> Value {
    Value dz = g.grad(n, v), xv = g.value(x, v), yv = g.value(y, v);
    switch (z.bop) {
      case BinaryOp::add:
        return dz;
      case BinaryOp::sub:
        return neg(dz);
      case BinaryOp::mul:
        return mul(dz, xv);
      // d(x/y)/dy = -x/y^2: the sign the reference design lost.
      case BinaryOp::div:
        return mul(dz, neg(div(xv, mul(yv, yv))));
      // x^y * log(x) is real only for x > 0; 0^y is constant (0) for y > 0.
      case BinaryOp::pow:
        return pick(lt(c(0), xv), mul(dz, mul(g.value(n, v), val::unary(UnaryOp::log, xv))), c(0));
      case BinaryOp::max:
        return pick(le(yv, xv), c(0), dz);
      case BinaryOp::min:
        return pick(le(xv, yv), c(0), dz);
      default:
        break;
    }
    UOPS_ASSERT(false, "binary op without a gradient");
  };
  // x and y may be one tensor (x * x): both contributions accumulate into it.
  contribute(g, n, x, origin + " to x", to_x);
  contribute(g, n, y, origin + " to y", to_y);
}

void ternary_grad(GradContext& g, int n) {
  const UopNode& t = g.node(n);
  int cond = t.operands[0], a = t.operands[1], b = t.operands[2];
  contribute(g, n, a, "grad of ternary to a", [&](const std::vector<Index>& v) {
    return pick(g.value(cond, v), g.grad(n, v), c(0));
  });
  contribute(g, n, b, "grad of ternary to b", [&](const std::vector<Index>& v) {
    return pick(g.value(cond, v), c(0), g.grad(n, v));
  });
}

}  // namespace uops::autodiff
