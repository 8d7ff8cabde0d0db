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

// What block b's loop in lanes prefetches (LoopPlan::prefetch): every row that the run's first
// block f loads unchecked along its inner loop, at the shared loop's next iteration (its last, at
// the last). Only where both blocks are two loops deep and their inner ranges are equal, which
// over different variables means fixed: every element named is one f loads.
std::vector<std::pair<int, std::vector<Index>>> next_rows(const Block& f, const Block& b) {
  std::vector<std::pair<int, std::vector<Index>>> out;
  const Loop &fi = f.loops.back(), &bi = b.loops.back(), &outer = b.loops[0];
  if (f.loops.size() != 2 || b.loops.size() != 2 || !equal(fi.start, bi.start) ||
      !equal(fi.end, bi.end))
    return out;
  const Index one = idx::constant(1),
              next = idx::min(idx::add(idx::var(outer.var), one), idx::sub(outer.end, one));
  for (const Stmt& s : fi.stmts)
    for_each_load(s.value, [&](const ValueNode& n) {
      std::vector<int> vars;  // a row of f's inner loop that moves with the outer one
      for (const Index& e : n.index) collect_vars(e, vars);
      if (n.checked || vars.size() != 2 || !reads_row(n.index, fi.var) ||
          std::any_of(out.begin(), out.end(), [&](auto& o) { return o.first == n.tensor; }))
        return;
      out.emplace_back(n.tensor, std::vector<Index>{});
      for (const Index& e : n.index)
        out.back().second.push_back(rewrite(e, [&](const Index& x) -> Index {
          if (x->kind != IndexKind::Var) return nullptr;
          return x->var == fi.var ? idx::var(bi.var) : next;
        }));
    });
  return out;
}

}  // namespace

Program plan_row_local_runs(Program p, int vector_bytes) {
  for (size_t first = 0; first < p.blocks.size();) {
    size_t end = run_end(p, first);
    if (end > first + 1) {
      Index work = idx::constant(0);
      bool raises = false, prefetched = false;
      for (size_t bi = first; bi < end; ++bi) {
        Block& b = p.blocks[bi];
        work = idx::add(work, passes::work_from(p, b, 0));
        raises |= passes::block_may_raise(b);
        b.loops[0].plan = LoopPlan{};
        LoopPlan& in = b.loops.back().plan;  // one or two scalars, no argmax, no math (.h)
        if (bi > first && !in.lanes && !in.simd.empty() && in.simd.size() <= 2 &&
            !vector_math_calls(b.loops.back()))
          in.lanes = 4 * vector_bytes / int(dtype_size(p.value_type()));
        if (bi > first && in.lanes && !prefetched)
          prefetched = !(in.prefetch = next_rows(p.blocks[first], b)).empty();
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
