// Tiling of contractions (matmul's i, k, j after loop ordering; batched matmul, linear and their
// gradients take the same shape), in cache and in registers. The other tilings the C backend
// applies are copy_tiling.h and dot_tiling.h.
//
// tile_reductions: first, the loops of a block that may move (the conditions below, from its
// outermost loop whose bounds and those of the loops inside it cannot raise) are put in
// contraction order: the exclusive ones, then the others in their order, then the last one (a
// matmul gradient's db[k, j] += g[i, j] * a[i, k] runs k, i, j), where some exclusive loop
// indexes an operand without the last loop (matmul's i in a[i, k]), whose rows then share the
// other operand's loads; a block with none stays in its order (a depthwise convolution's
// weight gradient, whose window loops first would read all of x and dy again at each of their
// steps: 6.8-7.0 -> 1.7-1.9 ms at 8 x 56 x 56 x 128, one thread). Then the reduction loop k is
// split into tiles of `tile` iterations, and the loop over tiles moves outermost, so one tile of
// the operand indexed by k and the inner loops (a block of B's rows) stays in cache while every
// outer iteration (every row of A) uses it, instead of all of B being streamed once per row.
// Applies to a block whose statements all sit in the innermost loop and own no carried scalars,
// whose loop bounds use no loop variables or data, whose statements cannot raise an error, and
// whose first loop that is not exclusive (k) has exclusive loops before it and an exclusive loop
// right after it; a loop is exclusive when every tensor the block writes is accessed, by every read
// and write in the block, at exactly its variable on one common axis.
//
// tile_registers: a block whose last loops are i, k..., j with i and j exclusive and the one or
// more loops k... between them not (the same conditions on those loops; outer loops, such as the
// tiles above, may bound them: matmul's i, k, j; conv2d's output pixels, kh, kw, input channels,
// output channels once loop ordering packed its weights) becomes j', i', k..., r, c with
// i = i.start + i' * rows + r and j = j.start + j' * cols + c over the whole tiles, then the
// original block over the rows left over (tiled again in tiles of 4 rows where i's
// range cannot raise, of 6 then 4 after the 8 x 32 tiles below of rows whose loads are their
// own; where it can, `raising_rows` rows and no second tiling: see
// reduction_tiling.cpp, and there a contraction's rows, a convolution's pixels, run in two parts
// over the same range, tiles of 7 where the count is a multiple of 7 and of `raising_rows`
// elsewhere, one of them empty at run time; the rows the last level leaves run one by one, each in
// runs of `row_cols` columns as below) and over the columns left over (first in tiles of the same
// rows and 16 columns, where no load is checked, in rows of 16 lanes where the statement sums what
// ir::lane_wise computes along them, LoopPlan::tile_width; then, fewer than 16, in a tile of the
// same rows whose columns run [0, count) in rows of 16 lanes, where it does). The inner loops r and
// c have constant ranges, so the C backend keeps the rows x cols elements they accumulate into in
// registers across k... (codegen::KernelWriter::register_tiles), and each load of A feeds `cols`
// multiply-adds and each of B `rows`. The column tiles run outside the row tiles: one panel of
// B (a reduction tile by `cols`) stays in cache while every row tile passes over it, where the
// other order streamed the whole reduction tile of B once per row tile (matmul 512^3 at one
// thread: 2.58 -> 2.45 ms, with reduction tiles of 256 rather than 128; tiles of 512, which hold
// all of its k, load and store each register tile once and keep a 128 KB panel of B in L2: 0.98
// -> 1.00-1.02 of oneDNN, seven interleaved rounds, Zen 5). Where every load that moves with i
// moves with j too (a depthwise convolution's pixels and channels), j's operand is a small panel
// (9 x 64 weights) that no order evicts, and the column tiles run inside the row tiles (i', j'):
// each tile then reads whole pixels, contiguous, where j' outside read the same half of every
// pixel along a row (8 x 56 x 56 x 128, a C driver on huge pages, three rounds: 2.0-2.2 -> 1.7-1.9
// ms at one thread, 0.86-0.94 -> 0.76-0.83 at two; the bench within its noise). There the rows
// share only the weights, so with AVX-512 the tiles are 8 x 32 (16 accumulators and 2 weight
// vectors, where 6 x 64 held 24 and 4): 12-16% faster in a C driver. Where every load
// moves with i (a pool's window over x), rows would feed nothing: the block becomes i, j', k..., c
// over whole runs of `row_cols` columns, then the columns left over.
//
// Where those exclusive loops before i (the weight gradient's kh and kw) index an operand that the
// first loop of k... (its images) indexes too, each window step re-read that operand over all of
// k...: the tiles are then 8 rows x 32 columns, and the first loop of k... runs outside the tiles
// and the window loops wherever the loops of k... after it run at least kWindowReduction
// iterations (a test at run time, in the loops' ranges; elsewhere the order above), and the
// second (an image's rows) with it where the last (a row's pixels) runs at least
// kWindowRowReduction. Each image's (or row's) slices of x and dy then come from memory once and
// stay in cache across every tile and window step; the tile loads and stores its elements once
// per image (row). conv2d's weight gradient in the bench, three interleaved rounds: 0.53-0.57 ->
// 0.75-0.83 of oneDNN at one thread, 0.50-0.57 -> 0.64-0.72 at two.
//
// A block with no i (its exclusive loops run inside its reductions, in loop order) where none of
// them indexes an operand without j may slide the last of them over the reductions: a depthwise
// convolution's weight gradient, dw[kh, kw, c] sum= dy[n, oh, ow, c] * x[n, oh + kh, ow + kw, c]
// in n, oh, ow, kh, kw, c, runs kh, kw, n, oh, ow, c with kw as i (its rows share each load of
// dy), where the window's loop kh then meets the condition above, so that the images and their
// rows run outside the tiles and the window loops. The tiles are 3 rows (a 3 x 3 window's) x 64
// columns (32 without AVX-512), then tiles of 1 row over the rows left over (a level of 2 rows
// between took its kernel's compile from 2.3 to 4.4 s at two threads); what they leave over (the
// columns, or a block whose every load moves with kw) runs in loop order, where the window loops
// first would read x and dy again at each of their steps. 8 x 56 x 56 x 128, 3 x 3, one thread,
// C drivers, medians of 31 interleaved: the weight gradient alone 2.22 -> 1.38 ms (3 x 128
// tiles; 3 x 64 within 3%), the whole gradient 4.15 -> 3.62 ms, 2.15 -> 1.87 at two threads.
//
// The blocks tile_registers cuts from one block share a fresh ir::Block::partition: they write
// different elements, so each starts from what the tensor held before the first of them
// (ir::value_at_start), and the tiles of the rows and columns left over start from a fill's
// constant as the first tile does.
//
// Both keep every result bit for bit: iterations with different values of the exclusive loops
// touch disjoint written elements, and each element receives its contributions in the original
// order. The C backend applies both when it writes a kernel (uops/backends/c/c_backend.h).
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

// tile_registers runs a tile's images outside the tiles and window loops only where the loops
// left inside run at least kWindowReduction iterations, and their rows too where the pixels of a
// row run at least kWindowRowReduction (reduction_tiling.cpp, split_window_order).
inline constexpr int64_t kWindowReduction = 32;
inline constexpr int64_t kWindowRowReduction = 48;

Program tile_reductions(Program p, int64_t tile = 512);
// `vector_bytes`: the width of the target's vectors (CpuTarget::vector_bytes). Under 64 (AVX2,
// SSE: 16 registers), a tile whose statement runs in lanes is 16 columns in rows of lanes
// instead, LoopPlan::tile_width, in as many rows as 12 such vectors hold (6 with AVX, 3 with SSE).
Program tile_registers(Program p, int64_t rows = 6, int64_t raising_rows = 6, int64_t cols = 64,
                       int64_t row_cols = 64, int vector_bytes = 64);

}  // namespace uops
