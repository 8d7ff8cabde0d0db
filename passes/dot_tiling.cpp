#include "uops/passes/dot_tiling.h"

#include <algorithm>
#include <map>
#include <optional>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;
using namespace passes;

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

// Block b as [outer..., i, j, k] where j's statements store (T) and then reduce into scalars i
// carries (U), as attention's scores with their row maximum: the block without U and without
// i's carried scalars and statements, which dot_loop takes, and a block over [outer..., i, j]
// with fresh variables doing only U and i's statements. Nothing when the first would not tile or
// the two would not compute what b does: U and i's statements must read no carried scalar but
// i's, raise nothing, and read what the first block writes only at the element T stored in the
// same iteration, which no other iteration stores; the second block may write nothing the first
// touches.
std::optional<std::pair<Block, Block>> split_block(Program& p, const Block& b) {
  size_t n = b.loops.size();
  if (n < 3) return std::nullopt;
  size_t i = n - 3, j = n - 2;
  const Loop &li = b.loops[i], &lj = b.loops[j];
  for (size_t k = 0; k < n; ++k) {
    const Loop& l = b.loops[k];
    if (uses_data(l.start) || uses_data(l.end) || bounds_use_vars(l)) return std::nullopt;
    if (k < i && (!l.carried.empty() || !l.stmts.empty())) return std::nullopt;
  }
  if (li.carried.empty() || lj.carried.empty()) return std::nullopt;
  std::vector<int> row;  // i's carried scalars
  for (auto& c : li.carried) row.push_back(c.id);
  auto only_row = [&](const Stmt& s) {
    std::vector<int> read;
    collect_carried(s.value, read);
    for (int c : read)
      if (std::find(row.begin(), row.end(), c) == row.end()) return false;
    return !may_raise(s);
  };
  std::vector<Stmt> kept, moved;
  for (auto& s : lj.stmts) {
    bool to_row =
        s.kind == StmtKind::reduce && std::find(row.begin(), row.end(), s.carried) != row.end();
    if (to_row) {
      if (!only_row(s)) return std::nullopt;
      moved.push_back(s);
    } else if (!moved.empty() || s.kind == StmtKind::reduce) {
      return std::nullopt;
    } else {
      kept.push_back(s);
    }
  }
  if (moved.empty()) return std::nullopt;
  for (auto& s : li.stmts)
    if (s.kind == StmtKind::reduce || !only_row(s)) return std::nullopt;

  Block first = b, second = b;
  first.loops[i].carried.clear();
  first.loops[i].stmts.clear();
  first.loops[j].stmts = kept;
  second.loops.pop_back();
  second.loops[j].carried.clear();
  second.loops[j].stmts = moved;

  // Each element the first block writes is written by one iteration (of every loop but k).
  auto first_accesses = block_accesses(first);
  std::vector<bool> written = tensor_sets(first, int(p.tensors.size())).writes;
  bool once = true;
  for (size_t k = 0; k <= j; ++k) once &= exclusive(first_accesses, written, b.loops[k].var);
  for (auto& a : block_accesses(second)) {
    for (auto& f : first_accesses) {
      if (f.tensor != a.tensor || (!a.write && !f.write)) continue;
      if (a.write) return std::nullopt;
      // A read of what the first block writes: the stored element of the same iteration.
      const Stmt& store = first.loops[size_t(f.loop)].stmts[size_t(f.stmt)];
      if (f.loop != int(j) || store.kind != StmtKind::assign || !once ||
          !same_index(store.index, a.index))
        return std::nullopt;
    }
  }
  if (dot_loop(p, first) == 0) return std::nullopt;  // nothing to tile: leave b whole
  std::map<int, Index> vars;
  for (auto& l : second.loops) {
    int v = p.num_vars++;
    vars[l.var] = idx::var(v);
    l.var = v;
  }
  std::map<int, int> same;
  for (int c : row) same[c] = c;
  for (auto& l : second.loops)
    for (auto& s : l.stmts) s = substituted(s, vars, same);
  return std::make_pair(std::move(first), std::move(second));
}

// Appends to `blocks` what b becomes under tile_dots.
void tile_block(Program& p, Block b, int64_t rows, int64_t cols, int64_t block,
                std::vector<Block>& blocks) {
  size_t j = dot_loop(p, b);
  if (j == 0) return blocks.push_back(std::move(b));
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
  if (empty(ti) || empty(tj)) return blocks.push_back(std::move(b));
  // j's tiles in blocks of `block`, the loop over blocks outside i' (see the header).
  Loop j_blocks = split_into_tiles(p, tj, block);
  tiled.loops.insert(tiled.loops.begin() + ptrdiff_t(j - 1), std::move(j_blocks));
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

// Block by block: a split's two blocks, the first through `first`, or the block through `first`.
template <class F>
Program split_each(Program p, F first) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks) {
    auto split = dot_loop(p, b) == 0 ? split_block(p, b) : std::nullopt;
    if (split) {
      first(p, std::move(split->first), blocks);
      blocks.push_back(std::move(split->second));
    } else {
      first(p, std::move(b), blocks);
    }
  }
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace

Program tile_dots(Program p, int64_t rows, int64_t cols, int64_t block) {
  return split_each(std::move(p), [&](Program& q, Block b, std::vector<Block>& blocks) {
    tile_block(q, std::move(b), rows, cols, block, blocks);
  });
}

Program split_row_reductions(Program p) {
  return split_each(std::move(p), [](Program&, Block b, std::vector<Block>& blocks) {
    blocks.push_back(std::move(b));
  });
}

}  // namespace uops
