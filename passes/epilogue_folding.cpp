#include "uops/passes/epilogue_folding.h"

#include <optional>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Block b maps every element of tensor t in place (ir::assigns_each_element): the value it
// assigns loads only t at the element it assigns, and cannot raise.
bool maps_whole(const Program& p, const Block& b, int t) {
  if (!assigns_each_element(p, b, t)) return false;
  const Stmt& s = b.loops.back().stmts[0];
  bool own = !may_raise(s.value);
  for_each_load(s.value, [&](const ValueNode& n) {
    own &= n.tensor == t && !n.checked && same_index(n.index, s.index);
  });
  return own;
}

// Every access of block b to tensor t lies outside the box: on some cut axis, at a loop
// variable whose loop, with bounds free of loop variables, starts where the box ends.
bool outside(const Block& b, int t, const passes::TileBox& box) {
  for (const Access& a : block_accesses(b)) {
    if (a.tensor != t) continue;
    bool out = false;
    for (size_t x = 0; x < box.size() && !out; ++x) {
      if (!box[x] || a.index[x]->kind != IndexKind::Var) continue;
      for (const Loop& l : b.loops)
        out |= l.var == a.index[x]->var && !bounds_use_vars(l) && equal(l.start, box[x]->second);
    }
    if (!out) return false;
  }
  return true;
}

// The tile that last wrote tensor t before block e, where the map may move into its store: its
// block and loop.
std::optional<std::pair<size_t, size_t>> tile_before(const Program& p, size_t e, int t) {
  for (size_t bi = e; bi-- > 0;) {
    const Block& b = p.blocks[bi];
    TensorSets sets = tensor_sets(b, int(p.tensors.size()));
    if (!sets.reads[size_t(t)] && !sets.writes[size_t(t)]) continue;
    size_t k = 0;
    while (k < b.loops.size() && !b.loops[k].plan.tile) ++k;
    if (k == b.loops.size()) continue;  // a block between, checked against the box later
    if (b.loops.back().stmts[0].tensor != t || !passes::stores_every_time(b) ||
        b.loops[k].plan.tile_stream || b.loops[k].plan.tile_store)
      return std::nullopt;
    return std::pair{bi, k};
  }
  return std::nullopt;
}

}  // namespace

Program plan_epilogue_folding(Program p) {
  for (size_t e = p.blocks.size(); e-- > 0;) {
    const Block& map = p.blocks[e];
    const auto& stmts = map.loops.back().stmts;
    if (stmts.size() != 1 || stmts[0].tensor < 0 || !maps_whole(p, map, stmts[0].tensor)) continue;
    const int y = stmts[0].tensor;
    auto tile = tile_before(p, e, y);
    if (!tile) continue;
    const Block& t = p.blocks[tile->first];
    auto box = passes::stored_box(p, t, tile->second);
    bool clear = box.has_value();
    for (size_t bi = tile->first + 1; clear && bi < e; ++bi) clear = outside(p.blocks[bi], y, *box);
    if (!clear) continue;
    // g over the tile's index: the map's variable of axis a becomes the tile's index on axis a.
    const std::vector<Index>& to = t.loops.back().stmts[0].index;
    Value g = rewrite(stmts[0].value, nullptr, [&](const Index& i) {
      return rewrite(i, [&](const Index& v) -> Index {
        for (size_t a = 0; a < map.loops.size(); ++a)
          if (v->kind == IndexKind::Var && v->var == map.loops[a].var) return to[a];
        return nullptr;
      });
    });
    const size_t bi = tile->first, k = tile->second;
    if (!passes::keep_outside(p, e, *box)) continue;
    p.blocks[bi].loops[k].plan.tile_store = std::move(g);
  }
  return p;
}

}  // namespace uops
