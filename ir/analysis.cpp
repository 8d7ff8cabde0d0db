#include "uops/ir/analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "uops/error.h"

namespace uops::ir {

namespace {

void index_reads(const Index& e, int loop, int stmt, std::vector<Access>& out) {
  visit(e, [&](const IndexNode& n) {
    if (n.kind == IndexKind::Data) out.push_back({n.tensor, n.args, false, loop, stmt});
  });
}

}  // namespace

std::vector<Access> stmt_accesses(const Stmt& s, int loop, int stmt) {
  std::vector<Access> out;
  visit(
      s.value,
      [&](const ValueNode& n) {
        if (n.kind == ValueKind::Load) out.push_back({n.tensor, n.index, false, loop, stmt});
      },
      [&](const Index& e) { index_reads(e, loop, stmt, out); });
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

void visit(const Block& b, const std::function<void(const Index&)>& f) {
  for (auto& l : b.loops) {
    f(l.start);
    f(l.end);
    for (auto& s : l.stmts) {
      for (auto& e : s.index) f(e);
      if (s.arg) f(s.arg);
      visit(
          s.value, [](const ValueNode&) {}, f);
    }
  }
}

void collect_carried(const Value& v, std::vector<int>& out) {
  visit(v, [&](const ValueNode& n) {
    if (n.kind == ValueKind::Carried && std::find(out.begin(), out.end(), n.carried) == out.end())
      out.push_back(n.carried);
  });
}

bool same_index(const std::vector<Index>& a, const std::vector<Index>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i])) return false;
  return true;
}

bool bounds_use_vars(const Loop& l) {
  return uses_any_var(l.start) || uses_any_var(l.end);
}

int64_t one_tile_extent(const Loop& l, Index* end) {
  int64_t c = 0;
  if (l.end->kind == IndexKind::Min)
    for (const Index& bound : {l.end->a, l.end->b})
      if (bound->kind == IndexKind::Add && equal(bound->a, l.start) && is_const(bound->b, &c) &&
          c > 0) {
        if (end) *end = bound == l.end->a ? l.end->b : l.end->a;
        return c;
      }
  return 0;
}

bool reads_row(const std::vector<Index>& index, int var, Index* start) {
  if (index.empty() || !plus_var(index.back(), var)) return false;
  for (size_t a = 0; a + 1 < index.size(); ++a)
    if (uses_var(index[a], var)) return false;
  if (start)
    *start = rewrite(index.back(), [&](const Index& e) -> Index {
      return e->kind == IndexKind::Var && e->var == var ? idx::constant(0) : nullptr;
    });
  return true;
}

bool lane_wise(const Program& p, const Value& v, int var) {
  bool ok = p.value_type() == DType::f32;
  visit(v, [&](const ValueNode& n) {
    switch (n.kind) {
      case ValueKind::Const:
        break;
      case ValueKind::Load: {
        ok &= p.tensors[size_t(n.tensor)].dtype == DType::f32;
        if (uses_var(n.index, var)) ok &= !n.checked && reads_row(n.index, var);
        break;
      }
      case ValueKind::Unary:
        ok &= n.uop == UnaryOp::neg;
        break;
      case ValueKind::Binary:
        ok &= n.bop == BinaryOp::add || n.bop == BinaryOp::sub || n.bop == BinaryOp::mul;
        break;
      default:
        ok = false;
    }
  });
  return ok;
}

bool copies_transposed(const Program& p, const Block& b) {
  const size_t n = b.loops.size();
  if (n < 2) return false;
  const Loop &i = b.loops[n - 2], &j = b.loops[n - 1];
  if (!i.stmts.empty() || !i.carried.empty() || !j.carried.empty() || j.stmts.size() != 1)
    return false;
  const Stmt& s = j.stmts[0];
  if (s.kind != StmtKind::assign || s.checked || !s.value || s.value->kind != ValueKind::Load ||
      s.value->checked || s.value->tensor == s.tensor)
    return false;
  // `index` ends in exactly (a, b), and no other axis uses either.
  auto ends_in = [&](const std::vector<Index>& index, int a, int b) {
    size_t r = index.size();
    if (r < 2) return false;
    for (size_t x = 0; x + 2 < r; ++x)
      if (uses_var(index[x], i.var) || uses_var(index[x], j.var)) return false;
    auto is = [](const Index& e, int v) { return e->kind == IndexKind::Var && e->var == v; };
    return is(index[r - 2], a) && is(index[r - 1], b);
  };
  return p.tensors[size_t(s.tensor)].dtype == DType::f32 &&
         p.tensors[size_t(s.value->tensor)].dtype == DType::f32 && ends_in(s.index, i.var, j.var) &&
         ends_in(s.value->index, j.var, i.var);
}

size_t row_binding_loop(const Block& b, size_t from) {
  const Loop& inner = b.loops.back();
  size_t at = std::min(from, b.loops.size() - 1);
  for (auto& s : inner.stmts)
    for_each_load(s.value, [&](const ValueNode& n) {
      Index start;
      if (!n.checked || !reads_row(n.index, inner.var, &start)) return;
      std::vector<Index> row(n.index.begin(), n.index.end() - 1);
      row.push_back(start);
      for (size_t x = at; x + 1 < b.loops.size(); ++x)
        for (auto& e : row)
          if (uses_var(e, b.loops[x].var)) at = std::max(at, x + 1);
    });
  return at;
}

