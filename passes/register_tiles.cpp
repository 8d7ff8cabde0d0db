#include "uops/passes/register_tiles.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/parallelism.h"
#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

// `e` at a corner of the box of the loops from `from`: bit x of `corner` takes loop from + x at
// its last value, else at its first.
Index at_corner(const Block& b, size_t from, size_t corner, const Index& e) {
  return rewrite(e, [&](const Index& v) -> Index {
    for (size_t x = from; v->kind == IndexKind::Var && x < b.loops.size(); ++x)
      if (v->var == b.loops[x].var)
        return corner >> (x - from) & 1 ? idx::sub(b.loops[x].end, idx::constant(1))
                                        : b.loops[x].start;
    return nullptr;
  });
}

// The corner accesses to test in front of which loop of the tile around loop k with tile loops
// from `first`, or none when there is nothing to test or it cannot be tested. The corners span
// the loops from `from` on: the tile loops, or with from = k the loops between too.
std::pair<size_t, std::vector<std::pair<int, std::vector<Index>>>> corners(const LoopRanges& ranges,
                                                                           const Block& b, size_t k,
                                                                           size_t first,
                                                                           size_t from) {
  std::vector<int> vars;
  for (size_t x = from; x < b.loops.size(); ++x) vars.push_back(b.loops[x].var);
  std::vector<const ValueNode*> loads;
  bool ok = true;
  const Stmt& target = b.loops.back().stmts[0];
  ValueNode written;  // a checked tile tensor is tested like a load
  written.tensor = target.tensor;
  written.index = target.index;
  if (target.checked) loads.push_back(&written);
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& n) {
      if (n.checked) loads.push_back(&n);
    });
  for (const ValueNode* n : loads)
    for (auto& e : n->index) ok &= affine_in(e, vars) && !may_raise(e);
  if (!ok || loads.empty()) return {};
  std::vector<std::pair<int, std::vector<Index>>> out;
  std::vector<int> uses;
  bool tested = false;
  for (size_t corner = 0; corner < (size_t(1) << vars.size()); ++corner) {
    for (const ValueNode* n : loads) {
      std::vector<Index> at;
      for (size_t a = 0; a < n->index.size(); ++a) {
        at.push_back(at_corner(b, from, corner, n->index[a]));
        if (ranges.spans_axis(n->tensor, a, at.back())) continue;
        collect_vars(at.back(), uses);
        tested = true;
      }
      out.push_back({n->tensor, std::move(at)});
    }
  }
  if (!tested) return {};
  size_t at = k;
  for (size_t x = k; x < first; ++x)
    if (std::count(uses.begin(), uses.end(), b.loops[x].var)) at = x + 1;
  return {at, std::move(out)};
}

// The last axes, at the corners of the loops from `from`, of the checked loads that read a row
// along the innermost tile loop (ir::reads_row): where they are in range, the tile's else takes
// each of those rows from a pointer or its fill value, tested once per row, with a copy of the
// innermost loop for each outcome. None when no load reads such a row, or more than 3 do (8
// copies).
std::vector<std::pair<int, Index>> row_tests(const Block& b, size_t from) {
  std::vector<std::pair<int, Index>> out;
  int loads = 0;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& n) {
      if (!n.checked || !reads_row(n.index, b.loops.back().var)) return;
      ++loads;
      for (size_t corner = 0; corner < (size_t(1) << (b.loops.size() - from)); ++corner) {
        Index at = at_corner(b, from, corner, n.index.back());
        bool seen = false;
        for (auto& [t, e] : out) seen |= t == n.tensor && equal(e, at);
        if (!seen) out.push_back({n.tensor, at});
      }
    });
  if (loads > 3) out.clear();
  return out;
}

// The checked loads of the tile (loops [first, n): rows, then columns, a constant count of rows)
// that are one value for every column (no axis uses the innermost loop) and whose last axis is
// the variable of a loop between the test (in front of loop `at`) and the tile, spanning the axis
// (LoopRanges::spans_axis), which no other axis uses: that loop and the loads, each once
// (LoopPlan::tile_steps). All share the first such loop; none where there are none.
std::pair<size_t, std::vector<std::pair<int, std::vector<Index>>>> step_rows(
    const LoopRanges& ranges, const Block& b, size_t at, size_t first) {
  const size_t n = b.loops.size();
  int64_t start = -1, rows = 0;
  if (first + 2 != n || !is_const(b.loops[first].start, &start) || start != 0 ||
      !is_const(b.loops[first].end, &rows) || rows < 1)
    return {};
  const int c = b.loops.back().var;
  size_t loop = 0;
  std::vector<std::pair<int, std::vector<Index>>> out;
  for (auto& s : b.loops.back().stmts)
    for_each_load(s.value, [&](const ValueNode& l) {
      if (!l.checked || l.index.empty()) return;
      const Index& last = l.index.back();
      if (last->kind != IndexKind::Var || !ranges.spans_axis(l.tensor, l.index.size() - 1, last))
        return;
      size_t x = at;
      while (x < first && b.loops[x].var != last->var) ++x;
      if (x == first || (loop && x != loop)) return;
      for (size_t a = 0; a < l.index.size(); ++a)
        if (uses_var(l.index[a], c) || (a + 1 < l.index.size() && uses_var(l.index[a], last->var)))
          return;
      for (auto& [t, index] : out)
        if (t == l.tensor && same_index(index, l.index)) return;
      loop = x;
      out.push_back({l.tensor, l.index});
    });
  return {loop, std::move(out)};
}

