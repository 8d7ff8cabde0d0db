#include "uops/passes/parallel_loops.h"

#include <set>

#include "ir/parallelism.h"
#include "passes/threads.h"
#include "passes/tiling.h"
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
    // Past two loops, only behind two loops over whole register tiles: those hold few iterations
    // (64 channels make one tile), each a tile's whole work, and the loops after them give the
    // team its share. Elsewhere each further loop costs more than it balances (batched matmul
    // collapsed by 3 over its batch, column and row tiles ran 4% slower at one thread).
    int collapse = 1;
    while (joins_collapse(b, par, k + size_t(collapse)) &&
           (collapse < 2 ||
            (passes::over_whole_tiles(b.loops[k]) && passes::over_whole_tiles(b.loops[k + 1]))))
      ++collapse;
    return {k, collapse};
  }
  return {b.loops.size(), 0};
}

// The tensors whose sums collide across b's outer loop when thread copies can take them: the
// loop runs more than once, its bounds use no loop variable, and its iterations collide only in
// sums into floating-point tensors the block never reads or assigns.
std::vector<int> copied_tensors(const Program& p, const Block& b) {
  const Loop& outer = b.loops[0];
  if (runs_once(outer) || bounds_use_vars(outer) || !loop_parallelism(p, b)[0].with_atomics)
    return {};
  std::set<int> colliding = colliding_tensors(p, b, 1);
  for (auto& a : block_accesses(b)) {
    if (!colliding.count(a.tensor) || a.stmt < 0) continue;
    const Stmt& s = b.loops[size_t(a.loop)].stmts[size_t(a.stmt)];
    if (s.op != ReduceOp::sum || p.tensors[a.tensor].dtype == DType::i32) return {};
  }
  return {colliding.begin(), colliding.end()};
}

}  // namespace

Program plan_parallel_loops(Program p, bool worksharing, bool reassociate) {
  for (Block& b : p.blocks) {
    auto [depth, collapse] = choose(p, b);
    if (collapse == 0) {
      b.loops[0].plan.single = worksharing;
    } else if (!worksharing) {
      // A team runs where one run of the loop has the work for it, started once per block when
      // the loop's iterations stay with their threads.
      LoopPlan& plan = b.loops[depth].plan;
      plan.collapse = collapse;
      passes::plan_team(plan, passes::work_from(p, b, depth), passes::block_may_raise(b));
      plan.nowait =
          depth > 0 && plan.threads != LoopPlan::Threads::serial && stays_with_threads(b, depth);
    } else {
      // Every thread of the team runs the loops outside the parallel one.
      bool shared = true;
      for (size_t k = 0; k < depth; ++k) shared &= !b.loops[k].is_pivot();
      LoopPlan& plan = b.loops[depth].plan;
      plan.collapse = collapse;
      plan.threads = shared ? LoopPlan::Threads::worksharing : LoopPlan::Threads::serial;
      plan.nowait = shared && stays_with_threads(b, depth);
      b.loops[0].plan.single = !shared;
    }
    // Thread copies where the block's own parallel loop, if any, is an inner one that may run on
    // one thread (its team forked for each outer iteration, when it forks one at all).
    bool inner_team = collapse != 0 && b.loops[depth].plan.threads == LoopPlan::Threads::team;
    if (!reassociate || worksharing || depth == 0 || inner_team) continue;
    LoopPlan& outer = b.loops[0].plan;
    outer.thread_copies = copied_tensors(p, b);
    if (outer.thread_copies.empty()) continue;
    passes::plan_team(outer, passes::work_from(p, b, 0), passes::block_may_raise(b));
    if (outer.threads == LoopPlan::Threads::serial) outer = LoopPlan{};
  }
  return p;
}

}  // namespace uops