bool stores_stay_apart(const Loop& l) {
  std::map<int, std::vector<Index>> written;
  for (auto& s : l.stmts) {
    if (s.kind == StmtKind::reduce) continue;
    auto [it, fresh] = written.emplace(s.tensor, s.index);
    if (!fresh && !same_index(it->second, s.index)) return false;
    bool own = false;
    for (auto& e : s.index) {
      if (uses_data(e)) return false;
      own |= e->kind == IndexKind::Var && e->var == l.var;
    }
    if (!own) return false;
  }
  for (auto& s : l.stmts) {
    bool apart = true;
    for_each_load(s.value, [&](const ValueNode& n) {
      for (auto& e : n.index) apart &= !uses_data(e);
      auto it = written.find(n.tensor);
      apart &= it == written.end() || same_index(it->second, n.index);
    });
    if (!apart) return false;
  }
  return true;
}

bool may_raise(const Stmt& s) {
  for (auto& e : s.index)
    if (may_raise(e)) return true;
  return may_raise(s.value) || may_raise(s.arg);
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

Stmt map_indices(Stmt s, const std::function<Index(const Index&)>& index) {
  for (auto& e : s.index) e = index(e);
  if (s.arg) s.arg = index(s.arg);
  s.value = rewrite(s.value, nullptr, index);
  return s;
}

void renumber_tensors(Program& p, const std::vector<int>& new_id) {
  std::vector<TensorInfo> kept(p.tensors.size());
  size_t n = 0;
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (new_id[t] >= 0) {
      kept.at(new_id[t]) = std::move(p.tensors[t]);
      ++n;
    }
  kept.resize(n);
  p.tensors = std::move(kept);
  auto id = [&](int t) {
    UOPS_ASSERT(new_id.at(t) >= 0,
                "renumbering drops tensor " + std::to_string(t) + ", still in use");
    return new_id[t];
  };
  std::function<Index(const Index&)> index = [&](const Index& e) {
    return rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind == IndexKind::Dim) return idx::dim(id(leaf->tensor), leaf->axis);
      if (leaf->kind != IndexKind::Data) return nullptr;
      std::vector<Index> args;
      for (auto& a : leaf->args) args.push_back(index(a));
      return idx::data(id(leaf->tensor), std::move(args));
    });
  };
  map_program(p, index, [&](const Value& v) {
    return rewrite(
        v,
        [&](const Value& n) -> Value {
          if (n->kind != ValueKind::Load) return nullptr;
          std::vector<Index> at;
          for (auto& e : n->index) at.push_back(index(e));
          return val::load(id(n->tensor), std::move(at), n->fill, n->checked);
        },
        index);
  });
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& s : l.stmts)
        if (s.kind != StmtKind::reduce) s.tensor = id(s.tensor);
}

LoopRanges::LoopRanges(const Program& p) : p_(p) {
  for (auto& b : p.blocks)
    for (auto& l : b.loops) loops_[l.var] = &l;
}

const Loop* LoopRanges::loop(int var) const {
  auto it = loops_.find(var);
  return it == loops_.end() ? nullptr : it->second;
}

bool LoopRanges::spans_axis(int t, size_t a, const Index& e) const {
  if (e->kind != IndexKind::Var) return false;
  const Loop* l = loop(e->var);
  int64_t c = -1;
  return l && is_const(l->start, &c) && c == 0 && equal(l->end, p_.tensors[t].shape[a]);
}

bool assigns_each_element(const Program& p, const Block& b, int t) {
  const TensorInfo& info = p.tensors[size_t(t)];
  if (b.loops.size() != info.shape.size()) return false;
  for (size_t a = 0; a < b.loops.size(); ++a) {
    const Loop& l = b.loops[a];
    int64_t start = -1;
    if (!is_const(l.start, &start) || start != 0 || !equal(l.end, info.shape[a]) ||
        !l.carried.empty() || (a + 1 < b.loops.size() && !l.stmts.empty()))
      return false;
  }
  const auto& stmts = b.loops.back().stmts;
  if (stmts.size() != 1 || stmts[0].kind != StmtKind::assign || stmts[0].tensor != t) return false;
  for (size_t a = 0; a < b.loops.size(); ++a)
    if (!equal(stmts[0].index[a], idx::var(b.loops[a].var))) return false;
  return true;
}

bool fills_whole(const Program& p, const Block& b, int t) {
  return assigns_each_element(p, b, t) && b.loops.back().stmts[0].value->kind == ValueKind::Const;
}

std::optional<double> value_at_start(const Program& p, size_t bi, int t) {
  if (p.tensors[size_t(t)].role == Role::input) return std::nullopt;
  std::optional<double> written;
  bool whole = false;
  for (size_t b = 0; b < bi; ++b) {
    if (p.blocks[b].partition && p.blocks[b].partition == p.blocks[bi].partition) continue;
    for (auto& a : block_accesses(p.blocks[b])) {
      if (a.tensor != t || !a.write) continue;
      const Stmt& s = p.blocks[b].loops[size_t(a.loop)].stmts[size_t(a.stmt)];
      if (s.kind != StmtKind::assign || s.value->kind != ValueKind::Const) return std::nullopt;
      double c = s.value->constant;
      if (written && (*written != c || std::signbit(*written) != std::signbit(c)))
        return std::nullopt;
      written = c;
    }
    whole = whole || fills_whole(p, p.blocks[b], t);
  }
  if (!written || (*written == 0.0 && !std::signbit(*written))) return 0.0;
  if (whole) return written;
  return std::nullopt;
}

int vector_math_calls(const Loop& l) {
  using U = UnaryOp;
  static const std::set<UnaryOp> calls{U::exp, U::log, U::sin, U::cos, U::tanh, U::sigmoid};
  int n = 0;
  for (auto& s : l.stmts)
    visit(s.value, [&](const ValueNode& v) {
      n += (v.kind == ValueKind::Unary && calls.count(v.uop)) ||
           (v.kind == ValueKind::Binary && v.bop == BinaryOp::pow);
    });
  return n;
}

}  // namespace uops::ir
