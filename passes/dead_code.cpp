#include "uops/passes/dead_code.h"

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

void mark_carried(const Value& v, std::vector<bool>& live, bool& changed) {
  visit(v, [&](const ValueNode& n) {
    if (n.kind == ValueKind::Carried && !live[n.carried]) live[n.carried] = changed = true;
  });
}

bool is_live(const Stmt& s, const std::vector<bool>& tensors, const std::vector<bool>& carried) {
  return s.kind == StmtKind::reduce ? carried[s.carried] : tensors[s.tensor];
}

// Drops temporaries no statement touches and renumbers the rest.
void drop_unused_tensors(Program& p) {
  int n = int(p.tensors.size()), kept = 0;
  std::vector<bool> used(n);
  for (int t = 0; t < n; ++t) used[t] = p.tensors[t].role != Role::temporary;
  for (auto& b : p.blocks)
    for (auto& a : block_accesses(b)) used[a.tensor] = true;
  std::vector<int> renumber(n, -1);
  for (int t = 0; t < n; ++t)
    if (used[t]) renumber[t] = kept++;
  if (kept < n) renumber_tensors(p, renumber);
}

}  // namespace

Program eliminate_dead_code(Program p) {
  std::vector<bool> tensors(p.tensors.size()), carried(p.num_carried);
  for (int t : p.outputs()) tensors[t] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t b = p.blocks.size(); b-- > 0;) {
      const Block& block = p.blocks[b];
      bool block_live = false;
      for (size_t k = 0; k < block.loops.size(); ++k)
        for (size_t s = 0; s < block.loops[k].stmts.size(); ++s) {
          const Stmt& st = block.loops[k].stmts[s];
          if (!is_live(st, tensors, carried)) continue;
          block_live = true;
          for (auto& a : stmt_accesses(st, int(k), int(s)))
            if (!a.write && !tensors[a.tensor]) tensors[a.tensor] = changed = true;
          mark_carried(st.value, carried, changed);
        }
      if (!block_live) continue;
      for (auto& a : block_accesses(block))
        if (a.stmt < 0 && !tensors[a.tensor]) tensors[a.tensor] = changed = true;
    }
  }
  std::vector<Block> kept;
  for (auto& b : p.blocks) {
    bool any = false;
    for (auto& l : b.loops) {
      std::erase_if(l.stmts, [&](const Stmt& s) { return !is_live(s, tensors, carried); });
      std::erase_if(l.carried, [&](const Carried& c) { return !carried[c.id]; });
      any |= !l.stmts.empty();
    }
    if (any) kept.push_back(std::move(b));
  }
  p.blocks = std::move(kept);
  drop_unused_tensors(p);
  return p;
}

}  // namespace uops
