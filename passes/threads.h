// Internal to passes/: what parallel_loops and row_local_runs share about thread teams.
#pragma once

#include "uops/ir/program.h"

namespace uops::passes {

using namespace ir;

// The bytes of the widest SIMD register the C backend compiles for (AVX-512).
constexpr int64_t kVectorBytes = 64;

// The iterations of loops [depth, end) of b; a loop whose bounds use variables counts as the
// tile it runs over (at most c for [s, min(e, s + c))), any other as once. Where b keeps a register
// tile (tile_loop), its innermost loop counts in vectors: an iteration of such a tile is a
// multiply-add in registers, not the load, operation and store of an elementwise iteration that
// kParallelThreshold was measured on (matmul's two rows left over by its 6-row tiles, 2 x 512 x
// 512, started a team that cost more than the rows at two threads: 13% of the 512^3 kernel).
Index work_from(const Program& p, const Block& b, size_t depth);
// Sets how a team runs a parallel loop of `work` iterations in all (team, team_if or serial,
// by kParallelThreshold) and whether it reports errors.
void plan_team(LoopPlan& plan, const Index& work, bool reports_errors);
// Some index expression of b may raise (may_raise): its threads must report their error bits.
bool block_may_raise(const Block& b);

}  // namespace uops::passes
