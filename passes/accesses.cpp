#include "accesses.h"

namespace uops::passes {

using namespace ir;

namespace {

void index_reads(const Index& e, int loop, int stmt, std::vector<Access>& out) {
  if (!e) return;
  if (e->kind == IndexKind::Data) {
    out.push_back({int(e->value), e->args, false, loop, stmt});
    for (auto& a : e->args) index_reads(a, loop, stmt, out);
    return;
  }
  index_reads(e->a, loop, stmt, out);
  index_reads(e->b, loop, stmt, out);
}

void value_reads(const Value& v, int loop, int stmt, std::vector<Access>& out) {
  if (!v) return;
  if (v->kind == ValueKind::Load) {
    out.push_back({v->tensor, v->index, false, loop, stmt});
    for (auto& e : v->index) index_reads(e, loop, stmt, out);
  }
  if (v->kind == ValueKind::IndexValue) index_reads(v->ivalue, loop, stmt, out);
  value_reads(v->a, loop, stmt, out);
  value_reads(v->b, loop, stmt, out);
  value_reads(v->c, loop, stmt, out);
}

}  // namespace

std::vector<Access> stmt_accesses(const Stmt& s, int loop, int stmt) {
  std::vector<Access> out;
  value_reads(s.value, loop, stmt, out);
  index_reads(s.arg, loop, stmt, out);
  if (s.kind != StmtKind::reduce) {
    for (auto& e : s.index) index_reads(e, loop, stmt, out);
    out.push_back({s.tensor, s.index, true, loop, stmt});
  }
  return out;
}

std::vector<Access> block_accesses(const Block& b) {
  std::vector<Access> out;
  for (size_t k = 0; k < b.loops.size(); ++k) {
    index_reads(b.loops[k].start, int(k), -1, out);
    index_reads(b.loops[k].end, int(k), -1, out);
    for (size_t s = 0; s < b.loops[k].stmts.size(); ++s) {
      auto a = stmt_accesses(b.loops[k].stmts[s], int(k), int(s));
      out.insert(out.end(), a.begin(), a.end());
    }
  }
  return out;
}

TensorSets tensor_sets(const Block& b, int num_tensors) {
  TensorSets sets{std::vector<bool>(num_tensors), std::vector<bool>(num_tensors)};
  for (auto& a : block_accesses(b)) (a.write ? sets.writes : sets.reads)[a.tensor] = true;
  return sets;
}

void map_program(Program& p, const std::function<Index(const Index&)>& index,
                 const std::function<Value(const Value&)>& value) {
  for (auto& t : p.tensors)
    for (auto& e : t.shape) e = index(e);
  for (auto& eq : p.equalities) {
    eq.a = index(eq.a);
    eq.b = index(eq.b);
  }
  for (auto& b : p.blocks)
    for (auto& l : b.loops) {
      l.start = index(l.start);
      l.end = index(l.end);
      for (auto& s : l.stmts) {
        s.value = value(s.value);
        if (s.arg) s.arg = index(s.arg);
        for (auto& e : s.index) e = index(e);
      }
    }
}

}  // namespace uops::passes
