#include "backends/codegen/parallel.h"

#include <map>

namespace uops::codegen {

using namespace ir;

namespace {

enum class Access { read, assign, accumulate };

struct TensorAccess {
  Access kind;
  ReduceOp op;
  std::vector<Index> index;
};

using AccessMap = std::map<int, std::vector<TensorAccess>>;

void collect_index_reads(const Index& e, AccessMap& out) {
  if (!e) return;
  if (e->kind == IndexKind::Data) {
    out[int(e->value)].push_back({Access::read, ReduceOp::sum, e->args});
    for (auto& a : e->args) collect_index_reads(a, out);
    return;
  }
  collect_index_reads(e->a, out);
  collect_index_reads(e->b, out);
}

void collect_value_reads(const Value& v, AccessMap& out) {
  if (!v) return;
  if (v->kind == ValueKind::Load) {
    out[v->tensor].push_back({Access::read, ReduceOp::sum, v->index});
    for (auto& e : v->index) collect_index_reads(e, out);
  }
  if (v->ivalue) collect_index_reads(v->ivalue, out);
  collect_value_reads(v->a, out);
  collect_value_reads(v->b, out);
  collect_value_reads(v->c, out);
}

// Every access of the loops from `depth` inward, by tensor.
AccessMap region_accesses(const Block& b, size_t depth) {
  AccessMap out;
  for (size_t k = depth; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (k > depth) {
      collect_index_reads(l.start, out);
      collect_index_reads(l.end, out);
    }
    for (auto& s : l.stmts) {
      collect_value_reads(s.value, out);
      if (s.arg) collect_index_reads(s.arg, out);
      if (s.kind == StmtKind::reduce) continue;
      for (auto& e : s.index) collect_index_reads(e, out);
      out[s.tensor].push_back(
          {s.kind == StmtKind::assign ? Access::assign : Access::accumulate, s.op, s.index});
    }
  }
  return out;
}

bool written(const std::vector<TensorAccess>& as) {
  for (auto& a : as)
    if (a.kind != Access::read) return true;
  return false;
}

// Some axis holds exactly `v` in every access.
bool split_by(const std::vector<TensorAccess>& as, int v) {
  size_t rank = as.front().index.size();
  for (size_t axis = 0; axis < rank; ++axis) {
    bool all = true;
    for (auto& a : as) {
      const Index& e = a.index[axis];
      all &= e->kind == IndexKind::Var && e->value == v;
    }
    if (all) return true;
  }
  return false;
}

bool only_accumulates(const std::vector<TensorAccess>& as) {
  for (auto& a : as)
    if (a.kind != Access::accumulate || a.op != as.front().op) return false;
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
      if (!written(as) || split_by(as, b.loops[k].var)) continue;
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
          if (e->kind == IndexKind::Var && e->value == l.var) e = idx::var(shared);
        all[t].push_back(std::move(a));
      }
  }
  for (auto& [t, as] : all)
    if (written(as) && !split_by(as, shared)) return false;
  return true;
}

std::set<int> colliding_tensors(const Program&, const Block& b, int depth) {
  std::set<int> out;
  for (auto& [t, as] : region_accesses(b, 0)) {
    if (!written(as)) continue;
    for (int k = 0; k < depth; ++k)
      if (!runs_once(b.loops[k]) && !split_by(as, b.loops[k].var)) out.insert(t);
  }
  return out;
}

Block exclusive_loops_first(const Program& p, const Block& b) {
  for (size_t k = 0; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < b.loops.size() && !l.stmts.empty())) return b;
    if (uses_any_var(l.start) || uses_any_var(l.end) || uses_data(l.start) || uses_data(l.end))
      return b;
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

}  // namespace uops::codegen
