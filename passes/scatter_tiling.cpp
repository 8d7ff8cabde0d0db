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
size_t scatter_from(const Program& p, const Block& b) {
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
      bool used = false;
      for (auto& e : s0.index) used |= uses_var(e, b.loops[k].var);
      window |= used && !ex[k];
      reduction |= !used;
    }
    return ex[n - 1] && window && reduction ? first : n;
  }
  return n;
}

}  // namespace

Program tile_scatters(Program p, int64_t cols) {
  std::vector<Block> blocks;
  for (auto& b : p.blocks) {
    size_t n = b.loops.size(), first = scatter_from(p, b);
    if (first == n) {
      blocks.push_back(std::move(b));
      continue;
    }
    // The loops the written index uses, then the others, each in their order, then j.
    const Stmt& s0 = b.loops.back().stmts[0];
    std::vector<Loop> used, unused;
    for (size_t k = first; k + 1 < n; ++k) {
      bool uses = false;
      for (auto& e : s0.index) uses |= uses_var(e, b.loops[k].var);
      (uses ? used : unused).push_back(b.loops[k]);
    }
    // One slice of the operands read along j (w at one kh, kw) serves a run of the last used
    // loop that indexes none of them (ow) from L1: that loop runs inside the ones that do.
    auto along_j = [&](int var) {
      bool found = false;
      for_each_load(s0.value, [&](const ValueNode& n) {
        bool row = false, uses = false;
        for (auto& e : n.index) row |= uses_var(e, b.loops.back().var), uses |= uses_var(e, var);
        found |= row && uses;
      });
      return found;
    };
    size_t r = 0;
    while (r < used.size() && !along_j(used[r].var)) ++r;
    if (r > 0 && r < used.size())
      std::rotate(used.begin() + long(r - 1), used.begin() + long(r), used.end());
    Loop j = std::move(b.loops.back());
    b.loops.resize(first);
    for (auto* group : {&used, &unused})
      for (auto& l : *group) b.loops.push_back(std::move(l));
    // j over whole tiles: ..., j', the unused loops, c; then j over the columns left over.
    Loop tj = counted(p.num_vars++, whole_tiles(j, cols)),
         c = counted(p.num_vars++, idx::constant(cols));
    if (empty(tj)) {
      b.loops.push_back(std::move(j));
      blocks.push_back(std::move(b));
      continue;
    }
    Block rest = b;
    rest.loops.push_back(j);
    rest.loops.back().start =
        idx::add(j.start, idx::mul(whole_tiles(j, cols), idx::constant(cols)));
    c.stmts = std::move(j.stmts);
    b.loops.insert(b.loops.begin() + long(first + used.size()), std::move(tj));
    b.loops.push_back(std::move(c));
    replace_var(b, j.var,
                idx::add(idx::add(j.start, idx::mul(idx::var(b.loops[first + used.size()].var),
                                                    idx::constant(cols))),
                         idx::var(b.loops.back().var)));
    blocks.push_back(std::move(b));
    if (!empty(rest.loops.back())) blocks.push_back(std::move(rest));
  }
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops
