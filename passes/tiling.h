// Internal to passes/: what the C backend's tilings (reduction_tiling.h, copy_tiling.h,
// dot_tiling.h) share: which loops of a block may move and which are exclusive (ir::exclusive),
// and loops cut into tiles.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "ir/parallelism.h"
#include "uops/ir/analysis.h"

namespace uops::passes {

using namespace ir;

// Loops [first, end) of b may be reordered and split freely (see tiling.cpp); also gives each
// loop's exclusivity.
bool qualifies(const Program& p, const Block& b, size_t first, std::vector<bool>* exclusive_loops);
// l's range is empty whatever the sizes.
bool empty(const Loop& l);
// A loop over [0, end).
Loop counted(int var, Index end);
// l cut into tiles of `tile`: returns the loop over tiles, and l becomes one tile of it.
Loop split_into_tiles(Program& p, Loop& l, int64_t tile);
// The block's loop `at` cut into whole tiles of `size`: returns the loop over the tiles and the
// loop within a tile (over [0, size)), and replaces the loop's variable in the innermost loop's
// statements; `rest` gets the loop over the iterations left over. The block keeps the loop in
// place.
std::pair<Loop, Loop> split_whole_tiles(Program& p, Block& b, size_t at, int64_t size, Loop* rest);
// The block over whole runs of `cols` of its last loop j (a one-loop register tile): j' inserted
// at position `at`, the loop within a run innermost (unrolled when `unroll`, LoopPlan::unroll);
// then the block over the columns left over, when there are any. Appends what it becomes to
// `out`: b itself when j holds no whole run.
void tile_columns(Program& p, Block b, size_t at, int64_t cols, bool unroll,
                  std::vector<Block>& out);
// The most iterations of a loop that split_into_tiles made one tile of, [s, min(e, s + c)): c;
// 0 for any other loop.
int64_t one_tile_extent(const Loop& l);
// How many whole tiles of `size` l's range holds.
Index whole_tiles(const Loop& l, int64_t size);

// `var` replaced by `by` in every index of the innermost loop's statements.
void replace_var(Block& b, int var, const Index& by);

}  // namespace uops::passes
