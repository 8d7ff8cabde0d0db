// Tiling of the dot products a contraction keeps, which the C backend applies when it writes a
// kernel, before the tilings of reduction_tiling.h.
//
// tile_dots: the dot products a contraction keeps when its operands are not packed (a linear
// layer, y[i, j] = sum over k of x[i, k] * w[j, k] + b[j]: loop_order.h). A block whose loop j
// owns sum carried scalars, reduced in its innermost loop and stored by j's own statements, with
// the loop i just outside j, both exclusive, their bounds free of loop variables and data and
// unable to raise, and no statement able to raise, becomes i', j' over whole rows x cols tiles,
// every statement of j and of the innermost loop repeated for each (r, c) of a tile with i =
// i.start + i' * rows + r, j = j.start + j' * cols + c and its own carried scalars; then the
// original block over the rows and the columns left over. rows * cols dot products then share
// each pass over k: the C backend's SIMD reduction keeps rows * cols vector accumulators, and each
// load of x feeds `cols` of them and each of w `rows`. Each scalar receives the same
// contributions in the same order: bit for bit.
//
// The j' tiles run in blocks of `block` tiles, the loop over the blocks outside i' (both loops
// exclusive, so any order computes the same): the rows of w a block reads (block * cols, 64 in
// the C backend's pipeline: 256 KB over k = 1024) stay in L2 while every tile of x's rows passes
// over them, and x is read once per block. With i' outside j', each tile of x's rows read the
// whole of w, from L3 once w outgrew L2 (linear's 1024 x 1024: 16 times at a batch of 64, the
// kernel 1.4x slower on stop 89's Intel host; docs/cpu-kernels.md, Dot tiles).
//
// A block that also reduces what j stores into scalars that i carries (attention's scores and
// their row maximum, which loop fusion puts in one block) first becomes two: the scores, which are
// then tiled, and after them a block over the same rows and columns with only those reductions
// and i's statements. Only where each reduction reads the element that the same iteration stored
// and no other iteration stores, so that it reads the same values in the same order.
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

Program tile_dots(Program p, int64_t rows = 4, int64_t cols = 4, int64_t block = 16);

// That first step alone, which also lets loop_order pack the scores' operand (packed_variant.h).
Program split_row_reductions(Program p);

}  // namespace uops
