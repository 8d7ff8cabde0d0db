#include "uops/parser/index_expr.h"

#include <algorithm>

#include "uops/error.h"

namespace uops::ir {

namespace {

Index make(IndexNode n) {
  return std::make_shared<const IndexNode>(std::move(n));
}

// Constant folding that never hides a run-time error (division by zero stays in the tree) and
// never overflows.
bool fold(IndexKind k, int64_t a, int64_t b, int64_t* out) {
  switch (k) {
    case IndexKind::Add:
      return !__builtin_add_overflow(a, b, out);
    case IndexKind::Sub:
      return !__builtin_sub_overflow(a, b, out);
    case IndexKind::Mul:
      return !__builtin_mul_overflow(a, b, out);
    case IndexKind::Div:
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      *out = floor_div(a, b);
      return true;
    case IndexKind::Mod:
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      *out = floor_mod(a, b);
      return true;
    case IndexKind::Min:
      *out = std::min(a, b);
      return true;
    case IndexKind::Max:
      *out = std::max(a, b);
      return true;
    default:
      return false;
  }
}

}  // namespace

namespace idx {

Index constant(int64_t v) {
  return make({.kind = IndexKind::Const, .constant = v});
}

Index var(int v) {
  return make({.kind = IndexKind::Var, .var = v});
}

Index dim(int tensor, int axis) {
  return make({.kind = IndexKind::Dim, .tensor = tensor, .axis = axis});
}

Index param(const std::string& name) {
  return make({.kind = IndexKind::Param, .name = name});
}

Index data(int tensor, std::vector<Index> args) {
  return make({.kind = IndexKind::Data, .tensor = tensor, .args = std::move(args)});
}

Index neg(Index a) {
  int64_t v;
  if (is_const(a, &v) && v != INT64_MIN) return constant(-v);
  if (a->kind == IndexKind::Neg) return a->a;
  return make({.kind = IndexKind::Neg, .a = std::move(a)});
}

Index binary(IndexKind kind, Index a, Index b) {
  int64_t x = 0, y = 0, r = 0;
  bool ca = is_const(a, &x), cb = is_const(b, &y);
  if (ca && cb && fold(kind, x, y, &r)) return constant(r);
  // (e ± c1) ± c2 is e ± (c1 + c2) when both steps go the same way (then the sum overflows
  // exactly when the two steps would): shapes grown one step at a time stay small.
  int64_t c1 = 0, sum = 0;
  if (cb && y != INT64_MIN && (kind == IndexKind::Add || kind == IndexKind::Sub) &&
      (a->kind == IndexKind::Add || a->kind == IndexKind::Sub) && is_const(a->b, &c1) &&
      c1 != INT64_MIN) {
    int64_t first = a->kind == IndexKind::Add ? c1 : -c1, second = kind == IndexKind::Add ? y : -y;
    if ((first >= 0) == (second >= 0) && !__builtin_add_overflow(first, second, &sum) &&
        sum != INT64_MIN)
      return sum >= 0 ? add(a->a, constant(sum)) : sub(a->a, constant(-sum));
  }
  switch (kind) {
    case IndexKind::Add:
      if (ca && x == 0) return b;
      if (cb && y == 0) return a;
      break;
    case IndexKind::Sub:
      if (cb && y == 0) return a;
      if (ca && x == 0) return neg(b);
      break;
    case IndexKind::Mul:
      if (ca && x == 1) return b;
      if (cb && y == 1) return a;
      break;
    case IndexKind::Div:
      if (cb && y == 1) return a;
      break;
    case IndexKind::Min:
    case IndexKind::Max:
      if (equal(a, b)) return a;
      break;
    default:
      break;
  }
  return make({.kind = kind, .a = std::move(a), .b = std::move(b)});
}

Index add(Index a, Index b) {
  return binary(IndexKind::Add, std::move(a), std::move(b));
}
Index sub(Index a, Index b) {
  return binary(IndexKind::Sub, std::move(a), std::move(b));
}
Index mul(Index a, Index b) {
  return binary(IndexKind::Mul, std::move(a), std::move(b));
}
Index floordiv(Index a, Index b) {
  return binary(IndexKind::Div, std::move(a), std::move(b));
}
Index floormod(Index a, Index b) {
  return binary(IndexKind::Mod, std::move(a), std::move(b));
}
Index min(Index a, Index b) {
  return binary(IndexKind::Min, std::move(a), std::move(b));
}
Index max(Index a, Index b) {
  return binary(IndexKind::Max, std::move(a), std::move(b));
}

}  // namespace idx

size_t node_count(const Index& root) {
  size_t n = 0;
  std::vector<const IndexNode*> todo = {root.get()};
  while (!todo.empty()) {
    const IndexNode* e = todo.back();
    todo.pop_back();
    ++n;
    if (e->a) todo.push_back(e->a.get());
    if (e->b) todo.push_back(e->b.get());
    for (auto& arg : e->args) todo.push_back(arg.get());
  }
  return n;
}

bool is_const(const Index& e, int64_t* value) {
  if (e->kind != IndexKind::Const) return false;
  if (value) *value = e->constant;
  return true;
}

bool equal(const Index& a, const Index& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case IndexKind::Const:
      return a->constant == b->constant;
    case IndexKind::Var:
      return a->var == b->var;
    case IndexKind::Dim:
      return a->tensor == b->tensor && a->axis == b->axis;
    case IndexKind::Param:
      return a->name == b->name;
    case IndexKind::Data:
      if (a->tensor != b->tensor || a->args.size() != b->args.size()) return false;
      for (size_t i = 0; i < a->args.size(); ++i)
        if (!equal(a->args[i], b->args[i])) return false;
      return true;
    case IndexKind::Neg:
      return equal(a->a, b->a);
    default:
      return equal(a->a, b->a) && equal(a->b, b->b);
  }
}

