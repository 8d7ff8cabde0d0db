#include "uops/passes/fill_trimming.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

using Range = std::pair<Index, Index>;  // [lo, hi)

const Loop* loop_of(const Block& b, int var) {
  for (auto& l : b.loops)
    if (l.var == var) return &l;
  return nullptr;
}

// The box of its tensor that the tile around loop k of block t stores, per axis [lo, hi), or
// nothing for the whole axis; none when the index is not such a box (fill_trimming.h).
std::optional<std::vector<std::optional<Range>>> stored_box(const Program& p, const Block& t,
                                                            size_t k) {
  const Stmt& s = t.loops.back().stmts[0];
  std::vector<int> seen;
  auto range = [&](const Index& v, Range& r) {
    const Loop* l = v->kind == IndexKind::Var ? loop_of(t, v->var) : nullptr;
    if (!l || bounds_use_vars(*l) || std::count(seen.begin(), seen.end(), v->var)) return false;
    seen.push_back(v->var);
    r = {l->start, l->end};
    return true;
  };
  std::vector<std::optional<Range>> box;
  for (size_t a = 0; a < s.index.size(); ++a) {
    const Index& e = s.index[a];
    Range r;
    if (e->kind == IndexKind::Add && e->a->kind == IndexKind::Mul) {
      // t * R + r: t's range [0, n) times R, when r runs over [0, R).
      const Index& m = e->a;
      int64_t size = 0, start = -1, in_start = -1, in_end = -1;
      bool var_first = m->a->kind == IndexKind::Var;
      Range in;
      if (!is_const(var_first ? m->b : m->a, &size) || !range(var_first ? m->a : m->b, r) ||
          !range(e->b, in) || !is_const(r.first, &start) || start != 0 ||
          !is_const(in.first, &in_start) || in_start != 0 || !is_const(in.second, &in_end) ||
          in_end != size)
        return std::nullopt;
      r.second = idx::mul(r.second, idx::constant(size));
    } else if (!range(e, r)) {
      return std::nullopt;
    }
    int64_t lo = -1;
    bool whole = is_const(r.first, &lo) && lo == 0 && equal(r.second, p.tensors[s.tensor].shape[a]);
    box.push_back(whole ? std::nullopt : std::optional<Range>(r));
  }
  for (size_t x = 0; x < k; ++x)
    if (!std::count(seen.begin(), seen.end(), t.loops[x].var)) return std::nullopt;
  return box;
}

// Every division or modulo of `e` that may raise is one of `shape`'s.
bool raises_as_shape(const Index& e, const std::vector<Index>& shape) {
  auto raising = [](const IndexNode& n) {
    int64_t d = 0;
    return (n.kind == IndexKind::Div || n.kind == IndexKind::Mod) && !(is_const(n.b, &d) && d > 0);
  };
  std::vector<Index> known;
  for (auto& axis : shape)
    visit(axis, [&](const IndexNode& n) {
      if (raising(n)) known.push_back(idx::binary(n.kind, n.a, n.b));
    });
  bool ok = true;
  visit(e, [&](const IndexNode& n) {
    if (!raising(n)) return;
    Index node = idx::binary(n.kind, n.a, n.b);
    ok &= std::any_of(known.begin(), known.end(), [&](const Index& k) { return equal(k, node); });
  });
  return ok;
}

// The first block after fill f to touch its tensor, when it keeps a tile that starts from the
// fill's constant and always stores its box: the block and the tile's loop.
std::optional<std::pair<size_t, size_t>> tile_after(const Program& p, size_t f, int y, double c) {
  for (size_t bi = f + 1; bi < p.blocks.size(); ++bi) {
    const Block& b = p.blocks[bi];
    TensorSets sets = tensor_sets(b, int(p.tensors.size()));
    if (!sets.reads[size_t(y)] && !sets.writes[size_t(y)]) continue;
    const Stmt& s = b.loops.back().stmts.empty() ? Stmt{} : b.loops.back().stmts[0];
    if (s.tensor != y || s.checked || !b.loops[0].plan.thread_copies.empty()) return std::nullopt;
    for (size_t k = 0; k < b.loops.size(); ++k) {
      const LoopPlan& plan = b.loops[k].plan;
      // A test of an empty range in front of the tile skips its store.
      if (plan.empty_test) return std::nullopt;
      if (!plan.tile) continue;
      if (!plan.tile_start || *plan.tile_start != c ||
          std::signbit(*plan.tile_start) != std::signbit(c))
        return std::nullopt;
      return std::pair{bi, k};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Program plan_fill_trimming(Program p) {
  // The row-local run each block is in: its first block, or -1.
  std::vector<long> run(p.blocks.size(), -1);
  for (size_t bi = 0; bi < p.blocks.size(); ++bi)
    for (size_t i = 0; i <= size_t(p.blocks[bi].loops[0].plan.row_local) && bi + i < run.size();
         ++i)
      if (p.blocks[bi].loops[0].plan.row_local) run[bi + i] = long(bi);
  for (size_t f = p.blocks.size(); f-- > 0;) {
    const Block& fill = p.blocks[f];
    const Stmt& s = fill.loops.back().stmts.empty() ? Stmt{} : fill.loops.back().stmts[0];
    if (s.kind != StmtKind::assign || s.tensor < 0 || !fills_whole(p, fill, s.tensor)) continue;
    const int y = s.tensor;
    const double c = s.value->constant;
    auto tile = tile_after(p, f, y, c);
    if (!tile) continue;
    auto box = stored_box(p, p.blocks[tile->first], tile->second);
    if (!box) continue;
    // A run's shared loop keeps its range.
    if ((*box)[0] && run[f] >= 0) continue;
    const std::vector<Index>& shape = p.tensors[size_t(y)].shape;
    bool ok = true;
    for (auto& r : *box)
      if (r) ok &= raises_as_shape(r->first, shape) && raises_as_shape(r->second, shape);
    if (!ok) continue;
    // Each tiled axis in turn: its sides of the box, the axes before it within the box.
    std::vector<Block> pieces;
    for (size_t a = 0; a < box->size(); ++a) {
      if (!(*box)[a]) continue;
      auto side = [&](Index start, Index end) {
        Block q = fill;
        for (size_t before = 0; before < a; ++before)
          if ((*box)[before]) {
            q.loops[before].start = (*box)[before]->first;
            q.loops[before].end = (*box)[before]->second;
          }
        q.loops[a].start = std::move(start);
        q.loops[a].end = std::move(end);
        if (!pieces.empty() && run[f] == long(f)) q.loops[0].plan = {};  // in the run, plain
        pieces.push_back(std::move(q));
      };
      int64_t lo = -1;
      if (!is_const((*box)[a]->first, &lo) || lo != 0) side(idx::constant(0), (*box)[a]->first);
      side((*box)[a]->second, shape[a]);
    }
    if (pieces.empty()) continue;
    if (run[f] >= 0) p.blocks[size_t(run[f])].loops[0].plan.row_local += int(pieces.size()) - 1;
    // Where the fill led its run, the first piece does (it keeps the run's plan and length).
    if (run[f] == long(f)) pieces[0].loops[0].plan = p.blocks[f].loops[0].plan;
    p.blocks.erase(p.blocks.begin() + long(f));
    p.blocks.insert(p.blocks.begin() + long(f), pieces.begin(), pieces.end());
  }
  return p;
}

}  // namespace uops
