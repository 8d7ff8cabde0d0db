#include "uops/passes/asserted_sizes.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;
Program use_asserted_sizes(Program p) {
  std::vector<std::pair<Index, Index>> with;
  for (auto& eq : p.equalities) {
    if (may_raise(eq.a) && !may_raise(eq.b)) with.push_back({eq.a, eq.b});
    if (may_raise(eq.b) && !may_raise(eq.a)) with.push_back({eq.b, eq.a});
  }
  if (with.empty()) return p;
  auto equalities = std::move(p.equalities);
  p.equalities.clear();
  std::function<Index(const Index&)> index = [&](const Index& e) {
    for (auto& [from, to] : with)
      if (equal(e, from)) return to;
    return e;
  };
  map_program(p, index, [&](const Value& v) { return rewrite(v, nullptr, index); });
  p.equalities = std::move(equalities);
  return p;
}

}  // namespace uops
