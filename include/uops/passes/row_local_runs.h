// row_local_runs (a C backend pass, after parallel_loops; not for worksharing functions): runs of
// consecutive blocks that may share their outer loop (ir::share_outer_loop: softmax reads a row
// from memory once and re-reads it from L1) and each have it as their parallel loop run as one
// loop, each block's inner loops in turn per iteration. The first block's outer loop records the
// run's length (ir::LoopPlan::row_local) and how threads run the shared loop, by
// parallel_loops' rule over the run's iterations in all; the others' outer loops become plain.
// Changes no result: for each row the blocks keep their order.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_row_local_runs(Program p);

}  // namespace uops
