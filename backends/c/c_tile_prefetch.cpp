#include "backends/c/c_tile_prefetch.h"

#include "uops/ir/analysis.h"
#include "uops/ir/value_expr.h"
#include "uops/parser/index_expr.h"

namespace uops::cgen {

using namespace ir;

void plan_tile_prefetch(Program& p) {
  for (Block& b : p.blocks) {
    const size_t n = b.loops.size();
    size_t k = 0;
    while (k < n && !b.loops[k].plan.tile) ++k;
    if (k == n || b.loops.back().stmts.empty()) continue;
    const size_t first = n - size_t(b.loops[k].plan.tile);  // the tile's first loop
    const Loop& step = b.loops[first - 1];  // loop k or one inside it (register_tiles.h)
    if (step.plan.lanes || step.plan.lane_group) continue;
    std::vector<std::pair<int, std::vector<Index>>>& fetch = b.loops[k].plan.prefetch;
    auto ahead = [&](const Index& e) {
      return rewrite(e, [&](const Index& x) -> Index {
        if (x->kind != IndexKind::Var) return nullptr;
        if (x->var == step.var)
          return idx::add(idx::var(step.var), idx::constant(kTilePrefetchSteps));
        for (size_t t = first; t < n; ++t)
          if (x->var == b.loops[t].var) return b.loops[t].start;
        return nullptr;
      });
    };
    for (const Stmt& s : b.loops.back().stmts)
      for_each_load(s.value, [&](const ValueNode& load) {
        const std::vector<Index>& index = load.index;
        if (index.empty() || load.tensor == s.tensor || uses_var(index, b.loops.back().var) ||
            uses_var(index.back(), step.var) || !uses_var(index, step.var))
          return;
        for (const Index& e : index)
          if (uses_data(e) || may_raise(e)) return;
        std::vector<Index> at;
        for (const Index& e : index) at.push_back(ahead(e));
        for (auto& [t, other] : fetch)
          if (t == load.tensor && same_index(other, at)) return;
        fetch.emplace_back(load.tensor, std::move(at));
      });
  }
}

}  // namespace uops::cgen
