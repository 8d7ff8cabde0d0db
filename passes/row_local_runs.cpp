#include "uops/passes/row_local_runs.h"

#include "ir/parallelism.h"
#include "passes/threads.h"

namespace uops {

using namespace ir;

namespace {

// The end of the run of blocks from `first` that share their outer loop, each with that loop as
// its parallel one; first + 1 when none do.
size_t run_end(const Program& p, size_t first) {
  std::vector<const Block*> run;
  size_t end = first;
  for (; end < p.blocks.size(); ++end) {
    const Block& b = p.blocks[end];
    run.push_back(&b);
    if (b.loops[0].plan.threads == LoopPlan::Threads::none || !share_outer_loop(run)) break;
  }
  return std::max(end, first + 1);
}

}  // namespace

Program plan_row_local_runs(Program p, int vector_bytes) {
  for (size_t first = 0; first < p.blocks.size();) {
    size_t end = run_end(p, first);
    if (end > first + 1) {
      Index work = idx::constant(0);
      bool raises = false;
      for (size_t bi = first; bi < end; ++bi) {
        Block& b = p.blocks[bi];
        work = idx::add(work, passes::work_from(p, b, 0));
        raises |= passes::block_may_raise(b);
        b.loops[0].plan = LoopPlan{};
        LoopPlan& in = b.loops.back().plan;  // one or two scalars, no argmax, no math (.h)
        if (bi > first && !in.lanes && !in.simd.empty() && in.simd.size() <= 2 &&
            !calls_vector_math(b.loops.back()))
          in.lanes = 4 * vector_bytes / int(dtype_size(p.value_type()));
      }
      LoopPlan& plan = p.blocks[first].loops[0].plan;
      plan.row_local = int(end - first - 1);
      passes::plan_team(plan, work, raises);
    }
    first = end;
  }
  return p;
}

}  // namespace uops
