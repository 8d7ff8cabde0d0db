#include "uops/passes/scatter_tiling.h"

#include <algorithm>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;
using namespace passes;

namespace {

// The position of the first loop from which the block may be reordered (tiling.h's rule, and no
// bound from there on can raise, so none is evaluated where it was not), or n when it is not a
// window's scatter (the header's conditions).
size_t scatter_from(const Program& p, const Block& b, std::vector<bool>* exclusive_loops) {
  size_t n = b.loops.size();
  const auto& stmts = b.loops.back().stmts;
  if (stmts.empty()) return n;
  const Stmt& s0 = stmts[0];
  int j = b.loops.back().var;
  for (auto& s : stmts) {
    if (s.kind != StmtKind::accumulate || s.op != ReduceOp::sum || s.tensor != s0.tensor ||
        s.index.size() != s0.index.size())
      return n;
    for (size_t a = 0; a < s.index.size(); ++a)
      if (!equal(s.index[a], s0.index[a])) return n;
    bool reads = false;
    for_each_load(s.value, [&](const ValueNode& load) { reads |= load.tensor == s0.tensor; });
    if (reads) return n;
  }
  if (s0.index.empty() || !equal(s0.index.back(), idx::var(j))) return n;
  for (auto& e : s0.index)
    if (uses_data(e) || (&e != &s0.index.back() && uses_var(e, j))) return n;
  for (size_t first = 0; first + 2 < n; ++first) {
    bool raises = false;
    for (size_t k = first; k < n; ++k)
      raises |= may_raise(b.loops[k].start) || may_raise(b.loops[k].end);
    std::vector<bool> ex;
    if (raises || !qualifies(p, b, first, &ex)) continue;
    bool window = false, reduction = false;
    for (size_t k = first; k + 1 < n; ++k) {
      const bool used = uses_var(s0.index, b.loops[k].var);
      window |= used && !ex[k];
      reduction |= !used;
    }
    *exclusive_loops = ex;
    return ex[n - 1] && window && reduction ? first : n;
  }
  return n;
}

struct Sizes {
  int64_t rows, cols, row_cols;
  int vector_bytes;
};

void tile_block(Program& p, Block b, Sizes sizes, std::vector<Block>& out) {
  std::vector<bool> ex;
  size_t n = b.loops.size(), first = scatter_from(p, b, &ex);
  if (first == n) return out.push_back(std::move(b));
  // The loops the written index uses, then the others, each in their order, then j.
  const Stmt s0 = b.loops.back().stmts[0];
  std::vector<std::pair<Loop, bool>> used, unused;  // with exclusive
  for (size_t k = first; k + 1 < n; ++k)
    (uses_var(s0.index, b.loops[k].var) ? used : unused).push_back({b.loops[k], ex[k]});
  // One slice of the operands read along j (w at one kh, kw) serves a run of the last used
  // loop that indexes none of them (ow) from L1: that loop runs inside the ones that do.
  auto along_j = [&](int var) {
    bool found = false;
    for_each_load(s0.value, [&](const ValueNode& load) {
      found |= uses_var(load.index, b.loops.back().var) && uses_var(load.index, var);
    });
    return found;
  };
  size_t r = 0;
  while (r < used.size() && !along_j(used[r].first.var)) ++r;
  if (r > 0 && r < used.size())
    std::rotate(used.begin() + long(r - 1), used.begin() + long(r), used.end());
  // The tile's rows: the first exclusive loop the index holds alone on an axis (the batch).
  size_t row = used.size();
  for (size_t u = used.size(); u-- > 0;)
    for (auto& e : s0.index)
      if (used[u].second && e->kind == IndexKind::Var && e->var == used[u].first.var) row = u;
  Block ordered = b;
  ordered.loops.resize(first);
  for (auto* group : {&used, &unused})
    for (auto& l : *group) ordered.loops.push_back(l.first);
  ordered.loops.push_back(b.loops.back());
  size_t used_end = first + used.size();
  if (row == used.size())
    return tile_columns(p, std::move(ordered), used_end, sizes.row_cols, true, out);
  // prefix, i', j', the other used loops, the others, r, c over whole tiles of rows x cols; then
  // the rows left over, in tiles of row_cols columns, and the columns left over, untiled.
  size_t ri = first + row;
  // Narrower vectors than AVX-512's (16 registers): 16 columns in rows of lanes, as
  // tile_registers makes them (reduction_tiling.h); the written element's test stays the tile's.
  const bool lanes = sizes.vector_bytes < 64 && sums_in_lanes(p, b, true);
  if (lanes) {
    sizes.cols = 16;
    sizes.rows = lane_rows(sizes.rows, sizes.vector_bytes);
  }
  Block tiled = ordered;
  Loop rest_i, rest_j;
  auto [tj, c] = split_whole_tiles(p, tiled, n - 1, sizes.cols, &rest_j);
  auto [ti, in] = split_whole_tiles(p, tiled, ri, sizes.rows, &rest_i);
  if (empty(ti) || empty(tj))
    return tile_columns(p, std::move(ordered), used_end, sizes.row_cols, true, out);
  c.stmts = std::move(tiled.loops.back().stmts);
  if (lanes) c.plan.tile_width = int(sizes.cols);
  tiled.loops.back() = std::move(c);
  tiled.loops.insert(tiled.loops.end() - 1, std::move(in));
  tiled.loops.erase(tiled.loops.begin() + long(ri));
  tiled.loops.insert(tiled.loops.begin() + long(first), {std::move(ti), std::move(tj)});
  out.push_back(std::move(tiled));
  Block rows = ordered, columns = std::move(ordered);
  rows.loops[ri].start = rest_i.start;
  columns.loops[ri].end = rest_i.start;
  columns.loops.back().start = rest_j.start;
  if (!empty(rows.loops[ri])) tile_columns(p, std::move(rows), used_end, sizes.row_cols, true, out);
  if (!empty(columns.loops[ri]) && !empty(columns.loops.back())) out.push_back(std::move(columns));
}

}  // namespace

Program tile_scatters(Program p, int64_t rows, int64_t cols, int64_t row_cols, int vector_bytes) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks)
    tile_block(p, std::move(b), {rows, cols, row_cols, vector_bytes}, blocks);
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops
