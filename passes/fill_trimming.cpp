#include "uops/passes/fill_trimming.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// The first block after fill f to touch its tensor, when it keeps a tile that starts from the
// fill's constant and stores its box whenever it runs its tile's first round: the block, the
// tile's loop, and whether that is only where the block runs on its team and the loops that
// round is in run (LoopPlan::fill_unless) rather than always.
struct TileAfter {
  size_t block, loop;
  bool guarded;
};
std::optional<TileAfter> tile_after(const Program& p, size_t f, int y, double c) {
  for (size_t bi = f + 1; bi < p.blocks.size(); ++bi) {
    const Block& b = p.blocks[bi];
    TensorSets sets = tensor_sets(b, int(p.tensors.size()));
    if (!sets.reads[size_t(y)] && !sets.writes[size_t(y)]) continue;
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
  return std::nullopt;
}

}  // namespace

Program plan_fill_trimming(Program p) {
  for (size_t f = p.blocks.size(); f-- > 0;) {
    const Block& fill = p.blocks[f];
    const Stmt& s = fill.loops.back().stmts.empty() ? Stmt{} : fill.loops.back().stmts[0];
    if (s.kind != StmtKind::assign || s.tensor < 0 || !fills_whole(p, fill, s.tensor)) continue;
    auto tile = tile_after(p, f, s.tensor, s.value->constant);
    if (!tile) continue;
    if (auto box = passes::stored_box(p, p.blocks[tile->block], tile->loop, tile->guarded))
      passes::keep_outside(p, f, *box, tile->guarded ? tile->block : 0);
  }
  return p;
}

}  // namespace uops
