// Tiling of contractions (matmul's i, k, j after loop ordering; batched matmul, linear and their
// gradients take the same shape), in cache and in registers, and of transposing copies.
//
// tile_reductions: first, the loops of a block that may move (the conditions below, from its
// outermost loop whose bounds and those of the loops inside it cannot raise) are put in
// contraction order: the exclusive ones, then the others in their order, then the last one (a
// matmul gradient's db[k, j] += g[i, j] * a[i, k] runs k, i, j). Then the reduction loop k is
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
// output channels once loop ordering packed its weights) becomes i', j', k..., r, c with
// i = i.start + i' * rows + r and j = j.start + j' * cols + c over the whole tiles, then the
// original block over the rows left over and over the columns left over. The inner loops r and c
// have constant ranges, so the C backend keeps the rows x cols elements they accumulate into in
// registers across k... (codegen::KernelWriter::register_tiles), and each load of A feeds `cols`
// multiply-adds and each of B `rows`.
//
// Both keep every result bit for bit: iterations with different values of the exclusive loops
// touch disjoint written elements, and each element receives its contributions in the original
// order. The C backend applies both (and tile_copies below) when it writes a kernel
// (uops/backends/c/c_backend.h).
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

Program tile_reductions(Program p, int64_t tile = 128);
Program tile_registers(Program p, int64_t rows = 8, int64_t cols = 32);

// tile_copies: a transposing copy (the packing blocks of loop_order: conv2d's weights) reads or
// writes a new cache line at every iteration. A block whose loops are all exclusive, whose
// statements all sit in the innermost loop j and assign elements stored with j on their last
// axis, and which loads a tensor whose last axis is another loop i's variable while j moves
// along an earlier axis, becomes ..., i', ..., j', i, j over square tiles of `tile`: i runs over
// [i.start + i' * tile, min(i.end, i.start + i' * tile + tile)), j alike. A tile reads `tile`
// lines and writes `tile`, all in L1. Also needs the bounds of i and j to be free of loop
// variables and data and unable to raise (i' and j' are empty when i and j are), and no
// statement to raise: each element still gets the same value, once.
Program tile_copies(Program p, int64_t tile = 16);

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
Program tile_dots(Program p, int64_t rows = 4, int64_t cols = 4);

}  // namespace uops
