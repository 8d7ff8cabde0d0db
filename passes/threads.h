// Internal to passes/: what parallel_loops and row_local_runs share about thread teams.
#pragma once

#include "uops/ir/program.h"

namespace uops::passes {

using namespace ir;

// The iterations of loops [depth, end) of b; a loop whose bounds use variables counts as the
// tile it runs over (at most c for [s, min(e, s + c))), any other as once.
Index work_from(const Block& b, size_t depth);
// Sets how a team runs a parallel loop of `work` iterations in all (team, team_if or serial,
// by kParallelThreshold) and whether it reports errors.
void plan_team(LoopPlan& plan, const Index& work, bool reports_errors);
// Some index expression of b may raise (may_raise): its threads must report their error bits.
bool block_may_raise(const Block& b);

}  // namespace uops::passes
