#include "uops/passes/fill_trimming.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Block bi's tile, when it keeps one that starts from the constant c and stores its box of y
// whenever it runs the tile's first round: the block, the tile's loop, and whether that is only
// where the block runs on its team and the loops that round is in run (LoopPlan::fill_unless)
// rather than always.
struct TileAfter {
  size_t block, loop;
  bool guarded;
};
std::optional<TileAfter> tile_of(const Program& p, size_t bi, int y, double c) {
  const Block& b = p.blocks[bi];
  size_t k = 0;
  while (k < b.loops.size() && !b.loops[k].plan.tile) ++k;
  if (k == b.loops.size() || b.loops.back().stmts[0].tensor != y || !passes::stores_when_run(b))
    return std::nullopt;
  const std::optional<double>& start = b.loops[k].plan.tile_start;
  if (!start || *start != c || std::signbit(*start) != std::signbit(c)) return std::nullopt;
  // Thread copies add into the tensor; a tile that loads after its first round needs it filled
  // where that round does not run.
  return TileAfter{
      bi, k, !b.loops[0].plan.thread_copies.empty() || !b.loops[k].plan.tile_start_first.empty()};
}

// The first block after fill f to touch its tensor y, with such a tile.
std::optional<TileAfter> tile_after(const Program& p, size_t f, int y, double c) {
  for (size_t bi = f + 1; bi < p.blocks.size(); ++bi) {
    TensorSets sets = tensor_sets(p.blocks[bi], int(p.tensors.size()));
    if (sets.reads[size_t(y)] || sets.writes[size_t(y)]) return tile_of(p, bi, y, c);
  }
  return std::nullopt;
}

// Box a of a tile, grown by box b of another block of its partition (Block::partition), which
// writes other elements: where their ranges are the same on every axis but one, where they start
// at one place, one of the two is empty, and together they store the box whose extent there is
// the sum of theirs (the pixel tiles of 6 and of 7 of a convolution, tile_registers). Otherwise
// a stays as it is.
void add_alternative(passes::TileBox& a, const passes::TileBox& b) {
  std::optional<size_t> cut;
  for (size_t x = 0; x < a.size(); ++x) {
    bool same_start = a[x] && b[x] ? equal(a[x]->first, b[x]->first) : !a[x] && !b[x];
    if (same_start && (!a[x] || equal(a[x]->second, b[x]->second))) continue;
    if (cut || !same_start) return;
    cut = x;
  }
  auto extent = [&](const passes::TileBox& t) {
    return idx::max(idx::sub(t[*cut]->second, t[*cut]->first), idx::constant(0));
  };
  if (cut) a[*cut]->second = idx::add(a[*cut]->first, idx::add(extent(a), extent(b)));
}

}  // namespace

Program plan_fill_trimming(Program p) {
  for (size_t f = p.blocks.size(); f-- > 0;) {
    const Block& fill = p.blocks[f];
    const Stmt& s = fill.loops.back().stmts.empty() ? Stmt{} : fill.loops.back().stmts[0];
    if (s.kind != StmtKind::assign || s.tensor < 0 || !fills_whole(p, fill, s.tensor)) continue;
    auto tile = tile_after(p, f, s.tensor, s.value->constant);
    if (!tile) continue;
    auto box = passes::stored_box(p, p.blocks[tile->block], tile->loop, tile->guarded);
    if (!box) continue;
    // The later tiles of its partition that are its alternatives (add_alternative).
    const int part = p.blocks[tile->block].partition;
    for (size_t b = tile->block + 1;
         part && !tile->guarded && b < p.blocks.size() && p.blocks[b].partition == part; ++b)
      if (auto other = tile_of(p, b, s.tensor, s.value->constant); other && !other->guarded)
        if (auto other_box = passes::stored_box(p, p.blocks[b], other->loop))
          add_alternative(*box, *other_box);
    passes::keep_outside(p, f, *box, tile->guarded ? tile->block : 0);
  }
  return p;
}

}  // namespace uops
