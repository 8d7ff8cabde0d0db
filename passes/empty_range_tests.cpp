#include "uops/passes/empty_range_tests.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Where to test which loop's range for emptiness, writing from loop `from`: the deepest loop
// over a tail [a, b) with bounds that use no loop variables and cannot raise, tested before the
// outermost loop from which no loop bound up to it can raise (skipping those loops skips nothing
// observable, as no statement sits outside the innermost loop). {0, 0} when there is none.
std::pair<size_t, size_t> empty_test(const Block& b, size_t from) {
  size_t n = b.loops.size();
  for (size_t k = 0; k + 1 < n; ++k)
    if (b.loops[k].is_pivot()) return {0, 0};
  for (size_t m = n; m-- > from + 1;) {
    const Loop& l = b.loops[m];
    // [0, n) is empty only for an empty tensor: the tails [a, n) are what is worth testing.
    int64_t s = 0;
    if ((is_const(l.start, &s) && s == 0) || bounds_use_vars(l) || may_raise(l.start) ||
        may_raise(l.end))
      continue;
    size_t at = m;
    while (at > from && !may_raise(b.loops[at - 1].start) && !may_raise(b.loops[at - 1].end)) --at;
    if (at < m) return {at, m};
  }
  return {0, 0};
}

}  // namespace

Program plan_empty_range_tests(Program p) {
  for (size_t bi = 0, run_end = 0; bi < p.blocks.size(); ++bi) {
    Block& b = p.blocks[bi];
    // No further out than inside the parallel loops or a row-local run's shared loop.
    size_t from = 0;
    for (size_t k = 0; k < b.loops.size() && !from; ++k)
      if (b.loops[k].plan.threads != LoopPlan::Threads::none)
        from = k + size_t(b.loops[k].plan.collapse);
    if (b.loops[0].plan.row_local) run_end = bi + size_t(b.loops[0].plan.row_local) + 1;
    if (bi < run_end) from = 1;
    auto [at, m] = empty_test(b, from);
    if (m > 0) b.loops[at].plan.empty_test = int(m);
  }
  return p;
}

}  // namespace uops
