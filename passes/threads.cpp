#include "passes/threads.h"

#include "uops/ir/analysis.h"
#include "uops/passes/parallel_loops.h"

namespace uops::passes {

Index work_from(const Block& b, size_t depth) {
  Index work = idx::constant(1);
  for (size_t k = depth; k < b.loops.size(); ++k)
    if (!bounds_use_vars(b.loops[k]))
      work = idx::mul(work, idx::sub(b.loops[k].end, b.loops[k].start));
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
