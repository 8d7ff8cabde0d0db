#include "backends/codegen/zero_fill.h"

#include <algorithm>

#include "uops/ir/analysis.h"

namespace uops::codegen {

using namespace ir;

namespace {

// An assign in loop k stores to an element index whose every axis is either the variable of a
// loop 0..k running over exactly that axis, or 0 on an axis of size 1; and loops 0..k run over
// nothing else but [0, 1). Then each run of the block writes every element, whatever the sizes:
// no outer loop that could be empty is left over, and deeper loops do not matter.
bool assigns_every_element(const Program& p, const Block& b, int t) {
  const std::vector<Index>& shape = p.tensors[t].shape;
  for (size_t k = 0; k < b.loops.size(); ++k) {
    for (const Stmt& s : b.loops[k].stmts) {
      if (s.kind != StmtKind::assign || s.tensor != t) continue;
      std::vector<int> loop_of_axis(s.index.size(), -1);
      bool covered = true;
      for (size_t a = 0; a < s.index.size(); ++a) {
        int64_t c = -1, size = -1;
        if (is_const(s.index[a], &c) && c == 0 && is_const(shape[a], &size) && size == 1) continue;
        for (size_t l = 0; l <= k; ++l)
          if (s.index[a]->kind == IndexKind::Var && b.loops[l].var == s.index[a]->var)
            loop_of_axis[a] = int(l);
        covered &= loop_of_axis[a] >= 0 && equal(b.loops[loop_of_axis[a]].end, shape[a]);
      }
      for (size_t l = 0; l <= k && covered; ++l) {
        int64_t start = -1, end = -1;
        int axes = int(std::count(loop_of_axis.begin(), loop_of_axis.end(), int(l)));
        covered = is_const(b.loops[l].start, &start) && start == 0 &&
                  (axes == 1 || (axes == 0 && is_const(b.loops[l].end, &end) && end == 1));
      }
      if (covered) return true;
    }
  }
  return false;
}

// Every read of t in the block is of an element an earlier assign of the same loop's statements
// stored in the same iteration, at the same index (free of Data leaves, so it names the same
// element at both places): such a read sees the assigned value, never the initial zero. Softmax's
// `y = exp(x - max); sum += y` is one; without this its whole output was zeroed on every run.
bool reads_only_what_it_assigned(const Block& b, int t) {
  std::vector<Access> accesses = block_accesses(b);
  for (const Access& r : accesses) {
    if (r.write || r.tensor != t) continue;
    bool dominated = false;
    for (const Access& w : accesses)
      dominated |= w.write && w.tensor == t && w.loop == r.loop && w.stmt >= 0 && w.stmt < r.stmt &&
                   same_index(w.index, r.index) &&
                   std::none_of(r.index.begin(), r.index.end(), uses_data);
    if (!dominated) return false;
  }
  return true;
}

}  // namespace

std::vector<bool> needs_zero_fill(const Program& p) {
  int n = int(p.tensors.size());
  std::vector<bool> zero(n, false);
  std::vector<bool> decided(n, false);
  for (int t = 0; t < n; ++t) {
    zero[t] = p.tensors[t].role != Role::input;
    decided[t] = !zero[t];
  }
  for (const Block& b : p.blocks) {
    TensorSets sets = tensor_sets(b, n);
    for (int t = 0; t < n; ++t) {
      if (decided[t] || !(sets.reads[t] || sets.writes[t])) continue;
      decided[t] = true;
      bool only_assigns = true;
      for (const Loop& l : b.loops)
        for (const Stmt& s : l.stmts)
          only_assigns &= !(s.tensor == t && s.kind == StmtKind::accumulate);
      zero[t] = (sets.reads[t] && !reads_only_what_it_assigned(b, t)) || !only_assigns ||
                !assigns_every_element(p, b, t);
    }
  }
  return zero;
}

Program with_own_zeros(Program p) {
  std::vector<bool> zero = needs_zero_fill(p);
  auto fill = [&](size_t t) {  // t[i0, i1, ...] = 0 over t's axes
    Block b;
    b.origin = "zeros of " + p.tensors[t].name;
    Stmt s;
    s.tensor = int(t);
    s.checked = false;
    s.value = val::constant(0.0);
    std::vector<Index> extents = p.tensors[t].shape;
    if (extents.empty()) extents = {idx::constant(1)};  // a scalar: one iteration, no index
    for (const Index& size : extents) {
      b.loops.emplace_back();
      b.loops.back().var = p.num_vars++;
      b.loops.back().start = idx::constant(0);
      b.loops.back().end = size;
      if (!p.tensors[t].shape.empty()) s.index.push_back(idx::var(b.loops.back().var));
    }
    b.loops.back().stmts.push_back(std::move(s));
    zero[t] = false;
    return b;
  };
  std::vector<Block> blocks;
  for (Block& b : p.blocks) {
    TensorSets sets = tensor_sets(b, int(zero.size()));
    for (size_t t = 0; t < zero.size(); ++t)
      if (zero[t] && (sets.reads[t] || sets.writes[t])) blocks.push_back(fill(t));
    blocks.push_back(std::move(b));
  }
  for (size_t t = 0; t < zero.size(); ++t)  // an output no block touches
    if (zero[t]) blocks.push_back(fill(t));
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops::codegen
