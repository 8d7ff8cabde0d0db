#include "passes/tiling.h"

namespace uops::passes {

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
  Loop l;
  l.var = var;
  l.start = idx::constant(0);
  l.end = std::move(end);
  return l;
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

int64_t one_tile_extent(const Loop& l) {
  int64_t c = 0;
  if (l.end->kind == IndexKind::Min)
    for (const Index& bound : {l.end->a, l.end->b})
      if (bound->kind == IndexKind::Add && equal(bound->a, l.start) && is_const(bound->b, &c) &&
          c > 0)
        return c;
  return 0;
}

// How many whole tiles of `size` l's range holds.
Index whole_tiles(const Loop& l, int64_t size) {
  return idx::floordiv(idx::max(idx::sub(l.end, l.start), idx::constant(0)), idx::constant(size));
}

void replace_var(Block& b, int var, const Index& by) {
  auto leaf = [&](const Index& e) -> Index {
    return e->kind == IndexKind::Var && e->var == var ? by : nullptr;
  };
  auto index = [&](const Index& e) { return rewrite(e, leaf); };
  for (auto& s : b.loops.back().stmts) {
    for (auto& e : s.index) e = index(e);
    if (s.arg) s.arg = index(s.arg);
    s.value = rewrite(
        s.value, [](const Value&) -> Value { return nullptr; }, index);
  }
}

std::pair<Loop, Loop> split_whole_tiles(Program& p, Block& b, size_t at, int64_t size, Loop* rest) {
  const Loop l = b.loops[at];
  Loop tiles = counted(p.num_vars++, whole_tiles(l, size));
  Loop in = counted(p.num_vars++, idx::constant(size));
  *rest = l;
  rest->start = idx::add(l.start, idx::mul(whole_tiles(l, size), idx::constant(size)));
  replace_var(b, l.var,
              idx::add(idx::add(l.start, idx::mul(idx::var(tiles.var), idx::constant(size))),
                       idx::var(in.var)));
  return {std::move(tiles), std::move(in)};
}

void tile_columns(Program& p, Block b, size_t at, int64_t cols, bool unroll,
                  std::vector<Block>& out) {
  Loop rest;
  Block tiled = b;
  auto [tj, c] = split_whole_tiles(p, tiled, tiled.loops.size() - 1, cols, &rest);
  if (empty(tj)) {
    out.push_back(std::move(b));
    return;
  }
  c.stmts = std::move(tiled.loops.back().stmts);
  c.plan.unroll = unroll;
  tiled.loops.back() = std::move(c);
  tiled.loops.insert(tiled.loops.begin() + long(at), std::move(tj));
  out.push_back(std::move(tiled));
  b.loops.back().start = rest.start;
  if (!empty(b.loops.back())) out.push_back(std::move(b));
}

}  // namespace uops::passes
