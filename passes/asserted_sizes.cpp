#include "uops/passes/asserted_sizes.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

using Replacements = std::vector<std::pair<Index, Index>>;

Index replace(const Index& e, const Replacements& with) {
  for (auto& [from, to] : with)
    if (equal(e, from)) return to;
  switch (e->kind) {
    case IndexKind::Const:
    case IndexKind::Var:
    case IndexKind::Dim:
    case IndexKind::Param:
      return e;
    case IndexKind::Data: {
      std::vector<Index> args;
      for (auto& a : e->args) args.push_back(replace(a, with));
      return idx::data(e->tensor, std::move(args));
    }
    case IndexKind::Neg:
      return idx::neg(replace(e->a, with));
    default:
      return idx::binary(e->kind, replace(e->a, with), replace(e->b, with));
  }
}

}  // namespace

Program use_asserted_sizes(Program p) {
  Replacements with;
  for (auto& eq : p.equalities) {
    if (may_raise(eq.a) && !may_raise(eq.b)) with.push_back({eq.a, eq.b});
    if (may_raise(eq.b) && !may_raise(eq.a)) with.push_back({eq.b, eq.a});
  }
  if (with.empty()) return p;
  auto equalities = std::move(p.equalities);
  p.equalities.clear();
  std::function<Index(const Index&)> index = [&](const Index& e) {
    return may_raise(e) ? replace(e, with) : e;
  };
  map_program(p, index, [&](const Value& v) { return rewrite(v, nullptr, index); });
  p.equalities = std::move(equalities);
  return p;
}

}  // namespace uops
