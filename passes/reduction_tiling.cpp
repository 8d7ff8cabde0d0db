#include "uops/passes/reduction_tiling.h"

#include <algorithm>
#include <optional>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;
using namespace passes;

namespace {

// The position of the loop to tile, or 0 when the block does not qualify.
size_t reduction_loop(const Program& p, const Block& b, int64_t tile) {
  std::vector<bool> ex;
  if (!qualifies(p, b, 0, &ex)) return 0;
  for (size_t k = 0; k + 1 < b.loops.size(); ++k) {
    if (ex[k]) continue;
    int64_t s = 0, e = 0;
    bool small = is_const(b.loops[k].start, &s) && is_const(b.loops[k].end, &e) && e - s <= tile;
    // One reduction loop between output loops (matmul's k; conv2d's kh, kw, ic are left alone).
    return k > 0 && !small && ex[k + 1] ? k : 0;
  }
  return 0;
}

// `var` indexes some operand that the block's last loop does not (matmul's i in a[i, k]).
bool row_like(const Block& b, int var) {
  int j = b.loops.back().var;
  bool found = false;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& load) {
      found |= uses_var(load.index, var) && !uses_var(load.index, j);
    });
  return found;
}

// Block b's exclusive loops [outer, ii) before i index only operands along with j (the weight
// gradient's kh and kw), and the first of its loops k... = [ii + 1, n - 1) (the images) indexes
// some operand those loops index too: each step of the window loops re-reads that operand over
// all of k... (x, once per kh, kw and tile: 90 passes of 12.8 MB per call, bound by the L3 at two
// threads). Where k... has more loops than that one and their bounds use no loop variable and
// cannot raise, the first (and the second) can run outside the tiles and the window loops
// (split_window_order).
bool window_outside(const Block& b, size_t outer, size_t ii) {
  const size_t n = b.loops.size();
  if (outer >= ii || n < ii + 4) return false;
  for (size_t k = ii + 1; k + 1 < n; ++k)
    if (bounds_use_vars(b.loops[k]) || may_raise(b.loops[k].start) || may_raise(b.loops[k].end))
      return false;
  bool slices = false;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& load) {
      bool window = false, first = false;
      for (auto& e : load.index) {
        for (size_t k = outer; k < ii; ++k) window |= uses_var(e, b.loops[k].var);
        first |= uses_var(e, b.loops[ii + 1].var);
      }
      slices |= window && first;
    });
  return slices;
}

// Loops from the outermost that may move (qualifies from there, and no bound from there on can
// raise, so none is evaluated where it was not) in contraction order: the exclusive ones, then
// the others in their order, then the last loop (a matmul gradient's db[k, j] += g[i, j] *
// a[i, k] runs k, i, j). The exclusive loops own disjoint elements, so only the others' order
// matters, and it is kept. With `slide` (tile_block), only a block none of whose exclusive loops
// is row-like, and only where its last one then slides over the reductions. Returns b so
// ordered, or nothing where it keeps its order.
std::optional<Block> contraction_order(const Program& p, const Block& b, bool slide = false) {
  size_t n = b.loops.size();
  for (size_t first = 0; first + 2 < n; ++first) {
    std::vector<bool> ex;
    bool raises = false;
    for (size_t k = first; k < n; ++k)
      raises |= may_raise(b.loops[k].start) || may_raise(b.loops[k].end);
    if (raises || !qualifies(p, b, first, &ex)) continue;
    // Among the exclusive loops, the ones that index an operand without the last loop (matmul's
    // i in a[i, k]; conv2d's weight gradient's output channel in dy) go last, next to the
    // reductions, where tile_registers takes its rows from; the ones that index only operands
    // along with the last loop (the weight gradient's kh and kw, in x) go first.
    std::vector<bool> rows;
    for (size_t k = 0; k < n; ++k) rows.push_back(ex[k] && row_like(b, b.loops[k].var));
    // Without such a loop no rows share a load, and the window's loops first would read all of
    // the reductions' operands again at each of their steps: a depthwise convolution's weight
    // gradient, dw[kh, kw, c] sum= dy[n, oh, ow, c] * x[n, oh + kh, ow + kw, c], ran 6.8-7.0 ms
    // so and 1.7-1.9 in loop order's n, oh, ow, kh, kw, c (8 x 56 x 56 x 128, one thread). The
    // block stays so, but for tile_block's slide, where the last exclusive loop (kw), next to
    // the reductions, takes the rows, which share dy's loads, and the images and their rows run
    // outside the tiles and the window loops (window_outside) after all.
    if ((std::count(rows.begin() + long(first), rows.end() - 1, true) == 0) != slide) break;
    Block ordered = b;
    std::vector<Loop>& loops = ordered.loops;
    loops.resize(first);
    for (int group : {0, 1, 2})
      for (size_t k = first; k + 1 < n; ++k)
        if (group == 2 ? !ex[k] : ex[k] && rows[k] == (group == 1)) loops.push_back(b.loops[k]);
    loops.push_back(b.loops.back());
    const auto i = first + size_t(std::count(ex.begin() + long(first), ex.end() - 1, true));
    if (slide && (i < first + 2 || !window_outside(ordered, first, i - 1))) break;
    return ordered;
  }
  return std::nullopt;
}

}  // namespace

