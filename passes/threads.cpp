#include "passes/threads.h"

#include "passes/tiling.h"
#include "uops/ir/analysis.h"
#include "uops/passes/parallel_loops.h"

namespace uops::passes {

Index work_from(const Program& p, const Block& b, size_t depth) {
  bool tiled = false;
  for (size_t k = 0; k < b.loops.size() && !tiled; ++k) {
    size_t first = tile_loop(b, k);
    tiled = first && first + 2 <= b.loops.size();
  }
  Index work = idx::constant(1);
  for (size_t k = depth; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    int64_t e = 0;
    if (tiled && k + 1 == b.loops.size() && is_const(l.end, &e)) {
      // A register tile's columns, in vectors of kVectorBytes (threads.h says why).
      int64_t lanes = kVectorBytes / int64_t(dtype_size(p.tensors[l.stmts[0].tensor].dtype));
      work = idx::mul(work, idx::constant((e + lanes - 1) / lanes));
    } else if (!bounds_use_vars(l)) {
      work = idx::mul(work, idx::sub(l.end, l.start));
    } else if (int64_t c = one_tile_extent(l)) {
      work = idx::mul(work, idx::constant(c));
    }
  }
  return work;
}

void plan_team(LoopPlan& plan, const Index& work, bool reports_errors) {
  int64_t c = 0;
  plan.work = nullptr;
  plan.reports_errors = false;
  if (is_const(work, &c)) {
    plan.threads = c < kParallelThreshold ? LoopPlan::Threads::serial : LoopPlan::Threads::team;
  } else {
    plan.threads = LoopPlan::Threads::team_if;
    plan.work = work;
  }
  if (plan.threads != LoopPlan::Threads::serial) plan.reports_errors = reports_errors;
}

bool block_may_raise(const Block& b) {
  bool raises = false;
  visit(b, [&](const Index& e) { raises |= may_raise(e); });
  return raises;
}

}  // namespace uops::passes
