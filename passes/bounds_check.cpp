#include "uops/passes/bounds_check.h"

#include "ir/range_prover.h"

namespace uops {

using namespace ir;

Program eliminate_bounds_checks(Program p) {
  for (auto& b : p.blocks) {
    RangeProver prover(p, b);
    auto load = [&](const Value& v) -> Value {
      if (v->kind != ValueKind::Load) return nullptr;
      if (prover.out_of_range(v->tensor, v->index)) {
        bool safe = true;
        for (auto& e : v->index) safe = safe && !may_raise(e);
        if (safe) return val::constant(v->fill);
      }
      bool in = prover.in_range(v->tensor, v->index);
      return val::load(v->tensor, v->index, v->fill, v->checked && !in);
    };
    for (auto& l : b.loops)
      for (auto& s : l.stmts) {
        s.value = rewrite(s.value, load);
        if (s.kind != StmtKind::reduce && prover.in_range(s.tensor, s.index)) s.checked = false;
      }
  }
  return p;
}

}  // namespace uops
