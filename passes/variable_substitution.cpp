#include "uops/passes/variable_substitution.h"

#include <algorithm>

#include "ir/range_prover.h"
#include "uops/ir/analysis.h"
#include "uops/ir/scalar_semantics.h"

namespace uops {

using namespace ir;

namespace {

// Whether storing `v` into temporary `t` and loading it back gives `v` unchanged: in the value
// type, or in i32 for a comparison or an i32 load with an integer fill (masks, squeezed argmax
// results).
bool stored_exactly(const Program& p, int t, const Value& v) {
  if (p.tensors[t].dtype == p.value_type()) return true;
  if (p.tensors[t].dtype != DType::i32) return false;
  return (v->kind == ValueKind::Binary && is_comparison(v->bop)) ||
         (v->kind == ValueKind::Load && p.tensors[v->tensor].dtype == DType::i32 &&
          v->fill == double(to_i32(v->fill)));
}

// Substitutes temporary `t` if every condition holds; returns whether it did.
bool try_substitute(Program& p, int t) {
  const TensorInfo& info = p.tensors[t];
  if (info.role != Role::temporary) return false;
  int wb = -1, wl = -1, ws = -1, writes = 0;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : block_accesses(p.blocks[b]))
      if (a.tensor == t && a.write) {
        ++writes;
        wb = int(b), wl = a.loop, ws = a.stmt;
      }
  if (writes != 1) return false;
  Loop& loop = p.blocks[wb].loops[wl];
  const Stmt& w = loop.stmts[ws];
  if (w.kind != StmtKind::assign || !stored_exactly(p, t, w.value)) return false;
  int last_read = -1, read_count = 0, load_count = 0;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : block_accesses(p.blocks[b])) {
      if (a.tensor != t || a.write) continue;
      if (int(b) != wb || a.loop != wl || a.stmt <= ws || !same_index(a.index, w.index))
        return false;
      last_read = std::max(last_read, a.stmt);
      ++read_count;
    }
  // Only loads are replaced: a Data leaf reading t (a gather's index) keeps it.
  for (int s = ws + 1; s <= last_read; ++s)
    for_each_load(loop.stmts[s].value, [&](const ValueNode& v) { load_count += v.tensor == t; });
  if (load_count != read_count) return false;
  if (!RangeProver(p, p.blocks[wb]).in_range(t, w.index)) return false;
  // Nothing between the write and the last read may change what the expression reads.
  std::vector<int> carried;
  collect_carried(w.value, carried);
  std::vector<bool> reads(p.tensors.size());
  for (auto& a : stmt_accesses(w, wl, ws))
    if (!a.write) reads[a.tensor] = true;
  for (int s = ws + 1; s < last_read; ++s) {
    const Stmt& between = loop.stmts[s];
    if (between.kind == StmtKind::reduce) {
      if (std::find(carried.begin(), carried.end(), between.carried) != carried.end()) return false;
    } else if (reads[between.tensor]) {
      return false;
    }
  }
  Value rhs = w.value;
  for (int s = ws + 1; s <= last_read; ++s)
    loop.stmts[s].value = rewrite(loop.stmts[s].value, [&](const Value& v) -> Value {
      return v->kind == ValueKind::Load && v->tensor == t ? rhs : nullptr;
    });
  loop.stmts.erase(loop.stmts.begin() + ws);
  return true;
}

constexpr size_t kMaxComposedIndex = 64;

// The distinct subexpressions of v, counted up to limit + 1: the compiler computes a repeated one
// once (layernorm's gradient from saved statistics adds one term to itself: 37 nodes, 22 distinct).
size_t distinct_nodes(const Value& v, size_t limit, std::vector<Value>& seen) {
  if (v && seen.size() <= limit &&
      std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equal(s, v); })) {
    seen.push_back(v);
    for (const Value& x : {v->a, v->b, v->c}) distinct_nodes(x, limit, seen);
  }
  return seen.size();
}