void visit(const Index& e, const std::function<void(const IndexNode&)>& f) {
  if (!e) return;
  f(*e);
  visit(e->a, f);
  visit(e->b, f);
  for (auto& a : e->args) visit(a, f);
}

void collect_vars(const Index& e, std::vector<int>& out) {
  visit(e, [&](const IndexNode& n) {
    if (n.kind == IndexKind::Var && std::find(out.begin(), out.end(), n.var) == out.end())
      out.push_back(n.var);
  });
}

bool uses_var(const Index& e, int var) {
  bool used = false;
  visit(e, [&](const IndexNode& n) { used |= n.kind == IndexKind::Var && n.var == var; });
  return used;
}

bool uses_var(const std::vector<Index>& index, int var) {
  return std::any_of(index.begin(), index.end(), [&](const Index& e) { return uses_var(e, var); });
}

bool uses_any_var(const Index& e) {
  bool used = false;
  visit(e, [&](const IndexNode& n) { used |= n.kind == IndexKind::Var; });
  return used;
}

bool uses_data(const Index& e) {
  bool used = false;
  visit(e, [&](const IndexNode& n) { used |= n.kind == IndexKind::Data; });
  return used;
}

bool is_fixed(const Index& e) {
  bool fixed = true;
  visit(e, [&](const IndexNode& n) {
    fixed &= n.kind != IndexKind::Var && n.kind != IndexKind::Data;
  });
  return fixed;
}

bool pins_var(const std::vector<Index>& index, int var) {
  return std::any_of(index.begin(), index.end(), [&](const Index& e) { return pins_var(e, var); });
}

bool pins_var(const Index& e, int var) {
  switch (e->kind) {
    case IndexKind::Var:
      return e->var == var;
    case IndexKind::Neg:
      return pins_var(e->a, var);
    case IndexKind::Add:
    case IndexKind::Sub:
      return (pins_var(e->a, var) && is_fixed(e->b)) || (is_fixed(e->a) && pins_var(e->b, var));
    default:
      return false;
  }
}

bool plus_var(const Index& e, int var, bool fixed) {
  auto term = [&](const Index& t) { return fixed ? is_fixed(t) : !uses_var(t, var); };
  switch (e->kind) {
    case IndexKind::Var:
      return e->var == var;
    case IndexKind::Add:
      return (plus_var(e->a, var, fixed) && term(e->b)) ||
             (term(e->a) && plus_var(e->b, var, fixed));
    case IndexKind::Sub:
      return plus_var(e->a, var, fixed) && term(e->b);
    default:
      return false;
  }
}

bool affine_in(const Index& e, const std::vector<int>& vars) {
  auto free = [&](const Index& x) {
    for (int v : vars)
      if (uses_var(x, v)) return false;
    return true;
  };
  switch (e->kind) {
    case IndexKind::Neg:
      return affine_in(e->a, vars);
    case IndexKind::Add:
    case IndexKind::Sub:
      return affine_in(e->a, vars) && affine_in(e->b, vars);
    case IndexKind::Mul:
      return (free(e->a) && affine_in(e->b, vars)) || (free(e->b) && affine_in(e->a, vars));
    default:
      return e->kind == IndexKind::Var || free(e);
  }
}

bool raises_here(const IndexNode& n) {
  int64_t c = 0;
  return (n.kind == IndexKind::Div || n.kind == IndexKind::Mod) && !(is_const(n.b, &c) && c > 0);
}

bool may_raise(const Index& e) {
  bool raises = false;
  visit(e, [&](const IndexNode& n) { raises |= raises_here(n); });
  return raises;
}

