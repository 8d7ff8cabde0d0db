// fill_trimming (a C backend pass, after register_tiles): a block that fills a tensor with a
// constant (ir::fills_whole: loop_order's zeros in front of an accumulation, a max's -inf) keeps
// only the elements that the register tile after it does not store. That is where the first block
// after the fill to touch the tensor keeps a tile (register_tiles.h) that starts from the fill's
// constant without loading it (LoopPlan::tile_start), stores every element of a box of the
// tensor (empty_range_tests, later, never tests a loop inside a tile): the fill of the box is
// dead. The fill becomes one block per side of the box it leaves (at most two per tiled axis: the
// rows and the columns the tiles leave over, whose blocks accumulate into what it wrote), in its
// place and in its row-local run.
//
// A tile that starts from the constant only in the first iteration of loops outside it that
// revisit its elements (LoopPlan::tile_start_first: matmul's and attention's products, inside
// their loop over reduction tiles) stores the box in that first round, when it runs: the fill of
// the box stays, as one more piece, run only where it does not (LoopPlan::fill_unless): where one
// of those loops is empty (a reduction of no elements) or the block runs on its thread copies,
// which add into what the fill wrote. matmul 512^3 wrote its 1 MB of zeros with a team of its
// own in front of the tiles: 1.5% of the kernel at one thread, 10% at two (a C driver).
//
// The box: each axis of the tile's index is a loop variable, or t * R + r with t over [0, n) and
// r over [0, R) (a loop cut into whole tiles, tiling.h), each loop outside the tile on one axis,
// bounds that use no loop variable. The pieces' new bounds hold no division that y's shape does
// not (bind() has evaluated those), so they raise nothing the fill did not.
//
// A later block of that tile's partition (ir::Block::partition: parts of one block that write
// different elements) whose tile starts from the constant too and stores a box with every range
// the same but one, where both start at one place, is the tile's alternative: one of the two
// boxes is empty, and the box grows by the other's extent (conv2d's pixels in tiles of 6 or of 7,
// reduction_tiling.h). The fill then keeps nothing at 56 pixels where it kept every element.
//
// Where the first block after the fill to touch the tensor keeps no tile but adds each of its
// values into an element of its own (one sum that reads not the tensor, on no thread copies, at
// an index that holds each of the block's loops alone on one axis, or as t * R + r with r over
// [0, R) and R a constant or a parameter fixed to one: stored_box), it stores the constant plus
// its value there instead of adding, and the fill keeps what lies outside the box its loops
// cover, clamped to the tensor where the store is checked. The sums are the same, bit for bit:
// each element received one value after the constant. avgpool2d's gradient at a stride equal to
// its window (fixed: fix_params) wrote dx twice per image, the fill then the scatter; overlapping
// windows (a loop's end unequal to R) or a loop on no axis keep the fill and the sum.
//
// The box keeps its old values under the IR's meaning and gets the constant only from the tile's
// plan, so this runs after every other decision, on a program only the C printer reads;
// needs_zero_fill reads the program before planning, so nothing fills the box again. Depthwise
// conv2d and the pools wrote their output twice per run (a fill that went out to memory, then the
// tiles).
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_fill_trimming(Program p);

}  // namespace uops
