// parallel_loops (a C backend pass, docs/cpu-kernels.md): chooses each block's parallel loop and
// how threads run it, recorded in the loops' plans (ir::LoopPlan) for the C printer.
//
// The parallel loop is the outermost exclusive loop (ir/parallelism.h) that runs more than once,
// when its bounds use no loop variable (else the block has none); it is collapsed with the next
// loop when that one can join it (ir::joins_collapse: exclusive too, not the innermost, which
// stays whole so that it vectorizes, and a perfect nest), and, when those two run over whole
// register tiles, with every loop after them that can: the 4 output channels conv2d's weight
// gradient leaves over are one tile of rows by one of columns, which ran on one thread while the
// other waited; with its window loops its 9 iterations split 5 / 4 (7.2 -> 6.6 ms at two
// threads, a C driver). Below kParallelThreshold units of work in all (iterations weighted by
// their cost, below) a team costs more than it gains: the loop runs on one thread, or on a team
// only when a size known at run time reaches the threshold. The team reports the threads' error
// bits when an index expression of the block may raise. Inside other loops, the parallel loop's
// team (by the work of one run of the loop) starts once, in front of the block, where its
// iterations stay with their threads across those loops (ir::stays_with_threads,
// LoopPlan::nowait); elsewhere once per iteration of those loops.
//
// With reassociation, a block whose outer loop is not exclusive but whose iterations collide
// only in sums into tensors it never reads or assigns (a column sum, a bias's or a convolution's
// weight gradient summed over the batch) runs that loop on a team with thread copies
// (ir::LoopPlan::thread_copies) when no exclusive loop comes first and the block's parallel loop,
// if any, may run on one thread (its work known only at run time, or under the threshold):
// where that loop's team would not run, the block runs on the copies' team rather than on one
// thread. Sums then change rounding order only.
//
// `worksharing` plans functions run by every thread of an enclosing team (c_emitter.h): the
// parallel loop takes a share of the team with no threshold, which needs every thread to run
// the loops outside it, so those loops must hold no statements; otherwise one thread of the team
// runs the whole block. The threads wait for each other at the end of each run of the parallel
// loop unless its iterations stay with their threads (nowait). Changes no result: only the plans
// change.
#pragma once

#include "uops/ir/program.h"

namespace uops {

// A team's work counts iterations weighted by what each costs (passes/threads.h, work_from): an
// iteration that loads, computes with arithmetic and stores costs 1, each call of a vector math
// function in it kMathCallCost more, and a register tile's vector multiply-add kTileColumnCost.
// Under a passive wait policy waking the second thread of a 2-core Zen 5 costs 40-50 us. Through
// run_into, one thread's time over two threads' (docs/cpu-kernels.md, stop 99): (x*y + x - y)^2
// max x lost at 2^20 iterations (0.78, 0.93) and broke even at 2^21 (0.96, 1.22); with one exp it
// lost at 2^19 (0.67) and won at 2^20 (1.09); with tanh and exp, 0.88 at 2^18 and 1.08 at 2^19.
// Register tiles keep the 2^18 vector multiply-adds their threshold was set at (threads.h).
constexpr int64_t kParallelThreshold = 1 << 21;
constexpr int64_t kMathCallCost = 2;
constexpr int64_t kTileColumnCost = 8;

// The most elements thread copies may hold in all (one copy per thread, on its stack).
constexpr int64_t kThreadCopyLimit = 1 << 16;

Program plan_parallel_loops(Program p, bool worksharing, bool reassociate = false);

}  // namespace uops
