// accumulator_promotion (a C backend pass with reassociation, CCompileOptions::reassociate, run
// before simd_reductions): an accumulation into one element per run of a block's innermost loop,
// `t[i] sum= v` with i free of that loop's variable (the gradient of a broadcast, a row's sum
// that autodiff scatters), becomes a scalar carried by the loop around it, reduced in the
// innermost loop and accumulated into t[i] once after it. The loop then reduces in a register
// (and in SIMD lanes, simd_reductions.h) where it read and wrote memory at every step, a chain
// of store-to-load forwarding that nothing could vectorize.
//
// A statement is promoted when it accumulates (sum, max or min) into a tensor of the program's
// value type at an index that uses neither the innermost loop's variable nor data and cannot
// raise, and no other statement of that loop touches the tensor. The promoted store goes first
// among the outer loop's statements, which run after the innermost loop has finished: whatever
// they read of t sees every contribution, as before. max and min are exact (each element sees
// the same candidates; on ties and NaN the first is kept either way); a sum is reassociated,
// t + (v0 + v1 + ...), and a run of no iterations adds +0, turning a -0 into +0.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program promote_accumulators(Program p);

}  // namespace uops
