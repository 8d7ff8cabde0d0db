// The C backend's team plan, decided on the planned program before printing (as kernel_plan is
// for CUDA): which kernels run all their blocks in one team of threads, and where that team's
// threads wait for each other.
//
// A kernel whose blocks would start a team (parallel_loops.h: a team per block, or per iteration
// of a block's outer loops) runs them all in one team instead: under a passive wait policy a
// team's start costs 80-100 us, a barrier 40 us (docs/cpu-kernels.md, "A team per kernel"); and
// the one team's work is a function the caller runs alone where the team would not start, which
// saves even a one-team kernel libgomp's futex wake of an `omp parallel` whose `if` fails. Not
// where a block's team runs a loop inside others that hold statements (every thread would run
// those). The team starts where one of the blocks' own teams would have. Each block's
// parallel loop then takes a share of it (`omp for`); a block with none, or with statements in the
// loops outside it, runs on one of its threads (`omp single`). No thread waits at the end of a
// block's loop whose iterations stay with their threads (ir::stays_with_threads; a block's outer
// loop always): the threads wait in front of a block only where it touches an element the blocks
// since the last wait write, or writes one they touch (TeamPlan::waits). Two accesses touch
// different elements where, on some axis, every index of one lies below every index of the
// other over their blocks' loop ranges (ir::RangeProver::below): the tiles a tiling splits a
// block into, and the rows and columns it leaves over. Worksharing functions (c_emitter.h),
// called by every thread of an enclosing team, wait by the same rule. A block on thread copies
// (LoopPlan::thread_copies) sums them in a share of the team where they would have run, its
// threads waiting before it (the sum adds into every element of the tensors) and at its end (the
// sums are complete only then). A wait keeps in order the pairs of blocks it separates that touch
// one element (TeamPlan::orders: each pair at the first wait after its earlier block), so the
// threads need wait only where both blocks of one of its pairs may run (c_emitter.h prints that
// test, which reads sizes, parameters and `threads` only: every thread takes the same branch; an
// earlier block on thread copies counts only where it runs without them, as their reduction
// ends in a wait of its own).
// The tiles a tiling leaves over, the zeros a tile's thread copies would sum into and the
// alternatives of a reduction tiling are blocks whose loops are empty at most sizes: a barrier
// with nothing to wait for cost a two-thread kernel a sleep and a wake under a passive wait
// policy (docs/cpu-kernels.md, "Waits where blocks run"). Changes no result.
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops::cgen {

struct TeamPlan {
  bool one_team = false;        // the kernel's blocks run in one team
  bool always = false;          // ... which always starts,
  std::vector<ir::Index> work;  // else when one of these reaches kParallelThreshold
  // Per block: the team's threads wait for each other in front of it (in one team, or in a
  // worksharing function; the first block of a row-local run for the run).
  std::vector<bool> waits;
  // Per block with a wait: the pairs of units (a block, or a row-local run, by its first block)
  // that touch one element and that this wait is the first to separate.
  std::vector<std::vector<std::pair<size_t, size_t>>> orders;
};

// The loop of b whose plan runs its threads (its first with a thread plan, but for the outer
// loop's thread copies); b.loops.size() where none does.
size_t parallel_loop(const ir::Block& b);

// Plans `p`, planned by plan_cpu for `worksharing` or not, in place.
TeamPlan plan_teams(ir::Program& p, bool worksharing);

}  // namespace uops::cgen