// The value every element of a tile around loop k of block bi holds when it starts, when known:
// the value its tensor holds when the block starts (ir::value_at_start), when the loops outside
// k are exclusive (ir::loop_parallelism), so no earlier iteration of the block itself touched
// the tile's elements. In a row-local run each row keeps the blocks' order, so this holds row by
// row. A loop outside k that is not exclusive (matmul's reduction tiles, outside its register
// tiles) revisits the same elements in every iteration when it moves neither the tile's index nor
// a bound outside k: the tile starts from that value in its first iteration and loads its
// elements in the others (the loop's variable in `first`). Thread copies of the tensor start from
// zero, so such a start must be zero where the block has them.
struct TileStart {
  std::optional<double> value;
  std::vector<int> first;
};
TileStart tile_start(const Program& p, size_t bi, size_t k) {
  const Block& b = p.blocks[bi];
  const Stmt& s = b.loops.back().stmts[0];
  TileStart start{value_at_start(p, bi, s.tensor), {}};
  if (!start.value) return {};
  std::vector<LoopParallelism> loops = loop_parallelism(p, b);
  for (size_t x = 0; x < k; ++x) {
    if (loops[x].exclusive) continue;
    int v = b.loops[x].var;
    if (uses_var(s.index, v)) return {};
    for (size_t y = 0; y < k; ++y)
      if (uses_var(b.loops[y].start, v) || uses_var(b.loops[y].end, v)) return {};
    start.first.push_back(v);
  }
  const std::vector<int>& copies = b.loops[0].plan.thread_copies;
  bool copied = std::find(copies.begin(), copies.end(), s.tensor) != copies.end();
  if (!start.first.empty() && copied && (*start.value != 0 || std::signbit(*start.value)))
    return {};
  return start;
}

// Where to test the tile's corners. A test that would sit right in front of the tile loops, in
// every iteration of the loops between k and them (a pooling window's kh and kw), makes the two
// branches share the tile across those loops, and GCC then keeps it on the stack (a load and a
// store around every operation). When those loops have bounds free of loop variables, the
// corners span them as well and the test moves in front of the tile, which each branch then
// holds in registers of its own; a tile at the border runs its whole window checked. With a loop
// between the test and the tile loops (conv2d's input channels) the tile stays in registers
// across it, and the test stays where it is: moving it lost a fifth of conv2d's speed.
struct TileTest {
  size_t at = 0, from = 0;  // in front of loop `at`, the corners of the loops from `from`
  std::vector<std::pair<int, std::vector<Index>>> accesses;
};
TileTest tile_test(const LoopRanges& ranges, const Block& b, size_t k, size_t first) {
  auto inside = corners(ranges, b, k, first, first);
  TileTest in{inside.first, first, std::move(inside.second)};
  if (in.at != first || in.accesses.empty()) return in;
  for (size_t x = k; x < first; ++x)
    if (bounds_use_vars(b.loops[x]) || may_raise(b.loops[x].start) || may_raise(b.loops[x].end))
      return in;
  auto outside = corners(ranges, b, k, first, k);
  if (outside.second.empty()) return in;
  return {outside.first, k, std::move(outside.second)};
}

// The axes of the tile statement's index that no loop from `at` inward moves and that cannot
// raise, where the statement is checked and the block's only one (ir::LoopPlan::tile_skip).
std::vector<AxisIndex> skipped_axes(const Block& b, size_t at) {
  const Stmt& s = b.loops.back().stmts[0];
  size_t stmts = 0;
  for (auto& l : b.loops) stmts += l.stmts.size() + l.carried.size();
  if (!s.checked || stmts != 1) return {};
  std::vector<AxisIndex> out;
  for (size_t a = 0; a < s.index.size(); ++a) {
    bool moves = may_raise(s.index[a]);
    for (size_t x = at; x < b.loops.size(); ++x) moves |= uses_var(s.index[a], b.loops[x].var);
    if (!moves) out.push_back({s.tensor, int(a), s.index[a]});
  }
  return out;
}

