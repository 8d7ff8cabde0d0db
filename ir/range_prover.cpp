#include "ir/range_prover.h"

#include "uops/ir/fixed_params.h"

namespace uops::ir {

namespace {

std::string key(const Index& e) {
  return to_string(e, [](const IndexNode& n) -> std::string {
    if (n.kind == IndexKind::Dim)
      return "T" + std::to_string(n.tensor) + "." + std::to_string(n.axis);
    return "?";
  });
}

}  // namespace

void RangeProver::assume_equalities() {
  // Axes asserted equal are checked before anything runs, so they are one atom: each class of
  // equal axes links to one root (a.0 == b.0 and c.0 == b.0 make all three one).
  auto root = [&](std::string k) {
    for (auto it = alias_.find(k); it != alias_.end(); it = alias_.find(k)) k = it->second;
    return k;
  };
  for (auto& eq : p_.equalities)
    if (eq.a->kind == IndexKind::Dim && eq.b->kind == IndexKind::Dim) {
      std::string a = root(key(eq.a)), b = root(key(eq.b));
      if (a != b) alias_[b] = a;
    }
  // An axis asserted equal to an expression over other axes has that expression's bounds; one
  // whose expression names another such axis is left alone, so no definition is circular.
  for (auto& eq : p_.equalities)
    for (auto [dim, e] : {std::pair{eq.a, eq.b}, std::pair{eq.b, eq.a}})
      if (dim->kind == IndexKind::Dim && e->kind != IndexKind::Dim && is_fixed(e))
        defined_.emplace(key(dim), e);
  for (auto it = defined_.begin(); it != defined_.end();) {
    bool circular = false;
    visit(it->second, [&](const IndexNode& n) {
      circular |= n.kind == IndexKind::Dim &&
                  defined_.count("T" + std::to_string(n.tensor) + "." + std::to_string(n.axis));
    });
    it = circular ? defined_.erase(it) : std::next(it);
  }
}

RangeProver::RangeProver(const Program& p, const Block& block) : p_(p) {
  assume_equalities();
  add_loops(block, {});
}

RangeProver::RangeProver(const Program& p) : p_(p) {
  assume_equalities();
  std::set<int> seen, shared;
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      if (!seen.insert(l.var).second) shared.insert(l.var);
  for (auto& b : p.blocks) add_loops(b, shared);
}

void RangeProver::add_loops(const Block& block, const std::set<int>& unknown) {
  for (auto& l : block.loops) {
    if (unknown.count(l.var)) continue;
    vars_[l.var] = {bounds(l.start).lo, plus(bounds(l.end).hi, constant(1), -1)};
  }
}

bool RangeProver::nonnegative(const Index& e) const {
  return proven_le(constant(0), bounds(e).lo);
}

bool RangeProver::below(const Index& a, const RangeProver& other, const Index& b) const {
  Form lo = other.bounds(b).lo;
  for (auto& [k, v] : other.nonneg_) nonneg_[k] = nonneg_[k] || v;  // facts of var-free atoms
  return proven_le(plus(bounds(a).hi, constant(1), 1), lo);
}

RangeProver::Form RangeProver::constant(int64_t c) {
  Form f;
  f.known = true;
  f.c = c;
  return f;
}

RangeProver::Form RangeProver::plus(const Form& a, const Form& b, int64_t sign) {
  Form r;
  if (!a.known || !b.known) return r;
  r = a;
  int64_t t;
  if (__builtin_mul_overflow(b.c, sign, &t) || __builtin_add_overflow(r.c, t, &r.c)) return Form{};
  for (auto& [k, v] : b.terms) {
    if (__builtin_mul_overflow(v, sign, &t) || __builtin_add_overflow(r.terms[k], t, &r.terms[k]))
      return Form{};
    if (r.terms[k] == 0) r.terms.erase(k);
  }
  return r;
}

RangeProver::Form RangeProver::scale(const Form& a, int64_t k) {
  if (!a.known) return a;
  Form r;
  r.known = true;
  if (__builtin_mul_overflow(a.c, k, &r.c)) return Form{};
  for (auto& [n, v] : a.terms) {
    if (__builtin_mul_overflow(v, k, &r.terms[n])) return Form{};
    if (r.terms[n] == 0) r.terms.erase(n);
  }
  return r;
}

RangeProver::Form RangeProver::atom(const Index& e, bool nonneg) const {
  Form f = constant(0);
  std::string k = key(e);
  for (size_t hops = 0; hops < alias_.size(); ++hops) {
    auto it = alias_.find(k);
    if (it == alias_.end()) break;
    k = it->second;
  }
  f.terms[k] = 1;
  nonneg_[k] = nonneg_[k] || nonneg;
  return f;
}

bool RangeProver::proven_le(const Form& a, const Form& b) const {
  Form d = plus(b, a, -1);
  if (!d.known || d.c < 0) return false;
  for (auto& [k, v] : d.terms)
    if (v < 0 || !nonneg_[k]) return false;
  return true;
}

RangeProver::Bounds RangeProver::bounds(const Index& e) const {
  Bounds r = operand_bounds(e);
  if (!is_fixed(e) || (r.lo.known && r.hi.known)) return r;
  Form self = atom(e, proven_le(constant(0), r.lo));
  return {self, self};
}

RangeProver::Bounds RangeProver::operand_bounds(const Index& e) const {
  auto exact = [](Form f) { return Bounds{f, f}; };
  auto is_exact_const = [](const Bounds& b, int64_t* v) {
    *v = b.lo.c;
    return b.lo.known && b.hi.known && b.lo.terms.empty() && b.hi.terms.empty() && b.lo.c == b.hi.c;
  };
  switch (e->kind) {
    case IndexKind::Const:
      return exact(constant(e->constant));
    case IndexKind::Var: {
      auto it = vars_.find(e->var);
      return it == vars_.end() ? Bounds{} : it->second;
    }
    case IndexKind::Dim:
      if (auto it = defined_.find(key(e)); it != defined_.end()) return bounds(it->second);
      return exact(atom(e, true));
    case IndexKind::Param:  // a fixed parameter's value is checked before anything runs
      if (auto v = fixed_param(p_, e->name)) return exact(constant(*v));
      return exact(atom(e, false));
    case IndexKind::Data:
      return Bounds{};
    case IndexKind::Neg: {
      Bounds a = bounds(e->a);
      return {scale(a.hi, -1), scale(a.lo, -1)};
    }
    default:
      break;
  }
  Bounds a = bounds(e->a), b = bounds(e->b);
  auto nonneg = [&](const Bounds& x) { return proven_le(constant(0), x.lo); };
  int64_t k = 0;
  switch (e->kind) {
    case IndexKind::Add:
      return {plus(a.lo, b.lo, 1), plus(a.hi, b.hi, 1)};
    case IndexKind::Sub:
      return {plus(a.lo, b.hi, -1), plus(a.hi, b.lo, -1)};
    case IndexKind::Mul:
      if (is_exact_const(b, &k) || (is_exact_const(a, &k) && (std::swap(a, b), true))) {
        if (k >= 0) return {scale(a.lo, k), scale(a.hi, k)};
        return {scale(a.hi, k), scale(a.lo, k)};
      }
      if (nonneg(a) && nonneg(b)) return is_fixed(e) ? exact(atom(e, true)) : Bounds{constant(0)};
      break;
    case IndexKind::Div:
      if (is_exact_const(b, &k) && k > 0) {
        // A bound whose atoms' coefficients are multiples of k divides as its constant does
        // (floor division is monotone: the bounds stay bounds).
        auto divided = [&](Form f) {
          for (auto& [n, v] : f.terms) {
            f.known &= v % k == 0;
            v /= k;
          }
          f.c = floor_div(f.c, k);
          return f;
        };
        Bounds r = {divided(a.lo), divided(a.hi)};
        if (!r.lo.known && nonneg(a)) r.lo = constant(0);
        return r;
      }
      break;
    case IndexKind::Mod:
      if (is_exact_const(b, &k) && k > 0) return {constant(0), constant(k - 1)};
      if (e->b->kind == IndexKind::Dim)
        return {constant(0), plus(atom(e->b, true), constant(1), -1)};
      break;
    case IndexKind::Min: {
      if (proven_le(a.hi, b.lo) || proven_le(b.hi, a.lo)) return proven_le(a.hi, b.lo) ? a : b;
      Bounds r;
      if (proven_le(a.lo, b.lo))
        r.lo = a.lo;
      else if (proven_le(b.lo, a.lo))
        r.lo = b.lo;
      else if (nonneg(a) && nonneg(b))
        r.lo = constant(0);
      r.hi = a.hi.known ? a.hi : b.hi;
      return r;
    }
    case IndexKind::Max: {
      if (proven_le(b.hi, a.lo) || proven_le(a.hi, b.lo)) return proven_le(b.hi, a.lo) ? a : b;
      Bounds r;
      if (a.hi.known && b.hi.known && a.hi.terms.empty() && b.hi.terms.empty())
        r.hi = constant(std::max(a.hi.c, b.hi.c));
      // The larger lower bound where they compare, else one that is non-negative.
      bool second = proven_le(a.lo, b.lo) || (!proven_le(b.lo, a.lo) && !nonneg(a) && nonneg(b));
      r.lo = second || !a.lo.known ? b.lo : a.lo;
      return r;
    }
    default:
      break;
  }
  return Bounds{};
}

bool RangeProver::in_range(int tensor, const std::vector<Index>& index) const {
  const auto& shape = p_.tensors[tensor].shape;
  if (index.size() != shape.size()) return false;
  for (size_t a = 0; a < index.size(); ++a) {
    if (!nonnegative(index[a]) || !below(index[a], *this, shape[a])) return false;
  }
  return true;
}

bool RangeProver::out_of_range(int tensor, const std::vector<Index>& index) const {
  const auto& shape = p_.tensors[tensor].shape;
  for (size_t a = 0; a < index.size() && a < shape.size(); ++a) {
    Bounds e = bounds(index[a]), size = bounds(shape[a]);
    if (proven_le(plus(e.hi, constant(1), 1), constant(0)) || proven_le(size.hi, e.lo)) return true;
  }
  return false;
}

}  // namespace uops::ir
