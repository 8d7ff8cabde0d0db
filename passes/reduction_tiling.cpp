#include "uops/passes/reduction_tiling.h"

#include <algorithm>
#include <map>

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// Every access to a written tensor holds exactly `var` on one common axis.
bool exclusive(const std::vector<Access>& accesses, const std::vector<bool>& written, int var) {
  std::vector<std::vector<bool>> axes(written.size());  // per tensor: axes holding var so far
  for (auto& a : accesses) {
    if (!written[a.tensor]) continue;
    std::vector<bool> here(a.index.size());
    for (size_t x = 0; x < a.index.size(); ++x)
      here[x] = a.index[x]->kind == IndexKind::Var && a.index[x]->var == var;
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

// The position of the loop to tile, or 0 when the block does not qualify.
size_t reduction_loop(const Program& p, const Block& b, int64_t tile) {
  std::vector<bool> ex;
  if (!qualifies(p, b, 0, &ex)) return 0;
  for (size_t k = 0; k + 1 < b.loops.size(); ++k) {
    if (ex[k]) continue;
    int64_t s = 0, e = 0;
    bool small = is_const(b.loops[k].start, &s) && is_const(b.loops[k].end, &e) && e - s <= tile;
    // One reduction loop between output loops (matmul's k; conv2d's kh, kw, ic are left alone).
    return k > 0 && !small && ex[k + 1] ? k : 0;
  }
  return 0;
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

// How many whole tiles of `size` l's range holds.
Index whole_tiles(const Loop& l, int64_t size) {
  return idx::floordiv(idx::max(idx::sub(l.end, l.start), idx::constant(0)), idx::constant(size));
}

// `var` replaced by `by` in every index of the innermost loop's statements.
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

// Loops from the outermost that may move (qualifies from there, and no bound from there on can
// raise, so none is evaluated where it was not) in contraction order: the exclusive ones, then
// the others in their order, then the last loop (a matmul gradient's db[k, j] += g[i, j] *
// a[i, k] runs k, i, j). The exclusive loops own disjoint elements, so only the others' order
// matters, and it is kept.
void contraction_order(const Program& p, Block& b) {
  size_t n = b.loops.size();
  for (size_t first = 0; first + 2 < n; ++first) {
    std::vector<bool> ex;
    bool raises = false;
    for (size_t k = first; k < n; ++k)
      raises |= may_raise(b.loops[k].start) || may_raise(b.loops[k].end);
    if (raises || !qualifies(p, b, first, &ex)) continue;
    std::vector<Stmt> stmts = std::move(b.loops.back().stmts);
    std::vector<Loop> loops(b.loops.begin(), b.loops.begin() + long(first));
    for (bool exclusive : {true, false})
      for (size_t k = first; k + 1 < n; ++k)
        if (ex[k] == exclusive) loops.push_back(b.loops[k]);
    loops.push_back(b.loops.back());
    loops.back().stmts = std::move(stmts);
    b.loops = std::move(loops);
    return;
  }
}

}  // namespace

Program tile_reductions(Program p, int64_t tile) {
  for (auto& b : p.blocks) {
    contraction_order(p, b);
    size_t k = reduction_loop(p, b, tile);
    if (k == 0) continue;
    Loop tiles = split_into_tiles(p, b.loops[k], tile);
    b.loops.insert(b.loops.begin(), std::move(tiles));
  }
  return p;
}

namespace {

// tile_registers on one block, appending what it becomes to `out`. (The rows left over are not
// tiled again with fewer rows: their start, in their indices, would repeat i's end, which for
// conv2d divides by the stride, and a division the compiler cannot hoist made such tiles slower
// than none.)
void tile_block(Program& p, Block b, int64_t rows, int64_t cols, std::vector<Block>& out) {
  size_t n = b.loops.size();
  // i, k..., j: j the last loop, i the first exclusive one before it, k... the loops between.
  size_t ii = n;  // the position of i, n when the block does not qualify
  for (size_t at = n >= 3 ? n - 2 : 0; at-- > 0;) {
    std::vector<bool> ex;  // qualifying from an earlier loop is stricter: stop at the first no
    if (!qualifies(p, b, at, &ex) || !ex[n - 1] || ex[n - 2]) break;
    if (!ex[at]) continue;
    ii = at;
    break;
  }
  if (ii == n) {
    out.push_back(std::move(b));
    return;
  }
  // i, k..., j: the whole tiles of i and j first, then the rows left over, then the columns.
  const Loop i = b.loops[ii], j = b.loops[n - 1];
  auto whole = whole_tiles;
  Index i_end = idx::add(i.start, idx::mul(whole(i, rows), idx::constant(rows)));
  Index j_end = idx::add(j.start, idx::mul(whole(j, cols), idx::constant(cols)));
  Block tiled = b;
  Loop ti = counted(p.num_vars++, whole(i, rows)), tj = counted(p.num_vars++, whole(j, cols));
  Loop r = counted(p.num_vars++, idx::constant(rows)),
       c = counted(p.num_vars++, idx::constant(cols));
  c.stmts = std::move(tiled.loops.back().stmts);
  tiled.loops.resize(n - 1);
  tiled.loops.back().stmts.clear();
  tiled.loops.erase(tiled.loops.begin() + long(ii));
  tiled.loops.insert(tiled.loops.begin() + long(ii), {ti, tj});
  tiled.loops.push_back(r);
  tiled.loops.push_back(std::move(c));
  auto at = [](const Loop& l, const Loop& tile, const Loop& in, int64_t size) {
    return idx::add(idx::add(l.start, idx::mul(idx::var(tile.var), idx::constant(size))),
                    idx::var(in.var));
  };
  replace_var(tiled, i.var, at(i, ti, r, rows));
  replace_var(tiled, j.var, at(j, tj, c, cols));
  if (empty(tiled.loops[ii]) || empty(tiled.loops[ii + 1])) {
    out.push_back(std::move(b));
    return;
  }
  Block rest_rows = b, rest_cols = std::move(b);
  rest_rows.loops[ii].start = i_end;
  rest_cols.loops[ii].end = i_end;
  rest_cols.loops[n - 1].start = j_end;
  out.push_back(std::move(tiled));
  for (Block* rest : {&rest_rows, &rest_cols})
    if (!empty(rest->loops[ii]) && !empty(rest->loops[n - 1])) out.push_back(std::move(*rest));
}

}  // namespace

Program tile_registers(Program p, int64_t rows, int64_t cols) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks) tile_block(p, std::move(b), rows, cols, blocks);
  p.blocks = std::move(blocks);
  return p;
}

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
  }
  return p;
}

