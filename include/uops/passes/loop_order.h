// Loop ordering for reductions into tensors. Runs after fusion and substitution.
//
// First, a sum, max or min carried scalar whose only use is `y[idx] = c` in its owner loop
// becomes direct accumulation `y[idx] sum= v` (max=, min=) where it was reduced, when y has the
// program's value type, nothing else in the block touches y, and idx tells the owner loop's
// iterations and all outer ones apart. A block put before it sets y[idx] to the scalar's identity
// (0 for a sum, -inf for a max), so each element receives identity + v0 + v1 + ... in the same
// order: bit-exact, whatever y held before (the original store overwrote it too). The zeros are
// then the program's own, not the backend's fill of a fresh output: the C backend runs them inside
// the kernel, on its threads, and a register tile starts from them without loading
// (register_tiles.h); a pool's window loops then run outside the channels, which vectorize. A
// store of more than the sum, `y[idx] = f(c)` (a bias added, a mean's division) where f reads
// nothing the block writes and cannot raise, accumulates the same way and leaves `y[idx] =
// f(y[idx])` to a block after it over the owner loop and those outside it: the same operations on
// the same values.
//
// A block that owns no carried scalars and writes several tensors, reading none of them, computes
// each written tensor on its own: it splits into one block per tensor (each with the loops down to
// the innermost that holds one of its statements: linear's db sits a loop above dx and dw) when a
// part can then be reordered (a matmul gradient's da and db, which fusion joined), or when no
// tensor its innermost loop touches is read once per iteration, each part then a contraction:
// conv2d's dx and dw, which no tiling took together (its whole gradient at 8 x 56 x 56 x 64 ran
// 124 ms at one thread, 26 split). A block that streams an operand (layernorm's gradient sums
// dgamma, dbeta and a row's sum in one pass over dy and x) stays whole: splitting it would read
// that operand once per part.
//
// Then, in a block whose statements all sit in the innermost loop and own no carried scalars,
// the loops are reordered so that the innermost one stores with stride 1 (matmul: i, k, j),
// which vectorizes without reassociating anything; but not when the innermost loop reads
// everything with stride 1 and the new one would read something strided (a backend may run the
// reduction as a SIMD reduction), unless every strided load is of a tensor that is packable: not
// written in the block, read at one index of distinct plain loop variables, and read many times
// (at least two loops do not index it; across one loop, a linear layer's batch, often of 1, the
// copy would cost more than the product). Such a tensor is copied, by a block put before this one,
// into a temporary whose axes follow the new loop order, and the block reads the copy: conv2d over
// NHWC with OHWI weights reads [kh][kw][ic][oc] weights with the output channels innermost, the
// shape the tiling passes block in registers (reduction_tiling.h). A block that reorders anyway,
// or whose innermost loop already stores with stride 1, packs the packable tensors it reads with
// stride too. Loops whose variables every written tensor's index pins (alone on an axis, give or
// take a constant: "kept") may move freely; the others, a window's included, keep their relative
// order, so every element receives its contributions in the original order. Legal when every
// written tensor is accessed everywhere in the block at one index (iterations that touch one
// element then share the kept variables and differ only in the other loops), loop bounds use no
// loop variables, and nothing in the statements can raise an error; loops whose bounds can raise
// one stay in place, as a prefix. So a scatter through a window, dx?[n, oh * s - p + kh, ow * s -
// p + kw, c] sum= ... (the input gradients of depthwise conv2d and the pools), runs its channels
// innermost: depthwise conv2d's dx at 8 x 56 x 56 x 128 went from 64 to 2.3 ms at one thread,
// avgpool2d's from 3.1 to 0.44.
// The conversion of the first step is kept only when the block is then reordered.
//
// Last, the other way round: a block accumulating one sum into y (zero on entry, touched by
// nothing else) that keeps its order although some load walks its innermost loop with stride,
// and whose reduction loops can run innermost with every load walking the last of them with
// stride 1 or not at all, computes dot products: kept loops, then reductions, the last kept loop
// owning a carried sum stored into y (the da of matmul's gradient, dc * b^T). The same
// contributions in the same order from the same zero: bit-exact.
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops {

// With `packed_once`, a tensor read across a single loop is packed too, and `packed_once`
// receives one entry per such copy: the C backend's packed variant, which it runs where the copy
// pays (packed_variant.h).
struct PackedOnce {
  ir::Index reuse;      // the iterations of the loop that re-reads each element of the copy
  ir::Index reduction;  // the iterations of the reduction loops of the block reading it
};
Program order_loops(Program p, std::vector<PackedOnce>* packed_once = nullptr);

}  // namespace uops
