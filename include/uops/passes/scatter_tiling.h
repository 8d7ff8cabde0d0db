// tile_scatters (a C backend tiling, with reassociation only, after the tilings of
// reduction_tiling.h): a sum scattered through a window, as autodiff writes conv2d's input
// gradient, dx?[n, oh * s - p + kh * d, ow * s - p + kw * d, c] sum= dy[n, oh, ow, o] * w[o, kh,
// kw, c] over n, oh, ow, o, kh, kw, c, adds each product into memory: no element is held across
// the reduction over o, which sits outside kh and kw.
//
// A block whose statements all sit in the innermost loop j, all accumulate sums into one tensor
// at one index (checked or not) that has j alone on its last axis and uses some loop that is not
// exclusive (the window), and reads neither that tensor nor data, where some loop's variable is
// not in that index (o), becomes: the loops the index uses, in their order, then the loops it
// does not use, in their order, then j cut into tiles of `cols` (..., j', o, c with j = j.start
// + j' * cols + c over the whole tiles, then the block again over the columns left over). Of
// the loops the index uses, the last one before those that index an operand read along j (ow,
// before kh and kw, which index w) runs after them, so that one slice of that operand (w at one
// kh, kw) serves a run of it from L1: n, oh, kh, kw, ow, j', o, c. Each tile of the written
// tensor's row then takes every o's contribution in turn, which register_tiles keeps in
// registers (a checked row tested once, at its corners).
//
// Where an exclusive loop the index holds alone on an axis (the batch n) exists, the tiles are
// `rows` x `cols` instead, as in a contraction (reduction_tiling.h): n', j', oh, kh, kw, ow, o,
// r, c with n = n.start + n' * rows + r, so that each load of w feeds `rows` multiply-adds; the
// images left over run in tiles of `row_cols` columns as above, and the columns left over
// untiled. Applies from the outermost loop from which the loops qualify (tiling.h) and no bound
// can raise.
//
// The products are the same; each element receives them in another order (o now runs inside kh
// and kw), so this runs only where sums may be reassociated.
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

// `vector_bytes` as for tile_registers: under 64, a sum lane_wise along j is tiled in rows of
// lanes, 16 columns by as many rows as 12 vectors hold (6 with AVX, 3 with SSE).
Program tile_scatters(Program p, int64_t rows = 8, int64_t cols = 32, int64_t row_cols = 64,
                      int vector_bytes = 64);

}  // namespace uops
