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
  int64_t cost = tiled ? kTileColumnCost : 1;  // of one iteration (parallel_loops.h)
  for (size_t k = depth; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    cost += kMathCallCost * vector_math_calls(l);
    int64_t e = 0;
    if (tiled && k + 1 == b.loops.size() && is_const(l.end, &e)) {
      // A register tile's columns, in vectors of kVectorBytes (threads.h says why).
      int64_t lanes = kVectorBytes / int64_t(dtype_size(p.tensors[l.stmts[0].tensor].dtype));
      work = idx::mul(work, idx::constant((e + lanes - 1) / lanes));
    } else if (!bounds_use_vars(l)) {
      work = idx::mul(work, idx::sub(l.end, l.start));
    } else if (Index e; int64_t c = one_tile_extent(l, &e)) {
      // [s, min(e, s + c)) with s >= 0 runs at most min(e, c): k = 128 in tiles of 512 is 128.
      work = idx::mul(work, uses_any_var(e) ? idx::constant(c) : idx::min(e, idx::constant(c)));
    }
  }
  return idx::mul(work, idx::constant(cost));
}

void plan_team(LoopPlan& plan, const Index& work, bool reports_errors) {
  using T = LoopPlan::Threads;
  int64_t c = 0;
  const bool known = is_const(work, &c);
  plan.threads = !known ? T::team_if : c < kParallelThreshold ? T::serial : T::team;
  plan.work = known ? nullptr : work;
  plan.reports_errors = plan.threads != T::serial && reports_errors;
}

bool block_may_raise(const Block& b) {
  bool raises = false;
  visit(b, [&](const Index& e) { raises |= may_raise(e); });
  return raises;
}

}  // namespace uops::passes
