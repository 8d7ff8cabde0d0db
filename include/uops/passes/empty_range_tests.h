// empty_range_tests (a C backend pass, the last: after the passes that plan teams and cut
// blocks): a block whose statements all sit in its innermost loop skips its loops at once when
// one of their ranges is empty (the rows and columns a register tile leaves over, often none),
// rather than entering a team and running the loops between to find it out: in front of loop a,
// a test of the ranges of loops m1, m2, ... (ir::LoopPlan::empty_tests).
//
// The m are the loops from a inward, none inside a register tile (whose store that would skip)
// but a tile's columns in rows of lanes (LoopPlan::tile_width: none to store where they are none),
// whose bounds use no loop variables and cannot raise, but for those plainly not empty
// (constant, or [0, n) over a tensor's axis: empty only for an empty tensor); a is the outermost
// loop from which no loop bound down to the deepest m can raise, so skipping them skips nothing
// observable. a is in front of the block's team where it can be (a team entered for nothing
// costs about a microsecond, on one thread too), never inside a collapsed group, nor outside a
// row-local run's shared loop.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_empty_range_tests(Program p);

}  // namespace uops
