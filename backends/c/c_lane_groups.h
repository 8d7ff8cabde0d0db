// The C backend's lane groups, decided on the planned program before printing (as the team plan
// is, c_team_plan.h): a loop whose iterations each reduce scalars over the loops inside it runs
// in groups of kLaneGroup iterations, one per SIMD lane (ir::LoopPlan::lane_group). Its scalars
// are held per lane in vectors of GCC's vector extensions (in registers, where arrays stayed in
// memory; arrays still under other compilers: `uops_lanes_of`), and each statement inside runs for
// the group's lanes at once, as `omp simd` (codegen::KernelWriter::lane_group). The iterations it
// leaves over run as before.
//
// What it is for: a reduction that loop_order cannot move its independent loop inside of, because
// it accumulates into a scalar that memory cannot hold alone. An argmax keeps a value and a
// position: maxpool2d's gradient finds each window's argmax with the channels outside the window,
// one scalar comparison per element (16 ms at 8 x 56 x 56 x 64, 3 x 3 stride 2, against 1.9 ms
// with the channels in groups of 16, measured in the printed C at one thread).
//
// A loop k runs in groups where: it is neither a parallel loop, nor one an outer loop's `omp for
// collapse` takes in, nor the innermost; it owns carried scalars; its own statements store, each
// iteration to its own elements (ir::stores_stay_apart), and reduce nothing; the loops inside it
// carry nothing, have bounds free of its variable, and hold only reductions into k's scalars, none
// of which may raise or loads a tensor the block writes; the block has no tile; and every load
// inside that uses k's variable reads a row along it (ir::reads_row), one at least, so that a
// group's lanes load consecutive elements. The loops inside then drop their plans' SIMD
// reductions (the lanes are the group's). Each lane runs its own iteration's steps in their order,
// so the results are the same, bit for bit. Where the range analysis proves every argmax or
// argmin position inside below 2^24 (a window fixed by fix_params), the positions are narrow
// (LoopPlan::narrow_positions): 32-bit lanes, stored into i32 as they are, which their round trip
// through the value type f32 would leave unchanged.
#pragma once

#include "uops/ir/program.h"

namespace uops::cgen {

constexpr int kLaneGroup = 16;

void plan_lane_groups(ir::Program& p);

}  // namespace uops::cgen
