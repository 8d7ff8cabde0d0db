#include "backends/c/c_team_plan.h"

#include "ir/parallelism.h"
#include "ir/range_prover.h"
#include "uops/error.h"
#include "uops/ir/analysis.h"

namespace uops::cgen {

using namespace ir;

namespace {

// The teams b starts per call: one, two for a team per iteration of its outer loops (or more),
// none. With thread copies, where its parallel loop's team runs (else the copies' one). -1 where
// that loop's team could not be a share of the kernel's: statements in the loops outside it.
int team_starts(const Block& b) {
  size_t k = parallel_loop(b);
  if (k == b.loops.size() || !b.loops[k].plan.starts_team())
    return b.loops[0].plan.thread_copies.empty() ? 0 : 1;
  for (size_t o = 0; o < k; ++o)
    if (b.loops[o].is_pivot()) return -1;
  return k > 0 && !b.loops[k].plan.nowait ? 2 : 1;
}

// Block b (a row-local run's first block: `run`) as a share of an enclosing team.
void share(Block& b, bool run) {
  size_t k = parallel_loop(b);
  // The outer loop on thread copies: where they would have run (the works of both loops, kept
  // for that test), a share of the team, whose threads wait before it (the sum adds into every
  // element of the tensors) and at its end (the sums are complete only then).
  if (LoopPlan& outer = b.loops[0].plan; !outer.thread_copies.empty()) {
    outer.threads = LoopPlan::Threads::worksharing;
    outer.reports_errors = false;
  }
  if (k == b.loops.size()) {
    b.loops[0].plan.single = true;
    return;
  }
  bool shared = !b.loops[0].plan.single;
  for (size_t o = 0; o < k; ++o) shared &= !b.loops[o].is_pivot();
  LoopPlan& plan = b.loops[k].plan;
  plan.threads = shared ? LoopPlan::Threads::worksharing : LoopPlan::Threads::serial;
  plan.reports_errors = false;  // the kernel's team reduces the error bits
  // A run's rows stay with their threads: each runs every block of the run for its rows.
  plan.nowait = shared && (run || stays_with_threads(b, k));
  b.loops[0].plan.single = !shared;
}

// Access x (under ranges px) and y (under py) touch different elements, or only read.
bool apart(const Access& x, const RangeProver& px, const Access& y, const RangeProver& py) {
  if (x.tensor != y.tensor || !(x.write || y.write)) return true;
  for (size_t a = 0; a < x.index.size() && a < y.index.size(); ++a)
    if (px.below(x.index[a], py, y.index[a]) || py.below(y.index[a], px, x.index[a])) return true;
  return false;
}

}  // namespace

size_t parallel_loop(const Block& b) {
  size_t k = b.loops[0].plan.thread_copies.empty() ? 0 : 1;
  while (k < b.loops.size() && b.loops[k].plan.threads == LoopPlan::Threads::none) ++k;
  return k;
}

TeamPlan plan_teams(Program& p, bool worksharing) {
  // The units the printer writes: a block, or a row-local run of blocks.
  std::vector<std::pair<size_t, size_t>> units;
  for (size_t bi = 0; bi < p.blocks.size();) {
    size_t end = bi + 1 + size_t(p.blocks[bi].loops[0].plan.row_local);
    units.push_back({bi, end});
    bi = end;
  }
  TeamPlan plan;
  if (!worksharing) {
    int starts = 0;
    for (auto [first, end] : units) {
      int n = team_starts(p.blocks[first]);
      if (n < 0) return plan;
      starts += n;
    }
    if (starts == 0) return plan;
    plan.one_team = true;
    for (auto [first, end] : units)
      for (const Loop& l : p.blocks[first].loops) {
        if (!l.plan.starts_team()) continue;
        if (l.plan.work) plan.work.push_back(l.plan.work);
        plan.always |= !l.plan.work;
      }
  }
  for (auto [first, end] : units) share(p.blocks[first], end > first + 1);

  // Each block's accesses and the ranges of its loops.
  std::vector<std::vector<Access>> accesses;
  std::vector<RangeProver> ranges;
  ranges.reserve(p.blocks.size());
  for (const Block& b : p.blocks) {
    accesses.push_back(block_accesses(b));
    ranges.emplace_back(p, b);
  }
  // Blocks i and j touch one element that one of them writes.
  auto touch = [&](size_t i, size_t j) {
    for (const Access& x : accesses[i])
      for (const Access& y : accesses[j])
        if (!apart(x, ranges[i], y, ranges[j])) return true;
    return false;
  };
  auto units_touch = [&](std::pair<size_t, size_t> a, std::pair<size_t, size_t> b) {
    for (size_t i = a.first; i < a.second; ++i)
      for (size_t j = b.first; j < b.second; ++j)
        if (touch(i, j)) return true;
    return false;
  };
  // The blocks since the threads last waited.
  std::vector<size_t> since;
  plan.waits.assign(p.blocks.size(), false);
  for (auto [first, end] : units) {
    bool wait = false;
    for (size_t i : since)
      for (size_t j = first; j < end && !wait; ++j) wait = touch(i, j);
    if (wait) since.clear();
    plan.waits[first] = wait;
    for (size_t j = first; j < end; ++j) since.push_back(j);
  }
  // Each pair of units that touch, at the first wait after the earlier: there is one by the
  // time the later runs, as the placement above waits at the latest in front of it.
  plan.orders.assign(p.blocks.size(), {});
  for (size_t a = 0; a < units.size(); ++a)
    for (size_t b = a + 1; b < units.size(); ++b) {
      if (!units_touch(units[a], units[b])) continue;
      size_t w = a + 1;
      while (w < b && !plan.waits[units[w].first]) ++w;
      UOPS_ASSERT(plan.waits[units[w].first], "no wait between two blocks that touch one element");
      plan.orders[units[w].first].push_back({units[a].first, units[b].first});
    }
  return plan;
}

}  // namespace uops::cgen
