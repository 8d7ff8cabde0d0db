#include "uops/passes/dead_code.h"

#include "accesses.h"

namespace uops {

using namespace ir;

namespace {

void mark_carried(const Value& v, std::vector<bool>& live, bool& changed) {
  if (!v) return;
  if (v->kind == ValueKind::Carried && !live[v->carried]) live[v->carried] = changed = true;
  mark_carried(v->a, live, changed);
  mark_carried(v->b, live, changed);
  mark_carried(v->c, live, changed);
}

bool is_live(const Stmt& s, const std::vector<bool>& tensors, const std::vector<bool>& carried) {
  return s.kind == StmtKind::reduce ? carried[s.carried] : tensors[s.tensor];
}

// Drops temporaries no statement touches and renumbers the rest.
void drop_unused_tensors(Program& p) {
  int n = int(p.tensors.size());
  std::vector<bool> used(n);
  for (int t = 0; t < n; ++t) used[t] = p.tensors[t].role != Role::temporary;
  for (auto& b : p.blocks)
    for (auto& a : passes::block_accesses(b)) used[a.tensor] = true;
  std::vector<int> renumber(n, -1);
  std::vector<TensorInfo> kept;
  for (int t = 0; t < n; ++t)
    if (used[t]) {
      renumber[t] = int(kept.size());
      kept.push_back(std::move(p.tensors[t]));
    }
  bool unchanged = int(kept.size()) == n;
  p.tensors = std::move(kept);
  if (unchanged) return;
  auto leaf = [&](const Index& e) -> Index {
    if (e->kind == IndexKind::Dim) return idx::dim(renumber[e->value], e->axis);
    if (e->kind == IndexKind::Data) {
      std::vector<Index> args;
      for (auto& a : e->args)
        args.push_back(rewrite(a, [&](const Index& x) -> Index {
          return x->kind == IndexKind::Dim ? idx::dim(renumber[x->value], x->axis) : nullptr;
        }));
      return idx::data(renumber[e->value], std::move(args));
    }
    return nullptr;
  };
  std::function<Index(const Index&)> index = [&](const Index& e) { return rewrite(e, leaf); };
  passes::map_program(p, index, [&](const Value& v) {
    return rewrite(
        v,
        [&](const Value& n) -> Value {
          if (n->kind != ValueKind::Load) return nullptr;
          std::vector<Index> ix;
          for (auto& e : n->index) ix.push_back(index(e));
          return val::load(renumber[n->tensor], std::move(ix), n->fill, n->checked);
        },
        index);
  });
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& s : l.stmts)
        if (s.kind != StmtKind::reduce) s.tensor = renumber[s.tensor];
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
          for (auto& a : passes::stmt_accesses(st, int(k), int(s)))
            if (!a.write && !tensors[a.tensor]) tensors[a.tensor] = changed = true;
          mark_carried(st.value, carried, changed);
        }
      if (!block_live) continue;
      for (auto& a : passes::block_accesses(block))
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