Index rewrite(const Index& e, const std::function<Index(const Index&)>& leaf) {
  switch (e->kind) {
    case IndexKind::Const:
      return e;
    case IndexKind::Var:
    case IndexKind::Dim:
    case IndexKind::Param: {
      Index r = leaf(e);
      return r ? r : e;
    }
    case IndexKind::Data: {
      Index r = leaf(e);
      if (r) return r;
      std::vector<Index> args;
      for (auto& a : e->args) args.push_back(rewrite(a, leaf));
      return idx::data(e->tensor, std::move(args));
    }
    case IndexKind::Neg:
      return idx::neg(rewrite(e->a, leaf));
    default:
      return idx::binary(e->kind, rewrite(e->a, leaf), rewrite(e->b, leaf));
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) throw Error("division by zero in an index expression");
  if (a == INT64_MIN && b == -1) throw Error("integer overflow in an index expression");
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
  if (b == 0) throw Error("modulo by zero in an index expression");
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

int64_t evaluate(const Index& e, const IndexEnv& env) {
  switch (e->kind) {
    case IndexKind::Const:
      return e->constant;
    case IndexKind::Var:
      UOPS_ASSERT(env.var, "loop variable in an expression evaluated outside loops");
      return env.var(e->var);
    case IndexKind::Dim:
      return env.dim(e->tensor, e->axis);
    case IndexKind::Param:
      return env.param(e->name);
    case IndexKind::Data:
      UOPS_ASSERT(false, "data-dependent index evaluated at bind time");
    case IndexKind::Neg: {
      int64_t a = evaluate(e->a, env);
      if (a == INT64_MIN) throw Error("integer overflow in an index expression");
      return -a;
    }
    default:
      break;
  }
  int64_t a = evaluate(e->a, env), b = evaluate(e->b, env), r = 0;
  switch (e->kind) {
    case IndexKind::Div:
      return floor_div(a, b);
    case IndexKind::Mod:
      return floor_mod(a, b);
    default:
      if (!fold(e->kind, a, b, &r)) throw Error("integer overflow in an index expression");
      return r;
  }
}

namespace {

int precedence(const Index& e) {
  switch (e->kind) {
    case IndexKind::Add:
    case IndexKind::Sub:
      return 1;
    case IndexKind::Mul:
    case IndexKind::Div:
    case IndexKind::Mod:
      return 2;
    default:
      return 3;
  }
}

std::string default_leaf(const IndexNode& n) {
  switch (n.kind) {
    case IndexKind::Var:
      return "i" + std::to_string(n.var);
    case IndexKind::Dim:
      return std::string("d") + char('A' + n.tensor) + std::to_string(n.axis);
    default:
      return "data" + std::to_string(n.tensor);
  }
}

// The grammar allows a sign only at the start of an expression, where it binds to the first
// factor; so a negation or negative constant prints bare only there (`leftmost`) and in
// parentheses anywhere else.
void print(const Index& e, int min_prec, bool leftmost,
           const std::function<std::string(const IndexNode&)>& leaf, std::string& out) {
  bool negative = e->kind == IndexKind::Neg ||
                  (e->kind == IndexKind::Const && e->constant < 0 && e->constant != INT64_MIN);
  bool parens = negative ? !leftmost : precedence(e) < min_prec;
  if (parens) out += '(';
  switch (e->kind) {
    case IndexKind::Const:
      // -2^63 has no literal: its magnitude does not fit in 64 bits.
      out += e->constant == INT64_MIN ? "(-9223372036854775807 - 1)" : std::to_string(e->constant);
      break;
    case IndexKind::Param:
      out += "$" + e->name;
      break;
    case IndexKind::Var:
    case IndexKind::Dim:
      out += leaf(*e);
      break;
    case IndexKind::Data:
      out += leaf(*e) + "[";
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (i) out += ", ";
        print(e->args[i], 1, true, leaf, out);
      }
      out += "]";
      break;
    case IndexKind::Neg:
      out += '-';
      print(e->a, 3, false, leaf, out);
      break;
    case IndexKind::Min:
    case IndexKind::Max:
      out += e->kind == IndexKind::Min ? "min(" : "max(";
      print(e->a, 1, true, leaf, out);
      out += ", ";
      print(e->b, 1, true, leaf, out);
      out += ')';
      break;
    default: {
      int p = precedence(e);
      const char* op = e->kind == IndexKind::Add   ? " + "
                       : e->kind == IndexKind::Sub ? " - "
                       : e->kind == IndexKind::Mul ? " * "
                       : e->kind == IndexKind::Div ? " / "
                                                   : " % ";
      print(e->a, p, leftmost || parens, leaf, out);
      out += op;
      print(e->b, p + 1, false, leaf, out);
    }
  }
  if (parens) out += ')';
}

}  // namespace

std::string to_string(const Index& e, const std::function<std::string(const IndexNode&)>& leaf) {
  std::string out;
  print(e, 1, true, leaf ? leaf : default_leaf, out);
  return out;
}

}  // namespace uops::ir
