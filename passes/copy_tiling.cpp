#include "uops/passes/copy_tiling.h"

#include <algorithm>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;
using namespace passes;

Program tile_copies(Program p, int64_t tile) {
  for (auto& b : p.blocks) {
    std::vector<bool> ex;
    size_t n = b.loops.size();
    if (n < 2 || !qualifies(p, b, 0, &ex) || std::find(ex.begin(), ex.end(), false) != ex.end())
      continue;
    const Loop& j = b.loops.back();
    bool assigns = true, stores_along_j = true;
    for (auto& s : j.stmts) {
      assigns &= s.kind == StmtKind::assign;
      stores_along_j &= !s.index.empty() && s.index.back()->kind == IndexKind::Var &&
                        s.index.back()->var == j.var;
    }
    // A load whose last axis is another loop's variable and that moves along j elsewhere.
    int across = -1;
    for (auto& s : j.stmts)
      for_each_load(s.value, [&](const ValueNode& n) {
        if (n.index.empty() || n.index.back()->kind != IndexKind::Var ||
            n.index.back()->var == j.var)
          return;
        for (auto& e : n.index) across = uses_var(e, j.var) ? n.index.back()->var : across;
      });
    auto at = std::find_if(b.loops.begin(), b.loops.end() - 1,
                           [&](const Loop& l) { return l.var == across; });
    if (!assigns || !stores_along_j || at == b.loops.end() - 1) continue;
    bool raises = false;
    for (const Loop* l : {&*at, &b.loops.back()})
      raises |= may_raise(l->start) || may_raise(l->end);
    if (raises) continue;
    // i becomes the tiles i' in place and moves in, next to j, as the rows of a tile.
    Loop i = *at;
    Loop i_tiles = split_into_tiles(p, i, tile),
         j_tiles = split_into_tiles(p, b.loops.back(), tile);
    Loop inner = std::move(b.loops.back());
    b.loops.pop_back();
    *std::find_if(b.loops.begin(), b.loops.end(), [&](const Loop& l) { return l.var == i.var; }) =
        std::move(i_tiles);
    b.loops.push_back(std::move(j_tiles));
    b.loops.push_back(std::move(i));
    b.loops.push_back(std::move(inner));
    b.loops[b.loops.size() - 2].plan.tile_transpose = copies_transposed(p, b);
  }
  return p;
}

}  // namespace uops
