// Loop fusion (docs/design.md §3.5). Two blocks A (earlier) and B fuse when the loops of the
// shorter one pair 1:1 with the outer loops of the other on equal ranges (equal expressions:
// lowering already unified asserted-equal axes). The longer block (A on a tie) keeps its loop
// order; the other one's loops may be permuted only between its pivots: for every pivot p, its
// loops 0..p must land on positions 0..p, where p's statements and carried scalars then live.
//
// The data check: every tensor that one block writes and the other reads or writes must be
// accessed by both at exactly the same index under the pairing; that index must pin (as ±v plus
// a loop-invariant term in some axis) every loop variable but one of a single iteration down to
// the shallower of two conflicting statements, and A's statement must sit at least as deep as
// B's, so that each element is produced before it is consumed exactly as in the unfused program.
//
// Blocks in between: merge left (B joins A's place) when B reads nothing written in between and
// writes nothing read or written there; else merge right (A joins B's place) when nothing in
// between reads or writes what A writes or writes what A reads; else no fusion. Runs to a fixed
// point; A's statements come before B's in a fused loop.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program fuse_loops(Program p);

}  // namespace uops
