// epilogue_folding (a C backend pass, after fill_trimming): a block that maps every element of a
// tensor in place, y = g(y) (avgpool's y / (k * k); loop_order leaves a mean or a bias so, after
// the sum it rewrote as accumulation into y), moves into the store of the register tile that last
// wrote the tensor before it: the tile stores g of its elements (LoopPlan::tile_store), and the
// block keeps only the rest of the tensor, outside the tile's box (passes/tiling.h: at most two
// pieces per tiled axis, in its place and its row-local run). The pass over the whole output
// after the tiles goes, where it was a second pass over memory.
//
// It applies where g loads nothing but y at the block's own element and cannot raise; the tile's
// stored index is unchecked, it has no thread copies and no streamed stores; and every block
// between the tile and the map touches the tensor only outside the box: on some cut axis, at a
// loop variable whose loop starts where the box ends (the rows and columns the tiles leave
// over). Each element then gets the same operations on the same values as before, in the same
// order: bit for bit.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_epilogue_folding(Program p);

}  // namespace uops
