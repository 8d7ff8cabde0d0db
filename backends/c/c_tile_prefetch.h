// The C backend's prefetches in register tiles, decided on the planned program before printing
// (as the lane groups are, c_lane_groups.h): a register tile (ir::LoopPlan::tile) whose operand,
// one value for each of the tile's columns, moves to another row of its tensor at each step of
// the loop right outside the tile's loops (matmul's gradient db = a^T dc reads a[i, j..j+5] at
// step i; attention's dv = p^T do and dk = ds^T q read p and ds so) fetches that operand's
// element kTilePrefetchSteps steps ahead into the cache, at each step
// (ir::LoopPlan::prefetch on the tile's loop). Those rows lie a row's stride apart, a new cache
// line each step, which the hardware's prefetchers did not fetch in time: in a C driver at one
// thread, matmul's gradient (512^3) ran 12-13% faster, attention's (B 8, S 512, d 64) 4-5%,
// conv2d's 6-7% (docs/cpu-kernels.md, Prefetches in register tiles). Operands along their rows,
// whose lines the tile reads over many steps, and loads whose index reads data or may raise are not
// fetched. A prefetch changes no result, and its address is integer arithmetic (past the tensor,
// whatever lies there: a prefetch never faults).
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops::cgen {

// 6 and 12 steps ran alike, 24 slower (matmul's gradient, a C driver): at 24 of a tile's
// multiply-adds a step, 12 steps are about 150 cycles, a load from L2 or L3.
constexpr int64_t kTilePrefetchSteps = 12;

void plan_tile_prefetch(ir::Program& p);

}  // namespace uops::cgen
