#include "passes/tiling.h"

#include <algorithm>

#include "passes/threads.h"
#include "uops/ir/fixed_params.h"

namespace uops::passes {

const Loop* loop_of(const Block& b, int var) {
  for (auto& l : b.loops)
    if (l.var == var) return &l;
  return nullptr;
}

namespace {

// Every division or modulo of `e` that may raise is one of `shape`'s.
bool raises_as_shape(const Index& e, const std::vector<Index>& shape) {
  std::vector<Index> known;
  for (auto& axis : shape)
    visit(axis, [&](const IndexNode& n) {
      if (raises_here(n)) known.push_back(idx::binary(n.kind, n.a, n.b));
    });
  bool ok = true;
  visit(e, [&](const IndexNode& n) {
    if (!raises_here(n)) return;
    Index node = idx::binary(n.kind, n.a, n.b);
    ok &= std::any_of(known.begin(), known.end(), [&](const Index& k) { return equal(k, node); });
  });
  return ok;
}

}  // namespace

// Loops [first, end) qualify: their bounds use none of their variables and no data, they own no
// carried scalars, statements sit only in the innermost loop and none can raise an error. Then
// the last `end - first` loops may be reordered and split freely. Also gives each loop's
// exclusivity.
bool qualifies(const Program& p, const Block& b, size_t first, std::vector<bool>* exclusive_loops) {
  std::vector<int> vars;
  for (size_t k = first; k < b.loops.size(); ++k) vars.push_back(b.loops[k].var);
  for (size_t k = 0; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < b.loops.size() && !l.stmts.empty())) return false;
    if (k < first) continue;
    if (uses_data(l.start) || uses_data(l.end)) return false;
    for (int v : vars)
      if (uses_var(l.start, v) || uses_var(l.end, v)) return false;
  }
  for (auto& s : b.loops.back().stmts)
    if (may_raise(s)) return false;
  auto accesses = block_accesses(b);
  std::vector<bool> written = tensor_sets(b, int(p.tensors.size())).writes;
  for (auto& l : b.loops) exclusive_loops->push_back(exclusive(accesses, written, l.var));
  return true;
}

bool empty(const Loop& l) {
  int64_t e = 0;
  return is_const(idx::sub(l.end, l.start), &e) && e <= 0;
}

Loop counted(int var, Index end) {
  return {.var = var, .start = idx::constant(0), .end = std::move(end)};
}

// l cut into tiles of `tile`: returns the loop over tiles, and l becomes one tile of it (the last
// one shorter).
Loop split_into_tiles(Program& p, Loop& l, int64_t tile) {
  Index extent = idx::sub(l.end, l.start);
  Loop tiles = counted(
      p.num_vars++, idx::floordiv(idx::add(extent, idx::constant(tile - 1)), idx::constant(tile)));
  Index first = idx::add(l.start, idx::mul(idx::var(tiles.var), idx::constant(tile)));
  l.end = idx::min(l.end, idx::add(first, idx::constant(tile)));
  l.start = first;
  return tiles;
}

// How many whole tiles of `size` l's range holds.
Index whole_tiles(const Loop& l, int64_t size) {
  return idx::floordiv(idx::max(idx::sub(l.end, l.start), idx::constant(0)), idx::constant(size));
}

bool over_whole_tiles(const Loop& l) {
  int64_t start = -1, size = 0;
  return is_const(l.start, &start) && start == 0 && l.end->kind == IndexKind::Div &&
         is_const(l.end->b, &size) && size > 1;
}