namespace {

// The position of loop j for tile_dots, or 0 when the block does not qualify (see the header).
size_t dot_loop(const Program& p, const Block& b) {
  size_t n = b.loops.size();
  size_t j = 0;
  for (size_t k = 0; k < n; ++k) {
    const Loop& l = b.loops[k];
    if (uses_data(l.start) || uses_data(l.end)) return 0;
    if (!l.carried.empty()) {
      if (j != 0 || k == 0 || k + 1 == n) return 0;
      j = k;
    } else if (!l.stmts.empty() && k + 1 < n) {
      return 0;
    }
  }
  if (j == 0) return 0;
  for (auto& c : b.loops[j].carried)
    if (c.op != ReduceOp::sum) return 0;
  for (auto& s : b.loops[j].stmts)
    if (s.kind == StmtKind::reduce || may_raise(s)) return 0;
  for (auto& s : b.loops.back().stmts)
    if (s.kind != StmtKind::reduce || may_raise(s)) return 0;
  for (size_t k : {j - 1, j}) {
    const Loop& l = b.loops[k];
    if (bounds_use_vars(l) || may_raise(l.start) || may_raise(l.end)) return 0;
    for (size_t x = j + 1; x < n; ++x)
      if (uses_var(b.loops[x].start, l.var) || uses_var(b.loops[x].end, l.var)) return 0;
  }
  auto accesses = block_accesses(b);
  std::vector<bool> written = tensor_sets(b, int(p.tensors.size())).writes;
  for (auto& a : accesses)
    if (a.write && a.loop != int(j)) return 0;
  return exclusive(accesses, written, b.loops[j - 1].var) &&
                 exclusive(accesses, written, b.loops[j].var)
             ? j
             : 0;
}

// `s` with loop variables replaced (`vars`) and carried scalars renumbered (`carried`).
Stmt substituted(Stmt s, const std::map<int, Index>& vars, const std::map<int, int>& carried) {
  auto index = [&](const Index& e) {
    return rewrite(e, [&](const Index& x) -> Index {
      if (x->kind != IndexKind::Var) return nullptr;
      auto it = vars.find(x->var);
      return it == vars.end() ? nullptr : it->second;
    });
  };
  for (auto& e : s.index) e = index(e);
  if (s.arg) s.arg = index(s.arg);
  if (s.carried >= 0) s.carried = carried.at(s.carried);
  s.value = rewrite(
      s.value,
      [&](const Value& v) -> Value {
        return v->kind == ValueKind::Carried ? val::carried(carried.at(v->carried)) : nullptr;
      },
      index);
  return s;
}

}  // namespace

