// Internal to passes/: what parallel_loops and row_local_runs share about thread teams.
#pragma once

#include "uops/ir/program.h"

namespace uops::passes {

using namespace ir;

// The bytes of the widest SIMD register the C backend compiles for (AVX-512).
constexpr int64_t kVectorBytes = 64;

// The iterations of loops [depth, end) of b, each weighted by its cost (parallel_loops.h: 1, and
// kMathCallCost more for each vector math call in those loops' statements); a loop whose bounds
// use variables counts as the tile it runs over (at most min(e, c) for [s, min(e, s + c))), any
// other as once. Where b keeps a register tile of rows and columns (tile_loop, two tile loops or
// more), its innermost loop counts in vectors of kTileColumnCost each: each iteration of such a
// tile is a multiply-add in registers, its loads shared by the rows, where the threshold was
// measured on elementwise iterations that each load, compute and store (matmul 96^3 started a
// team for its 96 x 96 x 96 / 16 vector multiply-adds: 4.6x slower at two threads than on one,
// C driver). A one-row run of columns loads a vector for each
// multiply-add, as an elementwise loop does, and counts its iterations (attention's rows left over
// at 32 x 128 x 64, run in teams over the batch, lost 9% at two threads when counted in vectors).
Index work_from(const Program& p, const Block& b, size_t depth);
// Sets how a team runs a parallel loop of `work` (work_from's weighted iterations) in all (team,
// team_if or serial, by kParallelThreshold) and whether it reports errors.
void plan_team(LoopPlan& plan, const Index& work, bool reports_errors);
// Some index expression of b may raise (may_raise): its threads must report their error bits.
bool block_may_raise(const Block& b);

}  // namespace uops::passes