size_t tile_loop(const Block& b, size_t k) {
  // A loop that runs once gains nothing, and may be the second of a collapsed parallel pair.
  size_t n = b.loops.size();
  if (k + 1 >= n || b.loops[k].is_pivot() || runs_once(b.loops[k])) return 0;
  size_t first = n;
  int64_t elements = 1;
  for (; first > k + 1; --first) {
    const Loop& l = b.loops[first - 1];
    int64_t s = 0, e = l.plan.tile_width;  // rows of lanes: at most tile_width iterations
    if (!is_const(l.start, &s) || !(e > 0 || is_const(l.end, &e)) || s != 0 || e <= 0) break;
    elements *= e;
  }
  if (first == n || elements > 1024) return 0;
  for (size_t x = k; x + 1 < n; ++x)
    if (b.loops[x].is_pivot()) return 0;
  if (!b.loops.back().carried.empty()) return 0;
  std::vector<int> inner;
  for (size_t x = first; x < n; ++x) inner.push_back(b.loops[x].var);
  const auto& stmts = b.loops.back().stmts;
  if (stmts.empty()) return 0;
  auto uses_inner = [&](const Index& e) {
    for (int v : inner)
      if (uses_var(e, v)) return true;
    return false;
  };
  for (auto& s : stmts) {
    if (s.kind != StmtKind::accumulate || s.tensor != stmts[0].tensor ||
        s.index.size() != stmts[0].index.size())
      return 0;
    for (size_t a = 0; a < s.index.size(); ++a)
      if (!equal(s.index[a], stmts[0].index[a])) return 0;
    bool reads = false;
    for_each_load(s.value, [&](const ValueNode& n) {
      reads |= n.tensor == s.tensor;
      for (auto& e : n.index) reads |= uses_data(e);
    });
    if (reads) return 0;
  }
  for (auto& e : stmts[0].index) {
    if (uses_data(e)) return 0;
    for (size_t x = k; x < first; ++x)
      if (uses_var(e, b.loops[x].var)) return 0;
  }
  for (int v : inner) {
    bool alone = false;
    for (auto& e : stmts[0].index) {
      auto var = [&](const Index& x) { return x->kind == IndexKind::Var && x->var == v; };
      alone |= var(e) || (e->kind == IndexKind::Add &&
                          ((var(e->a) && !uses_inner(e->b)) || (var(e->b) && !uses_inner(e->a))));
    }
    if (!alone) return 0;
  }
  return first;
}

void replace_var(Block& b, int var, const Index& by) {
  auto leaf = [&](const Index& e) -> Index {
    return e->kind == IndexKind::Var && e->var == var ? by : nullptr;
  };
  for (auto& s : b.loops.back().stmts)
    s = map_indices(std::move(s), [&](const Index& e) { return rewrite(e, leaf); });
}

std::pair<Loop, Loop> split_whole_tiles(Program& p, Block& b, size_t at, int64_t size, Loop* rest,
                                        int64_t after) {
  const Loop l = b.loops[at];
  Loop tiles = counted(p.num_vars++, whole_tiles(l, size));
  if (after) tiles.start = idx::mul(whole_tiles(l, after), idx::constant(after / size));
  Loop in = counted(p.num_vars++, idx::constant(size));
  *rest = l;
  rest->start = idx::add(l.start, idx::mul(whole_tiles(l, size), idx::constant(size)));
  replace_var(b, l.var,
              idx::add(idx::add(l.start, idx::mul(idx::var(tiles.var), idx::constant(size))),
                       idx::var(in.var)));
  return {std::move(tiles), std::move(in)};
}

bool sums_in_lanes(const Program& p, const Block& b, bool checked_store) {
  const Loop& j = b.loops.back();
  if (j.stmts.size() != 1 || !j.carried.empty() || bounds_use_vars(j) || may_raise(j.start) ||
      may_raise(j.end))
    return false;
  const Stmt& s = j.stmts[0];
  return s.kind == StmtKind::accumulate && s.op == ReduceOp::sum && (checked_store || !s.checked) &&
         p.tensors[size_t(s.tensor)].dtype == DType::f32 && lane_wise(p, s.value, j.var);
}

int64_t lane_rows(int64_t rows, int vector_bytes) {
  return std::min<int64_t>(rows, 12 * int64_t(vector_bytes) / 64);
}

void tile_columns(Program& p, Block b, size_t at, int64_t cols, bool unroll,
                  std::vector<Block>& out) {
  Loop rest;
  Block tiled = b;
  auto [tj, c] = split_whole_tiles(p, tiled, tiled.loops.size() - 1, cols, &rest);
  if (empty(tj)) return out.push_back(std::move(b));
  c.stmts = std::move(tiled.loops.back().stmts);
  c.plan.unroll = unroll;
  tiled.loops.back() = std::move(c);
  tiled.loops.insert(tiled.loops.begin() + long(at), std::move(tj));
  out.push_back(std::move(tiled));
  b.loops.back().start = rest.start;
  if (!empty(b.loops.back())) out.push_back(std::move(b));
}

