#include "ir/parallelism.h"

#include <map>
#include <optional>
#include <tuple>

#include "uops/ir/analysis.h"

namespace uops::ir {

namespace {

enum class Use { read, assign, accumulate };

struct TensorAccess {
  Use kind;
  ReduceOp op;
  std::vector<Index> index;
};

using AccessMap = std::map<int, std::vector<TensorAccess>>;

// Every access of the loops from `depth` inward (the bounds of those inside it), by tensor.
AccessMap region_accesses(const Block& b, size_t depth) {
  AccessMap out;
  for (auto& a : block_accesses(b)) {
    if (a.loop < int(depth) || (a.loop == int(depth) && a.stmt < 0)) continue;
    if (!a.write) {
      out[a.tensor].push_back({Use::read, ReduceOp::sum, a.index});
      continue;
    }
    const Stmt& s = b.loops[a.loop].stmts[a.stmt];
    out[a.tensor].push_back(
        {s.kind == StmtKind::assign ? Use::assign : Use::accumulate, s.op, a.index});
  }
  return out;
}

bool written(const std::vector<TensorAccess>& as) {
  for (auto& a : as)
    if (a.kind != Use::read) return true;
  return false;
}

// `e` is x + v * c + u (a register tile's row or column, passes/reduction_tiling.h), where x
// uses no variable of the loops from `depth` inward and u is a constant in [0, c) (tile_dots) or
// one of those loops with a constant range inside [0, c) (tile_registers): e lies in
// [x + v * c, x + v * c + c). Gives x (null when there is none) and c.
std::optional<std::pair<Index, int64_t>> tile_of(const Index& e, int v, const Block& b,
                                                 size_t depth) {
  // Or one of those loops whose range is one tile of v's, [x + v * c, min(y, x + v * c + c))
  // (tile_copies).
  for (size_t k = depth; e->kind == IndexKind::Var && k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (l.var != e->var) continue;
    int64_t c = one_tile_extent(l);
    const Index& tiles = l.start->kind == IndexKind::Add ? l.start->b : l.start;
    auto t = c > 0 && tiles->kind == IndexKind::Mul ? tile_of(l.start, v, b, depth) : std::nullopt;
    return t && t->second == c ? t : std::nullopt;
  }
  Index rest = e, x, u;
  if (rest->kind == IndexKind::Add &&
      (rest->b->kind == IndexKind::Var || rest->b->kind == IndexKind::Const))
    std::tie(rest, u) = std::pair{rest->a, rest->b};
  if (rest->kind == IndexKind::Add) std::tie(x, rest) = std::pair{rest->a, rest->b};
  int64_t c = 0, s = 0, end = 0;
  if (rest->kind != IndexKind::Mul || rest->a->kind != IndexKind::Var || !is_const(rest->b, &c) ||
      c <= 0)
    return std::nullopt;
  // Or x + w * c + u with w one of those loops over one tile of v's, [x' + v * c', ...): then e
  // lies in [x + x' * c + v * c * c', ... + c * c') (tile_dots' column tiles in blocks).
  auto outer = rest->a->var == v ? std::optional{std::pair{Index(), int64_t(1)}}
                                 : tile_of(rest->a, v, b, depth);
  if (!outer) return std::nullopt;
  if (Index shift = outer->first ? idx::mul(outer->first, rest->b) : nullptr)
    x = x ? idx::add(x, shift) : shift;
  bool inner = !u || (is_const(u, &s) && s >= 0 && s < c);
  for (size_t k = depth; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (x && uses_var(x, l.var)) return std::nullopt;
    inner |= u && u->kind == IndexKind::Var && l.var == u->var && is_const(l.start, &s) &&
             is_const(l.end, &end) && s >= 0 && end <= c;
  }
  if (!inner) return std::nullopt;
  return std::pair{x, c * outer->second};
}

// Some axis holds exactly `v` in every index: different values of v touch disjoint elements.
bool common_axis(const std::vector<const std::vector<Index>*>& indexes, int v) {
  if (indexes.empty()) return false;
  for (size_t axis = 0; axis < indexes.front()->size(); ++axis) {
    bool all = true;
    for (auto* index : indexes) {
      const Index& e = (*index)[axis];
      all &= e->kind == IndexKind::Var && e->var == v;
    }
    if (all) return true;
  }
  return false;
}

// common_axis, or in every access an element of v's tile in one tiling on some axis (tile_of:
// the same x and c), so that different values of v touch disjoint elements.
bool split_by(const std::vector<TensorAccess>& as, int v, const Block& b, size_t depth) {
  std::vector<const std::vector<Index>*> indexes;
  for (auto& a : as) indexes.push_back(&a.index);
  if (common_axis(indexes, v)) return true;
  size_t rank = as.front().index.size();
  for (size_t axis = 0; axis < rank; ++axis) {
    auto first = tile_of(as.front().index[axis], v, b, depth);
    bool tiled = first.has_value();
    for (auto& a : as) {
      auto t = tiled ? tile_of(a.index[axis], v, b, depth) : std::nullopt;
      tiled = t && t->second == first->second && bool(t->first) == bool(first->first) &&
              (!t->first || equal(t->first, first->first));
    }
    if (tiled) return true;
  }
  return false;
}

bool only_accumulates(const std::vector<TensorAccess>& as) {
  for (auto& a : as)
    if (a.kind != Use::accumulate || a.op != as.front().op) return false;
  return true;
}

// A reduce statement at or below `depth` that updates a scalar owned above it.
bool updates_outer_carried(const Block& b, size_t depth) {
  std::set<int> inner;
  for (size_t k = depth; k < b.loops.size(); ++k)
    for (auto& c : b.loops[k].carried) inner.insert(c.id);
  for (size_t k = depth; k < b.loops.size(); ++k)
    for (auto& s : b.loops[k].stmts)
      if (s.kind == StmtKind::reduce && !inner.count(s.carried)) return true;
  return false;
}

}  // namespace

bool exclusive(const std::vector<Access>& accesses, const std::vector<bool>& written, int var) {
  std::map<int, std::vector<const std::vector<Index>*>> by_tensor;
  for (auto& a : accesses)
    if (written[size_t(a.tensor)]) by_tensor[a.tensor].push_back(&a.index);
  for (size_t t = 0; t < written.size(); ++t)
    if (written[t] && !common_axis(by_tensor[int(t)], var)) return false;
  return true;
}

bool joins_collapse(const Block& b, const std::vector<LoopParallelism>& par, size_t m) {
  if (m == 0 || m + 1 >= b.loops.size() || !par[m].exclusive || b.loops[m - 1].is_pivot())
    return false;
  const Loop& l = b.loops[m];
  return !bounds_use_vars(l) && !may_raise(l.start) && !may_raise(l.end) && !l.plan.unroll &&
         l.plan.empty_tests.empty() && !l.plan.tile && l.plan.tile_corners.empty();
}

bool runs_once(const Loop& l) {
  int64_t s = 0, e = 0;
  return is_const(l.start, &s) && is_const(l.end, &e) && e - s == 1;
}

std::vector<LoopParallelism> loop_parallelism(const Program&, const Block& b) {
  std::vector<LoopParallelism> out(b.loops.size());
  for (size_t k = 0; k < b.loops.size(); ++k) {
    if (runs_once(b.loops[k])) {
      out[k] = {true, true};
      continue;
    }
    if (updates_outer_carried(b, k)) continue;
    bool exclusive = true, with_atomics = true;
    for (auto& [t, as] : region_accesses(b, k)) {
      if (!written(as) || split_by(as, b.loops[k].var, b, k)) continue;
      exclusive = false;
      with_atomics &= only_accumulates(as);
    }
    out[k] = {exclusive, with_atomics};
  }
  return out;
}

bool share_outer_loop(const std::vector<const Block*>& blocks) {
  const Loop& first = blocks.front()->loops.front();
  if (uses_data(first.start) || uses_data(first.end)) return false;
  // Every block's outer variable renamed to one that no loop has.
  const int shared = -1;
  AccessMap all;
  for (const Block* b : blocks) {
    const Loop& l = b->loops.front();
    if (b->loops.size() < 2 || !equal(l.start, first.start) || !equal(l.end, first.end))
      return false;
    for (auto& [t, as] : region_accesses(*b, 0))
      for (auto a : as) {
        for (auto& e : a.index)
          if (e->kind == IndexKind::Var && e->var == l.var) e = idx::var(shared);
        all[t].push_back(std::move(a));
      }
  }
  for (auto& [t, as] : all)
    if (written(as) && !split_by(as, shared, *blocks.front(), 0)) return false;
  return true;
}

bool stays_with_threads(const Block& b, size_t k) {
  for (size_t o = 0; o < k; ++o)
    if (b.loops[o].is_pivot()) return false;
  const Loop& l = b.loops[k];
  if (bounds_use_vars(l) || uses_data(l.start) || uses_data(l.end)) return false;
  for (auto& [t, as] : region_accesses(b, 0))
    if (written(as) && !split_by(as, l.var, b, 0)) return false;
  return true;
}

std::set<int> colliding_tensors(const Program&, const Block& b, int depth) {
  std::set<int> out;
  for (auto& [t, as] : region_accesses(b, 0)) {
    if (!written(as)) continue;
    for (int k = 0; k < depth; ++k)
      if (!runs_once(b.loops[k]) && !split_by(as, b.loops[k].var, b, k)) out.insert(t);
  }
  return out;
}

Block exclusive_loops_first(const Program& p, const Block& b) {
  for (size_t k = 0; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < b.loops.size() && !l.stmts.empty())) return b;
    if (!is_fixed(l.start) || !is_fixed(l.end)) return b;
  }
  std::vector<LoopParallelism> par = loop_parallelism(p, b);
  std::vector<Loop> exclusive, others;
  for (size_t k = 0; k < b.loops.size(); ++k) {
    Loop l = b.loops[k];
    l.stmts.clear();
    (par[k].exclusive ? exclusive : others).push_back(std::move(l));
  }
  Block out = b;
  out.loops = std::move(exclusive);
  out.loops.insert(out.loops.end(), others.begin(), others.end());
  out.loops.back().stmts = b.loops.back().stmts;
  return out;
}

}  // namespace uops::ir
