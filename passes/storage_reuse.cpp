#include "uops/passes/storage_reuse.h"

#include <set>

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

bool expensive(const Value& v) {
  if (!v) return false;
  if (v->kind == ValueKind::Unary) {
    switch (v->uop) {
      case UnaryOp::exp:
      case UnaryOp::log:
      case UnaryOp::tanh:
      case UnaryOp::sigmoid:
      case UnaryOp::sin:
      case UnaryOp::cos:
        return true;
      default:
        break;
    }
  }
  if (v->kind == ValueKind::Binary && v->bop == BinaryOp::pow) return true;
  return expensive(v->a) || expensive(v->b) || expensive(v->c);
}

// The output t can live in, or -1. `holds_expensive`: t already holds an expensive value that
// an earlier step moved into it, so one read is enough to profit.
int target(const Program& p, int t, bool holds_expensive) {
  const TensorInfo& info = p.tensors[t];
  if (info.role != Role::temporary) return -1;
  int writes = 0, last_block = -1, reads = 0;
  const Stmt* def = nullptr;
  for (size_t b = 0; b < p.blocks.size(); ++b)
    for (auto& a : block_accesses(p.blocks[b])) {
      if (a.tensor != t) continue;
      if (a.stmt < 0) return -1;
      last_block = int(b);
      if (a.write) {
        ++writes;
        def = &p.blocks[b].loops[a.loop].stmts[a.stmt];
      } else {
        ++reads;
      }
    }
  if (!holds_expensive &&
      (writes != 1 || reads < 2 || def->kind != StmtKind::assign || !expensive(def->value)))
    return -1;
  if (reads < 1) return -1;
  const Block& block = p.blocks[last_block];
  auto accesses = block_accesses(block);
  int loop = -1, last = -1;
  for (auto& a : accesses)
    if (a.tensor == t) {
      if (loop >= 0 && a.loop != loop) return -1;
      loop = a.loop;
      last = std::max(last, a.stmt);
    }
  const Stmt& s = block.loops[loop].stmts[last];
  if (s.kind != StmtKind::assign || s.tensor == t) return -1;
  int y = s.tensor;
  const TensorInfo& out = p.tensors[y];
  if (out.role == Role::input || out.dtype != info.dtype || !same_index(out.shape, info.shape))
    return -1;
  for (auto& a : accesses) {
    if (a.tensor == t && !same_index(a.index, s.index)) return -1;
    if (a.tensor == y && !(a.write && a.loop == loop && a.stmt == last)) return -1;
  }
  // t stays where a temporary computed from it before S (in an earlier block, or earlier in S's
  // loop) is read after S: in y's storage, S would overwrite what substituting that temporary
  // reads (gelu's gradient: (1 + tanh) dy / 2, read after tanh's square).
  std::set<int> from_t{t};
  for (size_t grown = 0; grown != from_t.size();) {
    grown = from_t.size();
    for (int b = 0; b <= last_block; ++b)
      for (int l = 0; l < int(p.blocks[b].loops.size()); ++l)
        for (int k = 0; k < int(p.blocks[b].loops[l].stmts.size()); ++k) {
          const Stmt& u = p.blocks[b].loops[l].stmts[k];
          if (u.kind == StmtKind::reduce || p.tensors[u.tensor].role != Role::temporary ||
              (b == last_block && (l != loop || k >= last)))
            continue;
          for (auto& a : stmt_accesses(u, l, k))
            if (!a.write && from_t.count(a.tensor)) from_t.insert(u.tensor);
        }
  }
  for (size_t b = size_t(last_block); b < p.blocks.size(); ++b)
    for (auto& a : block_accesses(p.blocks[b]))
      if (!a.write && a.tensor != t && from_t.count(a.tensor) &&
          (int(b) > last_block || a.loop != loop || a.stmt > last))
        return -1;
  for (int k = 0; k <= loop; ++k)
    if (!pins_var(s.index, block.loops[k].var)) return -1;
  for (int b = 0; b < last_block; ++b)
    for (auto& a : block_accesses(p.blocks[b]))
      if (a.tensor == y) return -1;
  return y;
}

void rename(Program& p, int from, int to) {
  std::function<Index(const Index&)> index = [&](const Index& e) {
    return rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind == IndexKind::Dim && leaf->tensor == from) return idx::dim(to, leaf->axis);
      if (leaf->kind != IndexKind::Data || leaf->tensor != from) return nullptr;
      std::vector<Index> args;
      for (auto& a : leaf->args) args.push_back(index(a));
      return idx::data(to, std::move(args));
    });
  };
  map_program(p, index, [&](const Value& v) {
    return rewrite(
        v,
        [&](const Value& n) -> Value {
          if (n->kind != ValueKind::Load || n->tensor != from) return nullptr;
          std::vector<Index> ix;
          for (auto& e : n->index) ix.push_back(index(e));
          return val::load(to, std::move(ix), n->fill, n->checked);
        },
        index);
  });
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& s : l.stmts)
        if (s.kind != StmtKind::reduce && s.tensor == from) s.tensor = to;
}

}  // namespace

Program reuse_storage(Program p) {
  for (int t = 0; t < int(p.tensors.size()); ++t)
    // A temporary that took t's storage moves on along its own last reader, so a chain of
    // elementwise statements (a gradient's dy * y * (1 - y)) ends in the output.
    for (int from = t, y = target(p, t, false); y >= 0; from = y, y = target(p, y, true)) {
      rename(p, from, y);
      if (p.tensors[y].role != Role::temporary) break;
    }
  return p;
}

}  // namespace uops