std::optional<TileBox> stored_box(const Program& p, const Block& t, size_t k, bool first_round) {
  const Stmt& s = t.loops.back().stmts[0];
  std::vector<int> seen;
  auto range = [&](const Index& v, std::pair<Index, Index>& r) {
    const Loop* l = v->kind == IndexKind::Var ? loop_of(t, v->var) : nullptr;
    if (!l || bounds_use_vars(*l) || std::count(seen.begin(), seen.end(), v->var)) return false;
    seen.push_back(v->var);
    r = {l->start, l->end};
    return true;
  };
  TileBox box;
  for (size_t a = 0; a < s.index.size(); ++a) {
    Index e = s.index[a], from = idx::constant(0);
    std::pair<Index, Index> r;
    if (e->kind == IndexKind::Add && e->a->kind == IndexKind::Add && is_fixed(e->a->a))
      from = e->a->a, e = idx::add(e->a->b, e->b);  // from + (v * R + r)
    if (e->kind == IndexKind::Add && e->a->kind == IndexKind::Mul) {
      // t * R + r: t's range [0, n) times R, when r runs over [0, R).
      const Index& m = e->a;
      // R and r's end may be parameters fixed to one value (avgpool2d's stride and window).
      int64_t start = -1, in_start = -1;
      bool var_first = m->a->kind == IndexKind::Var;
      std::pair<Index, Index> in;
      std::optional<int64_t> size = fixed_value(p, var_first ? m->b : m->a);
      if (!size || *size < 1 || !range(var_first ? m->a : m->b, r) || !range(e->b, in) ||
          !is_const(r.first, &start) || start != 0 || !is_const(in.first, &in_start) ||
          in_start != 0 || fixed_value(p, in.second) != size)
        return std::nullopt;
      r = {from, idx::add(from, idx::mul(r.second, idx::constant(*size)))};
    } else if (!is_const(from) || !range(e, r)) {
      return std::nullopt;
    }
    int64_t lo = -1;
    bool whole = is_const(r.first, &lo) && lo == 0 && equal(r.second, p.tensors[s.tensor].shape[a]);
    box.push_back(whole ? std::nullopt : std::optional<std::pair<Index, Index>>(r));
  }
  const std::vector<int>& first = t.loops[k].plan.tile_start_first;
  for (size_t x = 0; x < k; ++x) {
    const Loop& l = t.loops[x];
    bool revisits = first_round && std::count(first.begin(), first.end(), l.var);
    if (!std::count(seen.begin(), seen.end(), l.var) && !(revisits && !bounds_use_vars(l)))
      return std::nullopt;
  }
  return box;
}

bool stores_when_run(const Block& b) {
  return !b.loops.back().stmts[0].checked;
}

bool stores_every_time(const Block& b) {
  return stores_when_run(b) && b.loops[0].plan.thread_copies.empty();
}

bool keep_outside(Program& p, size_t bi, const TileBox& box, size_t unless) {
  const Block whole = p.blocks[bi];
  const std::vector<Index>& shape = p.tensors[size_t(whole.loops.back().stmts[0].tensor)].shape;
  for (auto& r : box)
    if (r && !(raises_as_shape(r->first, shape) && raises_as_shape(r->second, shape))) return false;
  // The row-local run block bi is in: its first block, or none.
  std::optional<size_t> run;
  for (size_t b = 0; b <= bi; ++b)
    if (int n = p.blocks[b].loops[0].plan.row_local; n && bi <= b + size_t(n)) run = b;
  if (run && box[0]) return false;  // a run's shared loop keeps its range
  // Each cut axis in turn: its sides of the box, the axes before it within the box; axis a
  // past the last, the box itself.
  std::vector<Block> pieces;
  auto piece = [&](size_t a, Index start, Index end) -> Block& {
    Block q = whole;
    for (size_t before = 0; before < std::min(a, box.size()); ++before)
      if (box[before]) {
        q.loops[before].start = box[before]->first;
        q.loops[before].end = box[before]->second;
      }
    if (a < box.size()) {
      q.loops[a].start = std::move(start);
      q.loops[a].end = std::move(end);
    }
    // In a run, the first piece keeps the block's plan (the run's, where it led it).
    if (!pieces.empty() && run) q.loops[0].plan = {};
    // Outside a run, a piece's team runs its own iterations.
    for (size_t x = 0; !run && x < q.loops.size(); ++x)
      if (q.loops[x].plan.starts_team())
        plan_team(q.loops[x].plan, work_from(p, q, x), block_may_raise(q));
    pieces.push_back(std::move(q));
    return pieces.back();
  };
  for (size_t a = 0; a < box.size(); ++a) {
    if (!box[a]) continue;
    int64_t lo = -1;
    if (!is_const(box[a]->first, &lo) || lo != 0) piece(a, idx::constant(0), box[a]->first);
    piece(a, box[a]->second, shape[a]);
  }
  // The box, where block `unless` does not store it (LoopPlan::fill_unless); last of the
  // pieces, it stays as far from that block as the fill was.
  if (unless) piece(box.size(), nullptr, nullptr).loops[0].plan.fill_unless = int(unless - bi);
  if (pieces.empty()) return false;
  if (run)
    (*run == bi ? pieces[0] : p.blocks[*run]).loops[0].plan.row_local += int(pieces.size()) - 1;
  p.blocks.erase(p.blocks.begin() + long(bi));
  p.blocks.insert(p.blocks.begin() + long(bi), pieces.begin(), pieces.end());
  return true;
}

}  // namespace uops::passes