// Whether block bi streams the stores of its innermost loop c (register_tiles.h): their tensor
// is an f32 or f64 output that neither bi nor a later block loads, and c runs along the tensor's
// last axis alone (c plus other terms); for a tile, over whole cache lines (the later blocks that
// accumulate into the tensor are its pieces left over), for rows, with no later accumulation.
bool streams(const Program& p, size_t bi, bool whole_lines) {
  const Block& b = p.blocks[bi];
  const Stmt& s = b.loops.back().stmts[0];
  const TensorInfo& info = p.tensors[size_t(s.tensor)];
  if (info.role != Role::output || (info.dtype != DType::f32 && info.dtype != DType::f64))
    return false;
  const Loop& c = b.loops.back();
  int64_t start = -1, end = 0;
  if (whole_lines && (!is_const(c.start, &start) || start != 0 || !is_const(c.end, &end) ||
                      end * int64_t(dtype_size(info.dtype)) % 64 != 0))
    return false;
  if (!plus_var(s.index.back(), c.var)) return false;
  for (size_t a = 0; a + 1 < s.index.size(); ++a)
    if (uses_var(s.index[a], c.var)) return false;
  for (size_t later = bi; later < p.blocks.size(); ++later)
    for (auto& l : p.blocks[later].loops)
      for (auto& st : l.stmts) {
        bool loads =
            !whole_lines && later > bi && st.kind == StmtKind::accumulate && st.tensor == s.tensor;
        for_each_load(st.value, [&](const ValueNode& n) { loads |= n.tensor == s.tensor; });
        if (loads) return false;
      }
  return true;
}

// Whether the printer fences a block's streamed rows once per thread, at the end of its share,
// outside a row-local run: the block's only parallel loop, if any, is its outer one, on a team
// of its own or on one thread, and does not collapse into the innermost loop.
bool fenced_at_end(const Block& b) {
  const LoopPlan& outer = b.loops[0].plan;
  bool fenced = !outer.single && outer.threads != LoopPlan::Threads::worksharing &&
                size_t(outer.collapse) < b.loops.size();
  for (size_t k = 1; k < b.loops.size(); ++k)
    fenced &= b.loops[k].plan.threads == LoopPlan::Threads::none;
  return fenced;
}

}  // namespace

Program plan_register_tiles(Program p) {
  const Program loops = p;
  LoopRanges ranges(loops);
  for (size_t bi = 0, run_end = 0; bi < loops.blocks.size(); ++bi) {
    const Block& b = loops.blocks[bi];
    // Inside a row-local run the printer writes each block from its second loop.
    size_t from = bi < run_end ? 1 : 0;
    if (b.loops[0].plan.row_local) {
      run_end = bi + size_t(b.loops[0].plan.row_local) + 1;
      from = 1;
    }
    for (size_t k = from; k < b.loops.size(); ++k) {
      size_t first = passes::tile_loop(b, k);
      if (!first) continue;
      // Threads sharing a tile loop would each store the whole local tile back.
      bool shared = false;
      for (size_t x = first; x < b.loops.size(); ++x)
        shared |= b.loops[x].plan.threads != LoopPlan::Threads::none &&
                  b.loops[x].plan.threads != LoopPlan::Threads::serial;
      if (shared) break;
      TileTest test = tile_test(ranges, b, k, first);
      // A checked tile tensor is tested in front of the tile, which holds only elements in range.
      if (b.loops.back().stmts[0].checked && (test.accesses.empty() || test.at != k)) break;
      auto& planned = p.blocks[bi].loops;
      planned[k].plan.tile = int(b.loops.size() - first);
      TileStart start = tile_start(loops, bi, k);
      planned[k].plan.tile_start = start.value;
      planned[k].plan.tile_start_first = start.first;
      planned[k].plan.tile_unrolled = !start.value;
      planned[k].plan.tile_stream =
          start.value && start.first.empty() && from == 1 && streams(loops, bi, true);
      if (test.accesses.empty()) break;
      planned[test.at].plan.tile_corners = std::move(test.accesses);
      planned[test.at].plan.tile_rows = row_tests(b, test.from);
      if (!planned[test.at].plan.tile_rows.empty())
        planned[test.at].plan.tile_rows_at = int(row_binding_loop(b, test.at));
      planned[test.at].plan.tile_skip = skipped_axes(b, test.at);
      auto [steps_at, steps] = step_rows(ranges, b, test.at, first);
      planned[test.at].plan.tile_steps = std::move(steps);
      planned[test.at].plan.tile_steps_at = int(steps_at);
      break;
    }
    // An untiled block whose one statement assigns a row of a write-once output; outside a
    // row-local run only where the row calls no math function (streamed, gelu's gradient ran
    // 15-20% slower: its math, not its stores, bounds it).
    const Loop& c = b.loops.back();
    size_t stmts = 0;
    for (auto& l : p.blocks[bi].loops)
      stmts += l.stmts.size() + l.carried.size() + size_t(l.plan.tile + l.plan.tile_transpose);
    p.blocks[bi].loops.back().plan.stream =
        (from == 1 || (fenced_at_end(b) && !c.plan.simd_math)) && b.loops.size() > 1 &&
        stmts == 1 && c.stmts.size() == 1 && c.stmts[0].kind == StmtKind::assign &&
        !c.stmts[0].checked && c.plan.threads == LoopPlan::Threads::none && !c.plan.tile_width &&
        streams(loops, bi, false);
  }
  return p;
}

}  // namespace uops
