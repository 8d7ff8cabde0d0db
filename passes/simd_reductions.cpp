#include "uops/passes/simd_reductions.h"

#include <map>

#include "ir/parallelism.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// The scalars innermost loop k of b may reduce in SIMD lanes, by id; empty when it may not.
std::vector<Carried> simd_reduction(const Block& b, size_t k) {
  const Loop& l = b.loops[k];
  if (k == 0 || k + 1 != b.loops.size() || !l.carried.empty() ||
      l.plan.threads != LoopPlan::Threads::none || !stores_stay_apart(l))
    return {};
  std::map<int, ReduceOp> reduced;
  for (auto& s : l.stmts) {
    if (may_raise(s.value)) return {};
    if (s.kind != StmtKind::reduce) continue;
    switch (s.op) {
      case ReduceOp::sum:
      case ReduceOp::mean:
      case ReduceOp::prod:
      case ReduceOp::max:
      case ReduceOp::min:
      case ReduceOp::argmax:
      case ReduceOp::argmin:
        reduced[s.carried] = s.op;
        break;
      default:
        return {};
    }
  }
  for (auto& s : l.stmts)
    for (auto& [c, op] : reduced)
      if (uses_carried(s.value, c) && !(s.kind == StmtKind::reduce && s.carried == c)) return {};
  std::vector<Carried> out;
  for (auto& [c, op] : reduced) out.push_back({c, op});
  return out;
}

// Innermost loop k of b runs as `omp simd` for its math calls: it runs more than once, reduces
// nothing, runs on one thread, its iterations keep to their own elements and nothing in it may
// raise.
bool simd_math(const Block& b, size_t k) {
  const Loop& l = b.loops[k];
  if (k + 1 != b.loops.size() || runs_once(l) || !l.carried.empty() || !l.plan.simd.empty() ||
      l.plan.threads != LoopPlan::Threads::none || !vector_math_calls(l) || !stores_stay_apart(l))
    return false;
  for (auto& s : l.stmts)
    if (s.kind == StmtKind::reduce || may_raise(s)) return false;
  return true;
}

}  // namespace

Program plan_simd_math(Program p) {
  for (Block& b : p.blocks) {
    size_t k = b.loops.size() - 1;
    b.loops[k].plan.simd_math = simd_math(b, k);
  }
  return p;
}

Program plan_simd_reductions(Program p) {
  for (Block& b : p.blocks) {
    size_t k = b.loops.size() - 1;
    LoopPlan& plan = b.loops[k].plan;
    plan.simd = simd_reduction(b, k);
    size_t sums = 0;
    bool arg = false;
    for (const Carried& c : plan.simd) {
      sums += c.op == ReduceOp::sum;
      arg |= is_arg_reduce(c.op);
    }
    plan.lanes = arg ? 16 : 0;  // no `omp simd` clause reduces an argmax
    if (sums >= kNarrowScalars && !arg) {
      plan.narrow_lanes = kNarrowLanes;
      plan.narrow_upto = kNarrowUpto;
    }
  }
  return p;
}

}  // namespace uops
