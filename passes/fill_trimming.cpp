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

// The first block after fill f to touch its tensor y (p.blocks.size() for none).
size_t first_user(const Program& p, size_t f, int y) {
  for (size_t bi = f + 1; bi < p.blocks.size(); ++bi) {
    TensorSets sets = tensor_sets(p.blocks[bi], int(p.tensors.size()));
    if (sets.reads[size_t(y)] || sets.writes[size_t(y)]) return bi;
  }
  return p.blocks.size();
}

// Block u, when its one statement sums into y (which fill f fills with c) and reads no y, in no
// tile and on no thread copies, at an index that holds each of its loops on one axis as
// stored_box reads it: no two iterations add into one element, so each element it stores ends up
// c plus its one value. The sum becomes that store, and the fill keeps only what lies outside its
// box, clamped to y (the store may be checked): avgpool2d's gradient at a stride equal to its
// window, where the fill was 40% of the kernel.
void store_once(Program& p, size_t f, size_t u, double c) {
  const Block& b = p.blocks[u];
  for (const Loop& l : b.loops)
    if (l.plan.tile || !l.plan.thread_copies.empty() || l.stmts.size() != (&l == &b.loops.back()))
      return;
  const Stmt& s = b.loops.back().stmts[0];
  if (s.kind != StmtKind::accumulate || s.op != ReduceOp::sum ||
      tensor_sets(b, int(p.tensors.size())).reads[size_t(s.tensor)])
    return;
  auto box = passes::stored_box(p, b, b.loops.size());
  if (!box) return;
  for (size_t a = 0; s.checked && a < box->size(); ++a)
    if (auto& r = (*box)[a]) {
      const Index& n = p.tensors[size_t(s.tensor)].shape[a];
      if (int64_t lo = -1; !is_const(r->first, &lo) || lo != 0)
        r->first = idx::min(idx::max(r->first, idx::constant(0)), n);
      r->second = idx::max(idx::min(r->second, n), r->first);
    }
  Program q = p;
  Stmt& store = q.blocks[u].loops.back().stmts[0];
  store.kind = StmtKind::assign;
  store.value = val::binary(BinaryOp::add, val::constant(c), s.value);
  if (passes::keep_outside(q, f, *box)) p = std::move(q);
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
    const double c = s.value->constant;
    const size_t u = first_user(p, f, s.tensor);
    auto tile = u < p.blocks.size() ? tile_of(p, u, s.tensor, c) : std::nullopt;
    if (!tile) {
      if (u < p.blocks.size()) store_once(p, f, u, c);
      continue;
    }
    auto box = passes::stored_box(p, p.blocks[tile->block], tile->loop, tile->guarded);
    if (!box) continue;
    // The later tiles of its partition that are its alternatives (add_alternative).
    const int part = p.blocks[tile->block].partition;
    for (size_t b = tile->block + 1;
         part && !tile->guarded && b < p.blocks.size() && p.blocks[b].partition == part; ++b)
      if (auto other = tile_of(p, b, s.tensor, c); other && !other->guarded)
        if (auto other_box = passes::stored_box(p, p.blocks[b], other->loop))
          add_alternative(*box, *other_box);
    passes::keep_outside(p, f, *box, tile->guarded ? tile->block : 0);
  }
  return p;
}

}  // namespace uops
