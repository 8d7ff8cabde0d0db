// empty_range_tests (a C backend pass, after parallel_loops and row_local_runs): a block whose
// statements all sit in its innermost loop skips its loops at once when a deeper loop's range
// is empty (the rows and columns a register tile leaves over, often none), rather than running
// the loops between to find it out: in front of loop a, a test of loop m's range
// (ir::LoopPlan::empty_test).
//
// m is the deepest loop over a tail [s, e) (s not 0: [0, n) is empty only for an empty tensor)
// whose bounds use no loop variables and cannot raise; a is the outermost loop from which no
// loop bound up to m can raise, so skipping them skips nothing observable, and no further out
// than inside the parallel loops (or a row-local run's shared loop).
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_empty_range_tests(Program p);

}  // namespace uops