Program tile_reductions(Program p, int64_t tile) {
  for (auto& b : p.blocks) {
    if (auto ordered = contraction_order(p, b)) b = std::move(*ordered);
    size_t k = reduction_loop(p, b, tile);
    if (k == 0) continue;
    Loop tiles = split_into_tiles(p, b.loops[k], tile);
    b.loops.insert(b.loops.begin(), std::move(tiles));
  }
  return p;
}

namespace {

constexpr int64_t kLeftoverCols = 16;
// The tiles of a block whose images run outside its window loops (window_outside): 8 rows of 32
// columns. In tiles of 6 x 64 that order ran 1.4x slower than the window-outer one (GCC kept the
// row of x in memory, loading it again for each of the 24 multiply-adds); in 8 x 32, 16
// accumulators, it runs as it should (docs/cpu-kernels.md, Register tiling).
constexpr int64_t kWindowRows = 8, kWindowCols = 32;
// The tiles of rows that slide over the reductions (a depthwise weight gradient's kw): 3 rows,
// a 3 x 3 window's, of 64 columns.
constexpr int64_t kSlideRows = 3, kSlideCols = 64;
// The rows a tiling over a range that divides leaves over, in tiles of this many (tile_block).
constexpr int64_t kRaisingRestRows = 2;
// The pixel tiles of a convolution whose row of pixels is a multiple of it (tile_block).
constexpr int64_t kPixelRows = 7;

// The tiled block t (j', i' at `outer`, the window loops, k... from f, r, c) with the first loop
// of k... outside the tiles and the window loops, over the part of its range that runs where the
// loops of k... after it run at least kWindowReduction iterations in all (all of the range or
// none: a test at run time, in the ranges), then t over the rest. Each step of the moved loop
// then reads its slice of the operands from memory once, and every tile and window step reads it
// from cache; the tile, inside that loop, loads its elements and stores them at each step, which
// over images of 4 x 4 pixels cost more than it saved. Where k... has a loop after
// the second and the last runs at least kWindowRowReduction iterations, the part before that runs
// with the second loop (the rows) moved out too: a row's slices stay in L1 across the tiles and
// the window, where an image of 56 x 56 pixels did not stay in L2. Every element receives the same
// contributions in the same order: those of each part in turn. conv2d's weight gradient, C
// drivers (minima of 3-5 runs, ms, one / two threads): 8 x 56 x 56 x 64 with the images outside
// the window alone 23.4-24.5 / 11.8-16.9, outside the tiles with their rows 15.5-15.9 /
// 7.4-11.4; at 128 channels 166-189 / 83-90 -> 66-69 / 55-63; 32 x 28 x 28 x 128, images
// outside the tiles 69 / 40-51 against 93 / 46-57 (with the rows too, 74 / 72-89: hence the
// threshold); 64 x 14 x 14 x 64 8.4-8.7 / 4.6 against 10.6-11 / 4.9-5.1.
void split_window_order(Block t, size_t outer, size_t f, std::vector<Block>& out) {
  const size_t n = t.loops.size() - 2;  // k... is [f, n)
  const Loop first = t.loops[f];
  // `from`, or first's end where the loops [inner, n) run at least `count` iterations in all.
  auto split = [&](Index from, size_t inner, int64_t count) {
    Index runs = idx::constant(1);
    for (size_t k = inner; k < n; ++k) runs = idx::mul(runs, whole_tiles(t.loops[k], 1));
    Index all = idx::min(idx::constant(1), idx::floordiv(runs, idx::constant(count)));
    return idx::add(from, idx::mul(idx::max(idx::sub(first.end, from), idx::constant(0)), all));
  };
  // t over first's [start, end), with first and the `loops` - 1 after it outside the tiles and
  // the window loops.
  auto moved = [&](Index start, Index end, size_t loops) {
    Block outside = t;
    outside.loops[f].start = start;
    outside.loops[f].end = end;
    std::rotate(outside.loops.begin() + long(outer), outside.loops.begin() + long(f),
                outside.loops.begin() + long(f + loops));
    out.push_back(std::move(outside));
  };
  const bool rows = f + 2 < n;  // the images [start, by_rows) run with their rows moved out too
  Index by_rows = rows ? split(first.start, n - 1, kWindowRowReduction) : first.start;
  if (rows) moved(first.start, by_rows, 2);
  Index by_images = split(by_rows, f + 1, kWindowReduction);
  moved(by_rows, by_images, 1);
  t.loops[f].start = by_images;
  out.push_back(std::move(t));
}

// The columns b's tiles of 16 leave over (fewer than 16, j = [j0, n) its last loop) in its whole
// row tiles (loop ii, over whole tiles of `rows`), as a tile of `rows` rows of 16 lanes: j runs
// [0, n - j0) in rows of lanes (LoopPlan::tile_width), where the statement is lane_wise along it
// (each load along j reads a row, j on its last axis). Left as they were, the columns
// accumulated into memory at every k, a chain of loads and stores: matmul 512 x 512 by 10 at one
// thread ran at 3.1 GFLOP/s (1.70 ms), in lanes at 33 (0.16 ms), as a C driver measured, with
// the same bits. Appends the tile to `out`; false, and nothing appended, where it does not apply.
bool lanes_over_columns(Program& p, Block b, size_t ii, size_t outer, int64_t rows,
                        std::vector<Block>& out) {
  const size_t n = b.loops.size();
  const Loop j = b.loops.back();
  if (!sums_in_lanes(p, b, false)) return false;
  const int c = p.num_vars++;
  replace_var(b, j.var, idx::add(j.start, idx::var(c)));
  Loop rest;
  auto [ti, r] = split_whole_tiles(p, b, ii, rows, &rest);
  if (empty(ti)) return false;
  Loop lanes = counted(c, idx::sub(j.end, j.start));
  lanes.plan.tile_width = int(kLeftoverCols);
  lanes.stmts = std::move(b.loops.back().stmts);
  b.loops.resize(n - 1);
  b.loops.erase(b.loops.begin() + long(ii));
  b.loops.insert(b.loops.begin() + long(outer), std::move(ti));
  r.plan.unroll = true;
  b.loops.push_back(std::move(r));
  b.loops.push_back(std::move(lanes));
  out.push_back(std::move(b));
  return true;
}

// `part`'s ranges on the loops of `before`, the block tile_block slid it from (the same
// variables in another order), where the slide leaves it untiled: there the window's loops first
// would read the reductions' operands again at each of their steps (contraction_order).
Block unslid(Block part, const Block* before) {
  if (!before) return part;
  Block b = *before;
  b.partition = part.partition;
  for (Loop& l : b.loops)
    if (const Loop* m = loop_of(part, l.var)) l.start = m->start, l.end = m->end;
  return b;
}

// tile_registers on one block, appending what it becomes to `out`. Where i's range may raise
// (conv2d's output pixels divide by the stride), `raising_rows` rows, and the rows left over in
// tiles of kRaisingRestRows counted on from them: a tile that started where the first ones
// stopped would repeat i's end, a division the compiler cannot hoist, in its indices, which made
// such tiles slower than none. Elsewhere `rows`, and the rows left over again in tiles of 4 (520
// rows: 86 tiles of 6, then 1 of 4), then of 2 where 2 rows hold 8 vectors, enough to cover
// the multiply-adds' latency (AVX-512's 2 x 64, 128 rows: 21 of 6, 1 of 2, matmul 128^3 3% faster
// than with 2 single rows, which read each of B's vectors for 1 multiply-add; not the weight
// gradient's 2 x 32, whose compile took a third longer). The rows the last level leaves run in
// runs of `row_cols` columns, i unchanged, so no start repeats: accumulated into memory at every k
// they were conv2d's 2 pixels of 56 left by tiles of 6, and 8% of its time (a C driver: 20.0
// -> 18.4 ms). Each level is more code to compile: conv2d's weight gradient compiled in 0.37 s with
// tiles of 8 alone, 0.84 with 12 and 4, 1.25 with 12, 8 and 4; conv2d's tiles of 2 took it from
// 0.73 to 1.03 s, depthwise conv2d's from 1.13 to 1.55 s (C drivers: conv2d 1% faster at 56 x 56
// pixels, 4% at 28 x 28 and 14 x 14; depthwise conv2d 18% at 56 x 56).
void tile_block(Program& p, Block b, int64_t rows, int64_t raising_rows, int64_t cols,
                int64_t row_cols, int vector_bytes, std::vector<Block>& out,
                const Block* slid = nullptr) {
  size_t n = b.loops.size();
  // i, k..., j: j the last loop, i the first exclusive one before it, k... the loops between.
  size_t ii = n;  // the position of i, n when the block does not qualify
  for (size_t at = n >= 3 ? n - 2 : 0; at-- > 0;) {
    std::vector<bool> ex;  // qualifying from an earlier loop is stricter: stop at the first no
    if (!qualifies(p, b, at, &ex) || !ex[n - 1] || ex[n - 2]) break;
    if (!ex[at]) continue;
    ii = at;
    break;
  }
  // A written element that moves with k... (a window's scatter, scatter_tiling.h) cannot be
  // held across them: such a tile would gain nothing.
  for (size_t k = ii + 1; ii < n && k + 1 < n; ++k)
    for (auto& s : b.loops.back().stmts)
      if (uses_var(s.index, b.loops[k].var)) ii = n;
  if (ii == n) {
    // Exclusive loops after the reductions (a depthwise weight gradient's kh, kw; in its forward
    // pass the pixels, exclusive, run outside the window) may slide over them (contraction_order).
    if (auto slide = slid ? std::nullopt : contraction_order(p, b, true))
      return tile_block(p, std::move(*slide), rows, raising_rows, cols, row_cols, vector_bytes, out,
                        &b);
    return out.push_back(unslid(std::move(b), slid));
  }
  const bool fresh = !b.partition;              // not a part of a block this pass has cut already
  if (fresh) b.partition = ++p.num_partitions;  // the blocks below cut b along i and j
  const Loop i = b.loops[ii];
  // Rows pay where some load is the same for all of them (B's k, j in matmul; the weights in a
  // convolution): read once, it feeds `rows` operations. Where every load moves with i (a pool's
  // window over x), rows only add registers: the tile is a run of `row_cols` columns, i, j', k...,
  // c, then the columns left over.
  bool shared = false;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& load) { shared |= !uses_var(load.index, i.var); });
  if (!shared && slid) return out.push_back(unslid(std::move(b), slid));
  if (!shared) return tile_columns(p, std::move(b), ii + 1, row_cols, false, out);
  const bool rows_alone = row_like(b, i.var);  // some operand holds i without j
  const bool first_rows = rows > 4;            // not the tiles of the rows a first tiling left over
  const bool raises = may_raise(i.start) || may_raise(i.end);
  if (raises) rows = raising_rows;
  // Where i indexes an operand without j (a contraction's rows), the tiles run outside the
  // exclusive loops before i that index only operands along with j (the weight gradient's kh
  // and kw): a team then shares o' x c' (16 tiles for 64 x 64) rather than kh (3 iterations).
  // Those loops are exclusive, so the order of contributions stays. (A pool's or a depthwise
  // convolution's rows, pixels, read x along j too: their loops stay as they are.)
  // So do the tiles of rows that slide over the reductions in a window (contraction_order).
  size_t outer = ii;
  for (std::vector<bool> ex; outer > 0 && qualifies(p, b, outer - 1, &ex) && ex[outer - 1] &&
                             !row_like(b, b.loops[outer - 1].var);
       ex.clear())
    --outer;
  if (!rows_alone && !slid) outer = ii;
  const bool window = (rows > 4 || slid) && window_outside(b, outer, ii);
  // Where every load that moves with i moves with j too (depthwise conv2d's x, whose rows are
  // pixels and columns channels), each multiply-add loads its own element and the rows share only
  // the weights: a tile of 6 x 64 holds 24 accumulators and 4 weight vectors. 8 x 32 holds 16 and
  // 2 and ran 12-16% faster (depthwise conv2d 8 x 56 x 56 x 128, one thread, a C driver: 6 x 64
  // 1.45-1.57 ms, 8 x 32 1.25-1.34, 4 x 32 1.28-1.41, 6 x 32 1.42-1.51, 7 x 32 1.53-1.54).
  // The rows such a first tiling (fresh) leaves over run in tiles of 6, then 4: the gathered
  // depthwise gradient's 54 inner pixels a row left 6, a tile of 4 and 2 one by one, 2-3.5%
  // of the whole gradient at one and two threads (C drivers, medians of 41 interleaved).
  const bool own_loads = fresh && rows > 4 && vector_bytes >= 64 && !rows_alone;
  if (slid) {
    rows = std::min(rows, kSlideRows);
    cols = vector_bytes >= 64 ? kSlideCols : kWindowCols;
  } else if (window || own_loads) {
    rows = kWindowRows;
    cols = kWindowCols;
  }
  // A convolution's pixels (i divides, and indexes the input without j) in tiles of kPixelRows
  // where their count is a multiple of it, a test at run time: most image networks' rows are
  // (224 down to 7 pixels), and the pixels tiles of 6 leave ran in pairs or one at a time
  // (conv2d at one thread, a C driver: 14.1 -> 11.8 ms over 28 x 28 pixels, 14.6 -> 12.3 over
  // 7 x 7, 12.2 -> 11.8 over 56 x 56). Elsewhere tiles of 7 would leave up to 6 rows one by one,
  // where those of 6 leave pairs (32 x 32: 12.4, 14.3 with 7): the tiles of `rows` run there,
  // first. Both parts start at i's start, so no index repeats a division (above); one is empty.
  if (raises && fresh && !window && vector_bytes >= 64 && rows_alone) {
    const Index n = idx::max(idx::sub(i.end, i.start), idx::constant(0));
    const Index other = idx::min(idx::floormod(n, idx::constant(kPixelRows)), idx::constant(1));
    Block part = b;
    part.loops[ii].end = idx::add(i.start, idx::mul(n, other));
    b.loops[ii].end = idx::add(i.start, idx::mul(n, idx::sub(idx::constant(1), other)));
    tile_block(p, std::move(part), rows, rows, cols, row_cols, vector_bytes, out);
    rows = kPixelRows;
  }
  // Narrower vectors than AVX-512's come with 16 registers, not 32: a tile of 6 x 64 f32 needs 48
  // of AVX2's and GCC kept it on the stack (matmul 512^3 at 55 GFLOP/s compiled for x86-64-v3),
  // and a plain tile of 16 columns GCC vectorized across its rows, with shuffles (46). There the
  // tile is 16 columns in rows of lanes, vectors of the target's width (LoopPlan::tile_width),
  // in lane_rows (81 GFLOP/s).
  const bool sum_in_lanes = sums_in_lanes(p, b, false);
  const bool lanes = vector_bytes < 64 && !window && sum_in_lanes;
  if (lanes) {
    cols = kLeftoverCols;
    rows = lane_rows(rows, vector_bytes);
  }
  // The whole tiles of `width` columns of t (and of its whole row tiles): j', i', k..., r, c.
  // Gives the block, or none when there are none, and the columns and rows left over.
  // With `after`, the tiles of `tile_rows` after the whole tiles of `after` rows
  // (split_whole_tiles).
  auto tiles = [&](Block t, int64_t width, Loop* rest_j, Loop* rest_i, int64_t tile_rows = 0,
                   int64_t after = 0) -> std::optional<Block> {
    auto [tj, c] = split_whole_tiles(p, t, n - 1, width, rest_j);
    auto [ti, r] = split_whole_tiles(p, t, ii, tile_rows ? tile_rows : rows, rest_i, after);
    if (empty(ti) || empty(tj)) return std::nullopt;
    c.stmts = std::move(t.loops.back().stmts);
    t.loops.resize(n - 1);
    t.loops.erase(t.loops.begin() + long(ii));
    // Column tiles inside row tiles where no operand has rows alone (reduction_tiling.h).
    if (!window && !rows_alone) std::swap(tj, ti);
    t.loops.insert(t.loops.begin() + long(outer), {std::move(tj), std::move(ti)});
    // Unrolled, the rows leave GCC a tile of rows x (width / lanes) vectors it keeps in
    // registers; left to its own heuristics it kept batched matmul's 12 x 32 tile on the stack
    // (2.4x slower).
    r.plan.unroll = true;
    // A tile of 16 columns runs in rows of lanes on any target: with AVX-512 too, one vector a
    // row, 3-8% faster than the plain tile (matmul 512 x 512 by 48, 16, 560: a C driver).
    if (sum_in_lanes && (lanes || width == kLeftoverCols)) c.plan.tile_width = int(width);
    t.loops.push_back(std::move(r));
    t.loops.push_back(std::move(c));
    return t;
  };
  Loop rest_i, rest_j;
  std::optional<Block> tiled = tiles(b, cols, &rest_j, &rest_i);
  if (!tiled) {
    if (slid && rows > 1)
      return tile_block(p, std::move(b), 1, 1, cols, row_cols, vector_bytes, out, slid);
    return out.push_back(unslid(std::move(b), slid));
  }
  if (window)
    split_window_order(std::move(*tiled), outer, ii + 2, out);
  else
    out.push_back(std::move(*tiled));
  // The columns left over, in the same rows, in tiles of 16: left plain, they accumulated into
  // memory at every k, a chain of loads and stores (matmul 528^3 ran 30% slower than 512^3, its
  // 16 columns left over 12x slower). One level: a level of 32 between 64 and 16 ran no faster
  // (512 x 512 by 560 columns: 2.73 ms, 2.69-2.72 without; by 96, 0.54-0.56 and 0.50) and added
  // a fifth to the compile of every contraction (attention 1.95 -> 2.49 s). Not where a load is
  // checked: such a tile is printed up to three times (register_tiles.h), and the compile time it
  // costs (depthwise conv2d 0.7 -> 2.0 s) outweighs a window's few steps of k.
  bool checked = false;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& load) { checked |= load.checked; });
  if (!checked && cols > kLeftoverCols) {
    Block t = b;
    t.loops[n - 1].start = rest_j.start;
    Loop same_rows;  // the rows left over, as the first tiles left them
    if (auto narrow = tiles(std::move(t), kLeftoverCols, &rest_j, &same_rows))
      out.push_back(std::move(*narrow));
  }
  Block rest_rows = b, rest_cols = b;
  rest_rows.loops[ii].start = rest_i.start;
  rest_cols.loops[ii].end = rest_i.start;
  rest_cols.loops[n - 1].start = rest_j.start;
  // Where i's range divides, the rows left over run in tiles of kRaisingRestRows counted on from
  // the whole tiles (split_whole_tiles' `after`), so no index repeats the division. One row at a
  // time reads each weight for 1 multiply-add, from L2 where the weights outgrow L1 (conv2d's 2
  // pixels of 56 left by tiles of 6 took 7% of its time for 3.6% of its work). With AVX-512
  // only: in rows of lanes, 2 x 16 columns hold 4 vectors of AVX2, too few to cover the latency
  // of their multiply-adds where a run of 64 columns holds 8 (conv2d at x86-64-v3 over 28 x 28
  // pixels ran 4% slower with them), and depthwise conv2d's plain 2 x 64 ran 2% slower there.
  Loop pair_rest_i, pair_rest_j;
  std::optional<Block> pairs;
  if (raises && first_rows && vector_bytes >= 64 && rows > kRaisingRestRows &&
      rows % kRaisingRestRows == 0 && !empty(rest_rows.loops[ii]) && !empty(rest_rows.loops[n - 1]))
    pairs = tiles(b, cols, &pair_rest_j, &pair_rest_i, kRaisingRestRows, rows);
  if (pairs) {
    out.push_back(std::move(*pairs));
    Block pair_cols = b;  // the columns left over in those rows
    pair_cols.loops[ii].start = rest_i.start;
    pair_cols.loops[ii].end = pair_rest_i.start;
    pair_cols.loops[n - 1].start = pair_rest_j.start;
    if (!empty(pair_cols.loops[n - 1])) out.push_back(std::move(pair_cols));
    rest_rows.loops[ii].start = pair_rest_i.start;
  }
  // A slide's tiles of 1 row leave none over.
  if (!empty(rest_rows.loops[ii]) && !empty(rest_rows.loops[n - 1]) && (!slid || rows > 1)) {
    if (slid)
      tile_block(p, std::move(rest_rows), 1, 1, cols, row_cols, vector_bytes, out, slid);
    else if (!raises && rows > 2 && (first_rows || 2 * cols >= 8 * (vector_bytes / 4)))
      tile_block(p, std::move(rest_rows),
                 first_rows ? (own_loads ? rows - 2 : std::min<int64_t>(rows - 1, 4)) : 2,
                 raising_rows, cols, row_cols, vector_bytes, out);
    else
      tile_columns(p, std::move(rest_rows), ii + 1, row_cols, false, out);
  }
  if (!empty(rest_cols.loops[ii]) && !empty(rest_cols.loops[n - 1]) &&
      (checked || cols < kLeftoverCols || !lanes_over_columns(p, rest_cols, ii, outer, rows, out)))
    out.push_back(unslid(std::move(rest_cols), slid));
}

}  // namespace

Program tile_registers(Program p, int64_t rows, int64_t raising_rows, int64_t cols,
                       int64_t row_cols, int vector_bytes) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks)
    tile_block(p, std::move(b), rows, raising_rows, cols, row_cols, vector_bytes, blocks);
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops
