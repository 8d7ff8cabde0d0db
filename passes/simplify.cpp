#include "uops/passes/simplify.h"

#include "uops/ir/analysis.h"
#include "uops/ir/scalar_semantics.h"

namespace uops {

using namespace ir;

namespace {

Index simplify_index(const Index& e) {
  return rewrite(e, [](const Index& leaf) -> Index {
    if (leaf->kind != IndexKind::Data) return nullptr;
    std::vector<Index> args;
    for (auto& a : leaf->args) args.push_back(simplify_index(a));
    return idx::data(leaf->tensor, std::move(args));
  });
}

bool is_constant(const Value& v, double c) {
  return v->kind == ValueKind::Const && v->constant == c;
}

template <typename T>
Value simplify_value(const Value& v) {
  switch (v->kind) {
    case ValueKind::Const:
    case ValueKind::Carried:
      return v;
    case ValueKind::Load: {
      std::vector<Index> index;
      for (auto& e : v->index) index.push_back(simplify_index(e));
      return val::load(v->tensor, std::move(index), v->fill, v->checked);
    }
    case ValueKind::IndexValue: {
      Index e = simplify_index(v->ivalue);
      int64_t c;
      if (is_const(e, &c)) return val::constant(double(T(c)));
      return val::index(e);
    }
    case ValueKind::Unary: {
      Value a = simplify_value<T>(v->a);
      if (a->kind == ValueKind::Const)
        return val::constant(double(apply_unary<T>(v->uop, T(a->constant))));
      if (v->uop == UnaryOp::neg && a->kind == ValueKind::Unary && a->uop == UnaryOp::neg)
        return a->a;
      return val::unary(v->uop, a);
    }
    case ValueKind::Binary: {
      Value a = simplify_value<T>(v->a), b = simplify_value<T>(v->b);
      if (a->kind == ValueKind::Const && b->kind == ValueKind::Const)
        return val::constant(double(apply_binary<T>(v->bop, T(a->constant), T(b->constant))));
      switch (v->bop) {
        case BinaryOp::sub:
          if (is_constant(b, 0)) return a;
          break;
        case BinaryOp::mul:
          if (is_constant(b, 1)) return a;
          if (is_constant(a, 1)) return b;
          break;
        case BinaryOp::div:
          if (is_constant(b, 1)) return a;
          break;
        default:
          break;
      }
      return val::binary(v->bop, a, b);
    }
    case ValueKind::Ternary: {
      Value c = simplify_value<T>(v->a), a = simplify_value<T>(v->b), b = simplify_value<T>(v->c);
      if (c->kind == ValueKind::Const) return T(c->constant) != T(0) ? a : b;
      if (equal(a, b)) return a;
      return val::ternary(c, a, b);
    }
  }
  return v;
}

}  // namespace

Program simplify(Program p) {
  bool f64 = p.value_type() == DType::f64;
  map_program(p, simplify_index, [&](const Value& v) {
    return f64 ? simplify_value<double>(v) : simplify_value<float>(v);
  });
  return p;
}

}  // namespace uops
