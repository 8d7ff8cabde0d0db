// Internal to passes/: what the C backend's tilings (reduction_tiling.h, copy_tiling.h,
// dot_tiling.h) share: which loops of a block may move and which are exclusive (ir::exclusive),
// and loops cut into tiles.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ir/parallelism.h"
#include "uops/ir/analysis.h"

namespace uops::passes {

using namespace ir;

// Loops [first, end) of b may be reordered and split freely (see tiling.cpp); also gives each
// loop's exclusivity.
bool qualifies(const Program& p, const Block& b, size_t first, std::vector<bool>* exclusive_loops);
// b's loop over `var`, or null.
const Loop* loop_of(const Block& b, int var);
// l's range is empty whatever the sizes.
bool empty(const Loop& l);
// A loop over [0, end).
Loop counted(int var, Index end);
// l cut into tiles of `tile`: returns the loop over tiles, and l becomes one tile of it.
Loop split_into_tiles(Program& p, Loop& l, int64_t tile);
// The block's loop `at` cut into whole tiles of `size`: returns the loop over the tiles and the
// loop within a tile (over [0, size)), and replaces the loop's variable in the innermost loop's
// statements; `rest` gets the loop over the iterations left over. The block keeps the loop in
// place. With `after` (a multiple of size), only the tiles after the whole tiles of `after`: the
// loop over them counts on from where those stopped, so the tiles' indices hold the loop's start
// and not where they begin (which may divide, as conv2d's output pixels do by the stride).
std::pair<Loop, Loop> split_whole_tiles(Program& p, Block& b, size_t at, int64_t size, Loop* rest,
                                        int64_t after = 0);
// The block over whole runs of `cols` of its last loop j (a one-loop register tile): j' inserted
// at position `at`, the loop within a run innermost (unrolled when `unroll`, LoopPlan::unroll);
// then the block over the columns left over, when there are any. Appends what it becomes to
// `out`: b itself when j holds no whole run.
void tile_columns(Program& p, Block b, size_t at, int64_t cols, bool unroll,
                  std::vector<Block>& out);
// How many whole tiles of `size` l's range holds.
Index whole_tiles(const Loop& l, int64_t size);

// Whether block b's last loop, j, can run in rows of lanes (LoopPlan::tile_width): its one
// statement sums into an f32 tensor what ir::lane_wise computes along j, and j's bounds use no
// loop variable and cannot raise; its element may be checked only where `checked_store` (a
// scatter's, tested at the tile's corners).
bool sums_in_lanes(const Program& p, const Block& b, bool checked_store);
// The rows of a tile of 16 columns in rows of lanes on a target of `vector_bytes` (under 64: 16
// vector registers, AVX2 and SSE), at most `rows`: 12 vectors in all, leaving room for the row
// loaded and the element broadcast (6 rows with AVX, 3 with SSE).
int64_t lane_rows(int64_t rows, int vector_bytes);
// l runs over whole tiles, as counted() over whole_tiles makes it: [0, n / size), size > 1.
bool over_whole_tiles(const Loop& l);

// The first of the trailing loops with constant ranges [0, n) ("tile loops"; the innermost may
// run in rows of lanes instead, [0, count) with count < LoopPlan::tile_width), when loop k comes
// before them and the block keeps a register tile around k: the loops from k to the tile loops
// are not pivots and the tile loops hold few elements; the statements, only in the innermost
// loop, all accumulate into one tensor at one unchecked index that holds each tile variable alone
// (plus terms of other variables) on some axis and uses none of the loops from k to the tile
// loops. Then each tile iteration owns one element, the same in every iteration of those loops,
// and nothing in the loops reads it. Returns 0 otherwise.
size_t tile_loop(const Block& b, size_t k);

// `var` replaced by `by` in every index of the innermost loop's statements.
void replace_var(Block& b, int var, const Index& by);

// The box of its tensor that the tile around loop k of block t stores (register_tiles.h), per
// axis [lo, hi), or nothing for the whole axis. None when the index is not such a box: per axis
// a loop variable, or v * R + r with v over [0, n) and r over [0, R) (a loop cut into whole
// tiles; R a constant or a parameter fixed to one), after a start free of loop variables (the
// window gather's inner rows, c_window_gather.h), each loop outside the tile on one axis,
// bounds that use no loop variable. With k past the last loop: each of the block's loops.
using TileBox = std::vector<std::optional<std::pair<Index, Index>>>;
// The tile of block b stores its elements whenever the block's loops outside it run: its stored
// index is unchecked (a checked one's corner test has an else without a tile). No empty-range
// test skips it (empty_range_tests tests no loop inside a tile, but the columns of one in rows of
// lanes, which has no elements to store where they are none).
bool stores_when_run(const Block& b);
// ... and whenever the block runs: it has no thread copies either (whose team adds into the
// tensor).
bool stores_every_time(const Block& b);
// With `first_round`, also a tile that stores its box in the first iteration of loops outside it
// that are on no axis (LoopPlan::tile_start_first), bounds free of loop variables.
std::optional<TileBox> stored_box(const Program& p, const Block& t, size_t k,
                                  bool first_round = false);
// Block bi, one loop per axis of its statement's tensor over all of it, replaced in place (and
// in its row-local run) by copies over the rest of the tensor outside `box`: at most two per
// cut axis. Their new bounds hold no division the tensor's shape does not (bind() has
// evaluated those), so they raise nothing the block did not; their teams are planned for their
// own iterations. With `unless` (a later block's index, before the change), one more copy over
// the box itself, run only where that block does not store it (LoopPlan::fill_unless). False,
// and nothing changed, where that cannot be said or the box cuts a row-local run's shared loop.
bool keep_outside(Program& p, size_t bi, const TileBox& box, size_t unless = 0);

}  // namespace uops::passes
