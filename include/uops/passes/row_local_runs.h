// row_local_runs (a C backend pass, after parallel_loops; not for worksharing functions): runs of
// consecutive blocks that may share their outer loop (ir::share_outer_loop: softmax reads a row
// from memory once and re-reads it from L1) and each have it as their parallel loop run as one
// loop, each block's inner loops in turn per iteration. The first block's outer loop records the
// run's length (ir::LoopPlan::row_local) and how threads run the shared loop, by
// parallel_loops' rule over the run's iterations in all; the others' outer loops become plain.
// Changes no result: for each row the blocks keep their order.
//
// A block after the run's first re-reads rows the run brought to L1, so its innermost loop's
// SIMD reductions are bound by the latency of their steps rather than by memory: where it reduces
// one or two scalars (no argmax) and calls no math function (ir::vector_math_calls, whose cost
// bounds such a loop instead), they run in four vectors' worth of lanes of `vector_bytes`
// (ir::LoopPlan::lanes), four chains of steps. The sums change their grouping only, as SIMD
// reductions do (simd_reductions.h). Measured in a C driver, layernorm 4096 x 1024 on one thread
// (Zen 5): 1.66 -> 1.44 ms with its variance's loop in 64 lanes; the same for its first block,
// which reads from memory, was 4% slower, and softmax's exponentials ran no faster (2-4% slower
// at two threads).
//
// The first of the later blocks whose innermost loop runs in lanes prefetches, at each step, that
// step's elements of the rows the run's first block loads unchecked along its inner loop at the
// shared loop's next iteration, clamped to the last (ir::LoopPlan::prefetch): only where both
// blocks are two loops deep over the same fixed inner range, so every element named is one that
// block loads. Hints only: no result changes. layernorm 4096 x 1024 in a C driver: 1.00 -> 0.96 ms
// at one thread, unchanged at two, where the two threads' loads already keep memory busy.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_row_local_runs(Program p, int vector_bytes = 64);

}  // namespace uops
