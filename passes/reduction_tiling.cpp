#include "uops/passes/reduction_tiling.h"

#include <algorithm>

#include "accesses.h"

namespace uops {

using namespace ir;

namespace {

bool fixed(const Index& e) {
  return !uses_any_var(e) && !uses_data(e);
}

// Every access to a written tensor holds exactly `var` on one common axis.
bool exclusive(const std::vector<passes::Access>& accesses, const std::vector<bool>& written,
               int var) {
  std::vector<std::vector<bool>> axes(written.size());  // per tensor: axes holding var so far
  for (auto& a : accesses) {
    if (!written[a.tensor]) continue;
    std::vector<bool> here(a.index.size());
    for (size_t x = 0; x < a.index.size(); ++x)
      here[x] = a.index[x]->kind == IndexKind::Var && a.index[x]->value == var;
    auto& common = axes[a.tensor];
    if (common.empty()) common = here;
    for (size_t x = 0; x < here.size(); ++x) common[x] = common[x] && here[x];
  }
  for (size_t t = 0; t < written.size(); ++t)
    if (written[t] &&
        (axes[t].empty() || std::find(axes[t].begin(), axes[t].end(), true) == axes[t].end()))
      return false;
  return true;
}

// The position of the loop to tile, or 0 when the block does not qualify.
size_t reduction_loop(const Program& p, const Block& b, int64_t tile) {
  for (size_t k = 0; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < b.loops.size() && !l.stmts.empty())) return 0;
    if (!fixed(l.start) || !fixed(l.end)) return 0;
  }
  for (auto& s : b.loops.back().stmts) {
    if (may_raise(s.value) || may_raise(s.arg)) return 0;
    for (auto& e : s.index)
      if (may_raise(e)) return 0;
  }
  auto accesses = passes::block_accesses(b);
  std::vector<bool> written = passes::tensor_sets(b, int(p.tensors.size())).writes;
  for (size_t k = 0; k + 1 < b.loops.size(); ++k) {
    if (exclusive(accesses, written, b.loops[k].var)) continue;
    int64_t s = 0, e = 0;
    bool small = is_const(b.loops[k].start, &s) && is_const(b.loops[k].end, &e) && e - s <= tile;
    return k > 0 && !small ? k : 0;
  }
  return 0;
}

}  // namespace

Program tile_reductions(Program p, int64_t tile) {
  for (auto& b : p.blocks) {
    size_t k = reduction_loop(p, b, tile);
    if (k == 0) continue;
    Loop& inner = b.loops[k];
    Loop tiles;
    tiles.var = p.num_vars++;
    tiles.start = idx::constant(0);
    Index extent = idx::sub(inner.end, inner.start);
    tiles.end = idx::floordiv(idx::add(extent, idx::constant(tile - 1)), idx::constant(tile));
    Index first = idx::add(inner.start, idx::mul(idx::var(tiles.var), idx::constant(tile)));
    inner.end = idx::min(inner.end, idx::add(first, idx::constant(tile)));
    inner.start = first;
    b.loops.insert(b.loops.begin(), std::move(tiles));
  }
  return p;
}

}  // namespace uops
