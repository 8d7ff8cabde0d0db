// Cache tiling of reductions into tensors (matmul's i, k, j after loop ordering): the reduction
// loop k is split into tiles of `tile` iterations, and the loop over tiles moves outermost, so
// one tile of the operand indexed by k and the inner loops (a block of B's rows) stays in cache
// while every outer iteration (every row of A) uses it, instead of all of B being streamed once
// per row. Batched matmul, linear and their gradients take the same shape.
//
// Applies to a block whose statements all sit in the innermost loop and own no carried scalars,
// whose loop bounds use no loop variables or data, whose statements cannot raise an error, and
// whose first loop that is not exclusive (k) has exclusive loops before it and loops after it;
// a loop is exclusive when every tensor the block writes is accessed, by every read and write in
// the block, at exactly its variable on one common axis. Iterations with different values of
// the exclusive loops then touch disjoint written elements, and each element receives its
// contributions in the original order (k's tiles in order, k in order inside a tile):
// bit-exact. The C backend applies it when it writes a kernel (uops/backends/c/c_backend.h).
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

Program tile_reductions(Program p, int64_t tile = 128);

}  // namespace uops
