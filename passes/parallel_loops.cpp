#include "uops/passes/parallel_loops.h"

#include "ir/parallelism.h"
#include "passes/threads.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// The parallel loop of b and how many loops it collapses, or {n, 0} when it has none.
std::pair<size_t, int> choose(const Program& p, const Block& b) {
  auto par = loop_parallelism(p, b);
  for (size_t k = 0; k < b.loops.size(); ++k) {
    if (!par[k].exclusive || runs_once(b.loops[k])) continue;
    if (bounds_use_vars(b.loops[k])) break;
    size_t next = k + 1;
    bool collapse = next + 1 < b.loops.size() && par[next].exclusive && !b.loops[k].is_pivot() &&
                    !bounds_use_vars(b.loops[next]);
    return {k, collapse ? 2 : 1};
  }
  return {b.loops.size(), 0};
}

}  // namespace

Program plan_parallel_loops(Program p, bool worksharing) {
  for (Block& b : p.blocks) {
    auto [depth, collapse] = choose(p, b);
    if (collapse == 0) {
      b.loops[0].plan.single = worksharing;
      continue;
    }
    LoopPlan& plan = b.loops[depth].plan;
    plan.collapse = collapse;
    if (!worksharing) {
      passes::plan_team(plan, passes::work_from(b, depth), passes::block_may_raise(b));
      continue;
    }
    // Every thread of the team runs the loops outside the parallel one.
    bool shared = true;
    for (size_t k = 0; k < depth; ++k) shared &= !b.loops[k].is_pivot();
    plan.threads = shared ? LoopPlan::Threads::worksharing : LoopPlan::Threads::serial;
    b.loops[0].plan.single = !shared;
  }
  return p;
}

}  // namespace uops
