#include "uops/ir/value_expr.h"

namespace uops::ir {

namespace {
Value make(ValueNode n) {
  return std::make_shared<const ValueNode>(std::move(n));
}
}  // namespace

namespace val {

Value constant(double v) {
  return make({.kind = ValueKind::Const, .constant = v});
}

Value load(int tensor, std::vector<Index> index, double fill, bool checked) {
  return make({.kind = ValueKind::Load,
               .tensor = tensor,
               .index = std::move(index),
               .fill = fill,
               .checked = checked});
}

Value carried(int id) {
  return make({.kind = ValueKind::Carried, .carried = id});
}

Value index(Index e) {
  return make({.kind = ValueKind::IndexValue, .ivalue = std::move(e)});
}

Value unary(UnaryOp op, Value a) {
  return make({.kind = ValueKind::Unary, .uop = op, .a = std::move(a)});
}

Value binary(BinaryOp op, Value a, Value b) {
  return make({.kind = ValueKind::Binary, .bop = op, .a = std::move(a), .b = std::move(b)});
}

Value ternary(Value cond, Value a, Value b) {
  return make(
      {.kind = ValueKind::Ternary, .a = std::move(cond), .b = std::move(a), .c = std::move(b)});
}

}  // namespace val

namespace {

// NaN included, so that a tree is equal to itself.
bool same_number(double a, double b) {
  return a == b || (a != a && b != b);
}

}  // namespace

bool equal(const Value& a, const Value& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case ValueKind::Const:
      return same_number(a->constant, b->constant);
    case ValueKind::Load:
      if (a->tensor != b->tensor || a->index.size() != b->index.size() ||
          !same_number(a->fill, b->fill) || a->checked != b->checked)
        return false;
      for (size_t i = 0; i < a->index.size(); ++i)
        if (!equal(a->index[i], b->index[i])) return false;
      return true;
    case ValueKind::Carried:
      return a->carried == b->carried;
    case ValueKind::IndexValue:
      return equal(a->ivalue, b->ivalue);
    case ValueKind::Unary:
      return a->uop == b->uop && equal(a->a, b->a);
    case ValueKind::Binary:
      return a->bop == b->bop && equal(a->a, b->a) && equal(a->b, b->b);
    case ValueKind::Ternary:
      return equal(a->a, b->a) && equal(a->b, b->b) && equal(a->c, b->c);
  }
  return false;
}

void visit(const Value& v, const std::function<void(const ValueNode&)>& node,
           const std::function<void(const Index&)>& index) {
  if (!v) return;
  node(*v);
  if (index) {
    for (auto& e : v->index) index(e);
    if (v->ivalue) index(v->ivalue);
  }
  visit(v->a, node, index);
  visit(v->b, node, index);
  visit(v->c, node, index);
}

void for_each_load(const Value& v, const std::function<void(const ValueNode&)>& f) {
  visit(v, [&](const ValueNode& n) {
    if (n.kind == ValueKind::Load) f(n);
  });
}

bool uses_carried(const Value& v, int id) {
  bool used = false;
  visit(v, [&](const ValueNode& n) { used |= n.kind == ValueKind::Carried && n.carried == id; });
  return used;
}

void collect_vars(const Value& v, std::vector<int>& out) {
  visit(
      v, [](const ValueNode&) {}, [&](const Index& e) { collect_vars(e, out); });
}

bool may_raise(const Value& v) {
  bool raises = false;
  visit(
      v, [](const ValueNode&) {}, [&](const Index& e) { raises |= may_raise(e); });
  return raises;
}

Value rewrite(const Value& v, const std::function<Value(const Value&)>& node,
              const std::function<Index(const Index&)>& index) {
  if (!v) return v;
  if (Value r = node ? node(v) : nullptr) return r;
  ValueNode n = *v;
  if (index) {
    for (auto& e : n.index) e = rewrite(e, index);
    if (n.ivalue) n.ivalue = rewrite(n.ivalue, index);
  }
  n.a = rewrite(v->a, node, index);
  n.b = rewrite(v->b, node, index);
  n.c = rewrite(v->c, node, index);
  return make(std::move(n));
}

}  // namespace uops::ir