// A temporary that is a carried-free function of tensors nothing changes afterwards, assigned
// once to every element by the innermost loop of a block whose loops span its shape, is
// recomputed at each read in a later block proven in range: softmax and layernorm then need
// no full-size temporary.
void recompute_in_later_blocks(Program& p, int t) {
  const TensorInfo& info = p.tensors[t];
  if (info.role != Role::temporary) return;
  int wb = -1, writes = 0;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : block_accesses(p.blocks[b]))
      if (a.tensor == t && a.write) ++writes, wb = int(b);
  if (writes != 1) return;
  // The assign sits in the block's loop at its rank, and the loops to there span its shape.
  const Block& x = p.blocks[wb];
  size_t rank = info.shape.size(), depth = std::max<size_t>(rank, 1);
  if (x.loops.size() < depth) return;
  const Stmt* w = nullptr;
  for (auto& s : x.loops[depth - 1].stmts)
    if (s.kind == StmtKind::assign && s.tensor == t) w = &s;
  std::vector<Value> seen;
  if (!w || distinct_nodes(w->value, 32, seen) > 32 || !stored_exactly(p, t, w->value)) return;
  std::vector<int> carried;
  collect_carried(w->value, carried);
  if (!carried.empty()) return;
  for (size_t k = 0; k < depth; ++k) {
    Index extent = rank ? info.shape[k] : idx::constant(1);
    if (!is_const(x.loops[k].start) || x.loops[k].start->constant != 0 ||
        !equal(x.loops[k].end, extent) || (rank && !equal(w->index[k], idx::var(x.loops[k].var))))
      return;
  }
  std::vector<bool> reads(p.tensors.size());
  for (auto& a : stmt_accesses(*w, 0, 0))
    if (!a.write) reads[a.tensor] = true;
  // Loops inside the assign's (a block fused around it) only where it reads no tensor: a fill,
  // such as the scale attention's gradient reads again, recomputed for free where it is read.
  if (reads[t] || (x.loops.size() > depth && std::count(reads.begin(), reads.end(), true))) return;
  auto writes_reads = [&](const Block& b) {
    auto sets = tensor_sets(b, int(p.tensors.size()));
    for (size_t u = 0; u < reads.size(); ++u)
      if (reads[u] && sets.writes[u]) return true;
    return false;
  };
  if (writes_reads(x)) return;
  Value rhs = w->value;
  std::vector<int> vars;
  for (auto& l : x.loops) vars.push_back(l.var);
  for (size_t y = wb + 1; y < p.blocks.size(); ++y) {
    if (writes_reads(p.blocks[y])) return;
    RangeProver prover(p, p.blocks[y]);
    bool all_proven = true, any = false;
    for (auto& a : block_accesses(p.blocks[y]))
      if (a.tensor == t) {
        any = true;
        all_proven = all_proven && prover.in_range(t, a.index);
      }
    if (!any || !all_proven) continue;
    // Each read composes the read index into the temporary's loads; a chain of reindexes would
    // grow the composed index geometrically, so a block where it passes the bound keeps the read.
    bool too_large = false;
    std::vector<Loop> loops = p.blocks[y].loops;
    for (auto& l : loops)
      for (auto& s : l.stmts)
        s.value = rewrite(s.value, [&](const Value& v) -> Value {
          if (v->kind != ValueKind::Load || v->tensor != t) return nullptr;
          auto at = [&](const Index& e) {
            Index composed = rewrite(e, [&](const Index& leaf) -> Index {
              if (leaf->kind != IndexKind::Var) return nullptr;
              for (size_t k = 0; k < vars.size() && k < v->index.size(); ++k)
                if (leaf->var == vars[k]) return v->index[k];
              return nullptr;
            });
            too_large = too_large || node_count(composed) > kMaxComposedIndex;
            return composed;
          };
          return rewrite(
              rhs,
              [&](const Value& n) -> Value {
                if (n->kind != ValueKind::Load) return nullptr;
                std::vector<Index> ix;
                for (auto& e : n->index) ix.push_back(at(e));
                return val::load(n->tensor, std::move(ix), n->fill, true);
              },
              at);
        });
    if (!too_large) p.blocks[y].loops = std::move(loops);
  }
}

}  // namespace

Program substitute_variables(Program p) {
  for (int t = 0; t < int(p.tensors.size()); ++t) {
    recompute_in_later_blocks(p, t);
    try_substitute(p, t);
  }
  return p;
}

}  // namespace uops
