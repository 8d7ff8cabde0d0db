// Tiling of transposing copies, which the C backend applies when it writes a kernel, after the
// tilings of reduction_tiling.h.
//
// tile_copies: a transposing copy (the packing blocks of loop_order: conv2d's weights) reads or
// writes a new cache line at every iteration. A block whose loops are all exclusive, whose
// statements all sit in the innermost loop j and assign elements stored with j on their last
// axis, and which loads a tensor whose last axis is another loop i's variable while j moves
// along an earlier axis, becomes ..., i', ..., j', i, j over square tiles of `tile`: i runs over
// [i.start + i' * tile, min(i.end, i.start + i' * tile + tile)), j alike. A tile reads `tile`
// lines and writes `tile`, all in L1. Also needs the bounds of i and j to be free of loop
// variables and data and unable to raise (i' and j' are empty when i and j are), and no
// statement to raise: each element still gets the same value, once. Where the block copies a
// transposed f32 tile, dst[..., i, j] = src[..., j, i] (ir::copies_transposed), i is planned
// LoopPlan::tile_transpose: the C printer moves its 4 x 4 blocks through SSE registers.
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

Program tile_copies(Program p, int64_t tile = 16);

}  // namespace uops
