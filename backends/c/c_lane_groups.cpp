#include "backends/c/c_lane_groups.h"

#include <set>

#include "ir/range_prover.h"
#include "uops/ir/analysis.h"
#include "uops/parser/index_expr.h"

namespace uops::cgen {

using namespace ir;

namespace {

bool groups(const Block& b, size_t k) {
  const Loop& l = b.loops[k];
  if (k + 1 >= b.loops.size() || l.carried.empty() || l.plan.threads != LoopPlan::Threads::none ||
      !stores_stay_apart(l))
    return false;
  std::set<int> written, owned;
  for (auto& s : l.stmts) {
    if (s.kind == StmtKind::reduce || may_raise(s) || may_raise(s.value)) return false;
    written.insert(s.tensor);
  }
  for (auto& c : l.carried) owned.insert(c.id);
  for (size_t o = 0; o < b.loops.size(); ++o) {
    const LoopPlan& plan = b.loops[o].plan;
    // Not a loop an outer one's `omp for collapse` takes in: those nest with nothing between.
    if (plan.tile || plan.tile_width || !plan.tile_corners.empty() ||
        (o < k && k < o + size_t(plan.collapse)))
      return false;
  }
  bool row = false;
  for (size_t i = k + 1; i < b.loops.size(); ++i) {
    const Loop& in = b.loops[i];
    if (!in.carried.empty() || uses_var(in.start, l.var) || uses_var(in.end, l.var) ||
        in.plan.threads != LoopPlan::Threads::none || !in.plan.prefetch.empty())
      return false;
    for (auto& s : in.stmts) {
      if (s.kind != StmtKind::reduce || !owned.count(s.carried) || may_raise(s) ||
          may_raise(s.value))
        return false;
      bool ok = true;
      for_each_load(s.value, [&](const ValueNode& n) {
        ok &= !written.count(n.tensor);
        if (!uses_var(n.index, l.var)) return;
        ok &= reads_row(n.index, l.var);
        row = true;
      });
      if (!ok) return false;
    }
  }
  return row;
}

// Every argmax or argmin position the loops inside k reduce to lies in [0, 2^24), where f32 holds
// each integer exactly: with fixed parameters, a pool's window of k * k.
bool narrow_positions(const Program& p, const Block& b, size_t k) {
  const RangeProver range(p, b);
  const Index limit = idx::constant(int64_t{1} << 24);
  for (size_t i = k + 1; i < b.loops.size(); ++i)
    for (auto& s : b.loops[i].stmts)
      if (is_arg_reduce(s.op) && !(range.nonnegative(s.arg) && range.below(s.arg, range, limit)))
        return false;
  return true;
}

}  // namespace

void plan_lane_groups(Program& p) {
  for (Block& b : p.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k) {
      if (!groups(b, k)) continue;
      b.loops[k].plan.lane_group = kLaneGroup;
      b.loops[k].plan.narrow_positions = narrow_positions(p, b, k);
      for (size_t i = k + 1; i < b.loops.size(); ++i) {
        LoopPlan& in = b.loops[i].plan;
        in.simd.clear();
        in.lanes = in.narrow_lanes = 0;
        in.narrow_upto = 0;
      }
      break;
    }
}

}  // namespace uops::cgen
