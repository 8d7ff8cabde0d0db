// The C backend's tile panels, decided on the planned program before printing (as its
// prefetches are, c_tile_prefetch.h): a register tile in rows of 16 lanes
// (ir::LoopPlan::tile_width, targets under AVX-512's width) or in AVX-512's whole rows of 64
// columns (a loop GCC vectorizes) kept across one loop, whose statement reads a row of its tensor
// at each step of that loop at an index the tile's rows do not move (matmul's b[k, j..j+15] at
// step k), reads those rows from a copy (ir::LoopPlan::tile_panel on the tile's loop). The
// printer copies the rows of the loop's range, at most codegen::kTilePanelRows, into a buffer of
// the running thread's in thread-local storage, one the unit's blocks share (32 KB, AVX-512's
// 128 KB: no frame takes that on a small stack), where the index outside the loop or the range
// changes, so the next tiles of the row (the rows of a that reuse b's panel) read it from there.
//
// Why: a tile of 16 columns reads one cache line of b per step, the lines b's row length apart.
// At 512 columns that is 2 KB: every line falls in 2 of the 64 sets of a 32 KB, 8-way L1, which
// hold 16 of the panel's 512 lines, so each tile read its panel from L2 again (AMD EPYC, Zen 3,
// AVX2; the same set conflicts docs/cpu-kernels.md found for AVX2 tiles on the AVX-512 host).
// Consecutive in the buffer, the panel stays in L1 across the tiles that reuse it. AVX-512's
// tiles of 64 columns read 4 lines a step, 128 KB over 512 steps, which fits no L1 and meets no
// set conflict there; what the panel gives them is rows that start on a cache line, where a
// tensor's rows of n = 200, 520 or 1000 columns start off one and every load straddles two lines
// (matmul 1000^3, one thread: 10.7-10.9 -> 9.6-9.9 ms; 512^3 unchanged; codegen::kTilePanelTiles
// says where a filling is read by enough tiles to pay for itself). AVX-512's 16-lane tiles of the
// columns left over keep their rows: not measured there.
//
// Only where no loop of the block starts a team of its own (the block takes the buffer in front
// of its loops, each thread of the kernel's team its own) and the block writes nothing the
// panel reads. The same loads from another place: the same bits.
#pragma once

#include "uops/ir/program.h"

namespace uops::cgen {

void plan_tile_panels(ir::Program& p, int vector_bytes);

}  // namespace uops::cgen