Program tile_dots(Program p, int64_t rows, int64_t cols) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks) {
    size_t j = dot_loop(p, b);
    if (j == 0) {
      blocks.push_back(std::move(b));
      continue;
    }
    const Loop i = b.loops[j - 1], jl = b.loops[j];
    auto whole = whole_tiles;
    Block tiled = b;
    Loop& ti = tiled.loops[j - 1];
    Loop& tj = tiled.loops[j];
    ti = counted(p.num_vars++, whole(i, rows));
    tj = counted(p.num_vars++, whole(jl, cols));
    tiled.loops.back().stmts.clear();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        std::map<int, Index> vars = {
            {i.var, idx::add(i.start, idx::add(idx::mul(idx::var(ti.var), idx::constant(rows)),
                                               idx::constant(r)))},
            {jl.var, idx::add(jl.start, idx::add(idx::mul(idx::var(tj.var), idx::constant(cols)),
                                                 idx::constant(c)))}};
        std::map<int, int> carried;
        for (auto& x : jl.carried) {
          carried[x.id] = p.num_carried++;
          tj.carried.push_back({carried[x.id], x.op});
        }
        for (auto& s : jl.stmts) tj.stmts.push_back(substituted(s, vars, carried));
        for (auto& s : b.loops.back().stmts)
          tiled.loops.back().stmts.push_back(substituted(s, vars, carried));
      }
    if (empty(ti) || empty(tj)) {
      blocks.push_back(std::move(b));
      continue;
    }
    Index i_end = idx::add(i.start, idx::mul(whole(i, rows), idx::constant(rows)));
    Index j_end = idx::add(jl.start, idx::mul(whole(jl, cols), idx::constant(cols)));
    Block rest_rows = b, rest_cols = std::move(b);
    rest_rows.loops[j - 1].start = i_end;
    rest_cols.loops[j - 1].end = i_end;
    rest_cols.loops[j].start = j_end;
    std::map<int, int> renamed;  // a carried scalar has one owner in a program
    for (auto& x : rest_cols.loops[j].carried) {
      int id = p.num_carried++;
      renamed[x.id] = id;
      x.id = id;
    }
    for (auto& l : rest_cols.loops)
      for (auto& st : l.stmts) st = substituted(st, {}, renamed);
    blocks.push_back(std::move(tiled));
    for (Block* rest : {&rest_rows, &rest_cols})
      if (!empty(rest->loops[j - 1]) && !empty(rest->loops[j])) blocks.push_back(std::move(*rest));
  }
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops
