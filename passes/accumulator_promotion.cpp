#include "uops/passes/accumulator_promotion.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Statement s of innermost loop l accumulates into one element for the whole run of l, an
// element no other statement of l touches.
bool promotable(const Program& p, const Loop& l, size_t s) {
  const Stmt& st = l.stmts[s];
  if (st.kind != StmtKind::accumulate || p.tensors[st.tensor].dtype != p.value_type() ||
      may_raise(st))
    return false;
  if (st.op != ReduceOp::sum && st.op != ReduceOp::max && st.op != ReduceOp::min) return false;
  for (auto& e : st.index)
    if (uses_var(e, l.var) || uses_data(e)) return false;
  // Its own value reading the element would see it unchanged through the loop.
  for (size_t o = 0; o < l.stmts.size(); ++o)
    for (auto& a : stmt_accesses(l.stmts[o], 0, int(o)))
      if (a.tensor == st.tensor && (o != s || !a.write)) return false;
  return true;
}

}  // namespace

Program promote_accumulators(Program p) {
  for (Block& b : p.blocks) {
    if (b.loops.size() < 2) continue;
    Loop& inner = b.loops.back();
    Loop& outer = b.loops[b.loops.size() - 2];
    std::vector<Stmt> stores;
    for (size_t s = 0; s < inner.stmts.size(); ++s) {
      if (!promotable(p, inner, s)) continue;
      Stmt& st = inner.stmts[s];
      int c = p.num_carried++;
      outer.carried.push_back({c, st.op});
      Stmt store = st;
      store.value = val::carried(c);
      stores.push_back(std::move(store));
      st.kind = StmtKind::reduce;
      st.carried = c;
      st.tensor = -1;
      st.index.clear();
      st.checked = true;
    }
    outer.stmts.insert(outer.stmts.begin(), stores.begin(), stores.end());
  }
  return p;
}

}  // namespace uops
