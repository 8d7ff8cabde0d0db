#include "uops/passes/variable_substitution.h"

#include <algorithm>

#include "accesses.h"
#include "range_prover.h"

namespace uops {

namespace {

bool same_index(const std::vector<Index>& a, const std::vector<Index>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i])) return false;
  return true;
}

void carried_used(const Value& v, std::vector<int>& out) {
  if (!v) return;
  if (v->kind == ValueKind::Carried) out.push_back(v->carried);
  carried_used(v->a, out);
  carried_used(v->b, out);
  carried_used(v->c, out);
}

// Substitutes temporary `t` if every condition holds; returns whether it did.
bool try_substitute(Program& p, int t) {
  const TensorInfo& info = p.tensors[t];
  if (info.role != Role::temporary || info.dtype != p.value_type()) return false;
  int wb = -1, wl = -1, ws = -1, writes = 0;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : passes::block_accesses(p.blocks[b]))
      if (a.tensor == t && a.write) {
        ++writes;
        wb = int(b), wl = a.loop, ws = a.stmt;
      }
  if (writes != 1) return false;
  Loop& loop = p.blocks[wb].loops[wl];
  const Stmt& w = loop.stmts[ws];
  if (w.kind != StmtKind::assign) return false;
  int last_read = -1;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : passes::block_accesses(p.blocks[b])) {
      if (a.tensor != t || a.write) continue;
      if (int(b) != wb || a.loop != wl || a.stmt <= ws || !same_index(a.index, w.index))
        return false;
      last_read = std::max(last_read, a.stmt);
    }
  if (!passes::RangeProver(p, p.blocks[wb]).in_range(t, w.index)) return false;
  // Nothing between the write and the last read may change what the expression reads.
  std::vector<int> carried;
  carried_used(w.value, carried);
  std::vector<bool> reads(p.tensors.size());
  for (auto& a : passes::stmt_accesses(w, wl, ws))
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

}  // namespace

Program substitute_variables(Program p) {
  for (int t = 0; t < int(p.tensors.size()); ++t) try_substitute(p, t);
  return p;
}

}  // namespace uops
