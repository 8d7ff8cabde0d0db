#include "uops/passes/empty_range_tests.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Loop l's range could be empty for a non-empty tensor, and testing it is safe in front of the
// block: bounds free of loop variables that cannot raise.
bool worth_testing(const Loop& l) {
  if (bounds_use_vars(l) || may_raise(l.start) || may_raise(l.end)) return false;
  int64_t s = 0, e = 0;
  if (is_const(l.start, &s) && (is_const(l.end, &e) || (s == 0 && l.end->kind == IndexKind::Dim)))
    return false;
  return true;
}

// Where to test which loops' ranges for emptiness, from loop `from` on: the loop in front of
// which the test sits and the loops tested; {0, {}} when there is no test worth making.
std::pair<size_t, std::vector<int>> empty_tests(const Block& b, size_t from) {
  size_t n = b.loops.size();
  for (size_t k = 0; k + 1 < n; ++k)
    if (b.loops[k].is_pivot()) return {0, {}};
  // Not inside a tile: that would skip its store (passes::stores_when_run); but for a tile's
  // columns in rows of lanes (LoopPlan::tile_width), which store nothing where they are empty.
  size_t last = n;
  for (size_t k = 0; k < n && last == n; ++k)
    if (b.loops[k].plan.tile) last = k + 1;
  size_t deepest = b.loops[n - 1].plan.tile_width && worth_testing(b.loops[n - 1]) ? n - 1 : n;
  for (size_t m = last; m-- > from && deepest == n;)
    if (worth_testing(b.loops[m])) deepest = m;
  if (deepest == n) return {0, {}};
  size_t at = deepest;
  while (at > from && !may_raise(b.loops[at - 1].start) && !may_raise(b.loops[at - 1].end)) --at;
  // Not between the loops of a collapsed group (they must nest perfectly).
  for (size_t k = 0; k < at; ++k)
    if (k + size_t(b.loops[k].plan.collapse) > at) at = k + size_t(b.loops[k].plan.collapse);
  bool team = false;
  for (size_t k = at; k < n; ++k) team |= b.loops[k].plan.starts_team();
  std::vector<int> tested;
  for (size_t m = at; m <= deepest; ++m)
    if (worth_testing(b.loops[m])) tested.push_back(int(m));
  // A test of loop `at` alone, in front of it, is the loop's own unless it keeps a team out.
  if (tested.empty() || (tested == std::vector<int>{int(at)} && !team)) return {0, {}};
  return {at, tested};
}

}  // namespace

Program plan_empty_range_tests(Program p) {
  for (size_t bi = 0, run_end = 0; bi < p.blocks.size(); ++bi) {
    Block& b = p.blocks[bi];
    if (b.loops[0].plan.row_local) run_end = bi + size_t(b.loops[0].plan.row_local) + 1;
    auto [at, tested] = empty_tests(b, bi < run_end ? 1 : 0);
    b.loops[at].plan.empty_tests = std::move(tested);
  }
  return p;
}

}  // namespace uops
