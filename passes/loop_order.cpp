#include "uops/passes/loop_order.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "passes/tiling.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

int count_uses(const Block& b, int carried) {
  int n = 0;
  for (auto& l : b.loops)
    for (auto& s : l.stmts) n += uses_carried(s.value, carried);
  return n;
}

// Whether tensor t is +0 when block `bi` starts (ir::value_at_start).
bool starts_zero(const Program& p, size_t bi, int t) {
  std::optional<double> v = value_at_start(p, bi, t);
  return v && *v == 0.0 && !std::signbit(*v);
}

// Consecutive values of `v` read consecutive elements of a's tensor: v on its last axis, alone
// plus fixed terms, and on no other. Trailing axes of size 1 read at 0 (a reduction's kept
// dimension) change no offset and are looked past.
bool stride_one(const Program& p, const Access& a, int v) {
  size_t last = a.index.size();
  int64_t at = 0, size = 0;
  while (last > 0 && is_const(a.index[last - 1], &at) && at == 0 &&
         is_const(p.tensors[a.tensor].shape[last - 1], &size) && size == 1)
    --last;
  if (last == 0 || !plus_var(a.index[last - 1], v, /*fixed=*/true)) return false;
  for (size_t i = 0; i + 1 < last; ++i)
    if (uses_var(a.index[i], v)) return false;
  return true;
}

// Gives every loop of b a new variable, renamed everywhere in b.
void fresh_vars(Program& p, Block& b) {
  std::map<int, Index> fresh;
  for (auto& l : b.loops) fresh[l.var] = idx::var(p.num_vars++);
  auto index = [&](const Index& e) {
    return rewrite(e, [&](const Index& x) -> Index {
      return x->kind == IndexKind::Var && fresh.count(x->var) ? fresh[x->var] : nullptr;
    });
  };
  for (auto& l : b.loops) {
    l.var = fresh[l.var]->var;
    l.start = index(l.start);
    l.end = index(l.end);
    for (auto& s : l.stmts) s = map_indices(std::move(s), index);
  }
}

// A block over b's loops up to k (on new variables) that holds `stmt` alone.
Block over_outer_loops(Program& p, const Block& b, size_t k, Stmt stmt) {
  Block out;
  out.origin = b.origin;
  out.loops.assign(b.loops.begin(), b.loops.begin() + long(k) + 1);
  for (auto& l : out.loops) {
    l.stmts.clear();
    l.carried.clear();
  }
  out.loops.back().stmts.push_back(std::move(stmt));
  fresh_vars(p, out);
  return out;
}

// Turns the carried sum, max or min owned by loop k with id c into accumulation into its one
// store, when the conditions of the header hold; returns whether it did. y is set to the carried
// scalar's identity by `prologue`, a block over the loops up to k, so each element receives
// identity, v0, v1, ... as the scalar did. A store of
// more than the reduction (`y = c + b[j]`, a linear layer's bias) keeps that rest in `epilogue`,
// a block over the same loops that rewrites y[idx] from the value it then holds: y = y + b[j],
// the same operations.
bool accumulate_directly(Program& p, Block& b, size_t k, const Carried& carried,
                         std::vector<Block>* prologue, std::vector<Block>* epilogue) {
  const int c = carried.id;
  Loop& owner = b.loops[k];
  auto store = std::find_if(owner.stmts.begin(), owner.stmts.end(), [&](const Stmt& s) {
    return s.kind == StmtKind::assign && uses_carried(s.value, c);
  });
  if (store == owner.stmts.end() || count_uses(b, c) != 1 || may_raise(*store)) return false;
  int y = store->tensor;
  if (p.tensors[y].dtype != p.value_type()) return false;
  TensorSets sets = tensor_sets(b, int(p.tensors.size()));
  for (auto& a : block_accesses(b))
    if (a.tensor == y && !(a.write && a.loop == int(k))) return false;
  bool rest = store->value->kind != ValueKind::Carried;
  if (rest) {
    // The rest reads what the block leaves behind: nothing the block writes but y (at idx).
    bool reads_written = false;
    for_each_load(store->value,
                  [&](const ValueNode& n) { reads_written |= sets.writes[n.tensor]; });
    std::vector<int> carried;
    collect_carried(store->value, carried);
    if (reads_written || carried.size() != 1) return false;
  }
  for (auto& e : store->index)
    if (uses_data(e)) return false;
  for (size_t j = 0; j <= k; ++j)
    if (!pins_var(store->index, b.loops[j].var)) return false;
  for (size_t j = 0; j <= k; ++j)
    for (auto& s : b.loops[j].stmts)
      if (s.kind == StmtKind::reduce && s.carried == c) return false;
  Stmt target = *store;
  owner.stmts.erase(store);
  std::erase_if(owner.carried, [&](const Carried& x) { return x.id == c; });
  for (size_t j = k + 1; j < b.loops.size(); ++j)
    for (auto& s : b.loops[j].stmts)
      if (s.kind == StmtKind::reduce && s.carried == c) {
        s.kind = StmtKind::accumulate;
        s.tensor = y;
        s.index = target.index;
        s.checked = target.checked;
        s.op = carried.op;
        s.carried = -1;
      }
  Stmt init = target;
  init.value = val::constant(reduce_identity(carried.op));
  prologue->push_back(over_outer_loops(p, b, k, std::move(init)));
  if (!rest) return true;
  Value reduced = val::load(y, target.index, 0.0, target.checked);
  target.value = rewrite(target.value, [&](const Value& v) -> Value {
    return v->kind == ValueKind::Carried ? reduced : nullptr;
  });
  epilogue->push_back(over_outer_loops(p, b, k, std::move(target)));
  return true;
}

// Whether the loads of tensor t in the block can be read from a copy of t laid out for the new
// order: t is not written in the block, every load of it holds one index whose axes are distinct
// plain loop variables, one of them `var`, and at least `reuse` loops do not index t. Two, so
// each element is read many times and the copy pays for itself (conv2d's weights, once per output
// pixel). One such loop is not enough: it is a linear layer's batch, often 1, where a copy of the
// weights costs more than the product (a matrix-vector product reads each weight once); the C
// backend's packed variant takes one and tests its length at run time (packed_variant.h).
bool packable(const Block& b, const std::vector<Access>& accesses, int t, int var, int reuse) {
  const std::vector<Index>* index = nullptr;
  for (auto& a : accesses) {
    if (a.tensor != t) continue;
    if (a.write || (index && !same_index(*index, a.index))) return false;
    index = &a.index;
  }
  std::vector<int> vars;
  for (auto& e : *index) {
    if (e->kind != IndexKind::Var || std::count(vars.begin(), vars.end(), e->var)) return false;
    vars.push_back(e->var);
  }
  auto across = std::count_if(b.loops.begin(), b.loops.end(), [&](const Loop& l) {
    return !std::count(vars.begin(), vars.end(), l.var);
  });
  return across >= reuse && std::count(vars.begin(), vars.end(), var);
}

// The loop order of the header for a block whose statements all sit in its innermost loop, or
// nothing when the block keeps its order. `pack` receives the tensors whose loads must read a
// copy laid out for the new order (see pack_for_order); with `reuse` 1, also those read across a
// single loop.
std::optional<std::vector<size_t>> better_order(const Program& p, const Block& b,
                                                std::vector<int>* pack, int reuse) {
  size_t n = b.loops.size();
  if (n < 2) return std::nullopt;
  size_t prefix = 0;
  for (size_t k = 0; k < n; ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < n && !l.stmts.empty())) return std::nullopt;
    if (bounds_use_vars(l)) return std::nullopt;
    if (may_raise(l.start) || may_raise(l.end)) prefix = k + 1;
  }
  for (auto& s : b.loops.back().stmts)
    if (s.kind == StmtKind::reduce || may_raise(s)) return std::nullopt;

  auto accesses = block_accesses(b);
  std::set<int> written, kept;
  for (auto& a : accesses)
    if (a.write) {
      written.insert(a.tensor);
      std::vector<int> vars;
      for (auto& e : a.index) collect_vars(e, vars);
      kept.insert(vars.begin(), vars.end());
    }
  for (int t : written) {
    const std::vector<Index>* index = nullptr;
    for (auto& a : accesses) {
      if (a.tensor != t) continue;
      if (a.stmt < 0) return std::nullopt;
      if (!index) index = &a.index;
      if (!same_index(*index, a.index)) return std::nullopt;
    }
    std::erase_if(kept, [&](int v) { return !pins_var(*index, v); });
  }

  // The innermost candidate: a kept loop every store walks with stride 1, then the most loads
  // that walk it with stride 1 or do not depend on it.
  auto stride_one = [&](const Access& a, int v) { return uops::stride_one(p, a, v); };
  std::optional<size_t> best;
  int best_score = -1;
  for (size_t k = prefix; k < n; ++k) {
    int v = b.loops[k].var;
    if (!kept.count(v)) continue;
    bool stores = true;
    int score = 0;
    for (auto& a : accesses) {
      if (a.write)
        stores &= stride_one(a, v);
      else
        score += stride_one(a, v) || !uses_var(a.index, v);
    }
    if (stores && score >= best_score) best = k, best_score = score;
  }
  if (!best) return std::nullopt;
  int last = b.loops.back().var;
  bool innermost_fine = kept.count(last) > 0;
  for (auto& a : accesses)
    if (a.write) innermost_fine &= stride_one(a, last);
  if (innermost_fine) best = n - 1;
  // A reduced innermost loop that reads everything with stride 1 vectorizes as a reduction
  // where the backend may reassociate; trading it for strided loads does not pay (conv2d:
  // 0.54 of Eigen against 0.23).
  auto walks_well = [&](int v) {
    for (auto& a : accesses)
      if (!a.write && !stride_one(a, v) && uses_var(a.index, v)) return false;
    return true;
  };
  // Unless the strided loads are of tensors read many times, packed: conv2d's OHWI weights
  // become [kh][kw][ic][oc], which makes it a matmul the tiling passes block in registers. A
  // block reordered anyway packs what it can too (a matmul gradient's B read transposed).
  int v = b.loops[*best].var;
  bool must = !innermost_fine && walks_well(last) && !walks_well(v);
  for (auto& a : accesses) {
    if (a.write || stride_one(a, v) || !uses_var(a.index, v)) continue;
    if (packable(b, accesses, a.tensor, v, reuse)) {
      if (!std::count(pack->begin(), pack->end(), a.tensor)) pack->push_back(a.tensor);
    } else if (must) {
      return std::nullopt;
    }
  }
  // An innermost loop already storing with stride 1 stays, reading packed copies if any.
  if (innermost_fine && pack->empty()) return std::nullopt;
  std::vector<size_t> order;
  for (size_t k = 0; k < n; ++k)
    if (k != *best) order.push_back(k);
  order.push_back(*best);
  return order;
}

// Tensor t copied into a new temporary whose axes follow the block's loop order, filled by a block
// put before `bi`, and the block's loads of t reading the copy (the same elements: bit-exact).
void pack_for_order(Program& p, size_t bi, int t) {
  Block& b = p.blocks[bi];
  std::vector<Index> index;
  for (auto& a : block_accesses(b))
    if (a.tensor == t) index = a.index;
  std::vector<size_t> axes;  // packed axis -> axis of t, in loop order
  for (auto& l : b.loops)
    for (size_t x = 0; x < index.size(); ++x)
      if (index[x]->var == l.var) axes.push_back(x);
  TensorInfo copy;
  copy.name = p.tensors[t].name + "_packed";
  while (p.find_tensor(copy.name) >= 0) copy.name += "_";
  copy.dtype = p.tensors[t].dtype;
  std::vector<Index> packed_index, source_index(index.size());
  Block fill;
  fill.origin = "pack " + p.tensors[t].name;
  for (size_t x : axes) {
    copy.shape.push_back(p.tensors[t].shape[x]);
    packed_index.push_back(index[x]);
    source_index[x] = idx::var(p.num_vars);
    fill.loops.push_back(passes::counted(p.num_vars++, p.tensors[t].shape[x]));
  }
  int packed = int(p.tensors.size());
  std::vector<Index> at;
  for (auto& l : fill.loops) at.push_back(idx::var(l.var));
  fill.loops.back().stmts.push_back({.tensor = packed,
                                     .index = std::move(at),
                                     .checked = false,
                                     .value = val::load(t, source_index, 0.0, false)});
  for (auto& st : b.loops.back().stmts)
    st.value = rewrite(st.value, [&](const Value& v) -> Value {
      if (v->kind != ValueKind::Load || v->tensor != t) return nullptr;
      return val::load(packed, packed_index, v->fill, v->checked);
    });
  p.tensors.push_back(std::move(copy));
  p.blocks.insert(p.blocks.begin() + long(bi), std::move(fill));
}

// A block that owns no carried scalars and writes two or more tensors, reading none of them (an
// accumulation's read of its own element aside), computes each tensor on its own: it splits into
// one block per written tensor, each with its statements in their order and the loops down to
// the innermost that holds one (the later parts on new loop variables), when some part can then
// be reordered, which the whole cannot (a matmul gradient's da and db, fused because they share
// their loops and loads), or when every tensor its innermost loop touches is re-read across some
// loop (conv2d's dx and dw, linear's dx and dw beside db): each of those parts is then a
// contraction, which the C plan's tilings block in registers only on its own.
std::vector<Block> split_independent(Program& p, const Block& b, int reuse) {
  std::vector<int> written;
  for (auto& l : b.loops) {
    if (!l.carried.empty()) return {};
    for (auto& s : l.stmts)
      if (!std::count(written.begin(), written.end(), s.tensor)) written.push_back(s.tensor);
  }
  if (written.size() < 2) return {};
  bool splits = true;
  for (auto& a : block_accesses(b)) {
    if (!a.write && std::count(written.begin(), written.end(), a.tensor)) return {};
    splits &= a.loop + 1 < int(b.loops.size()) ||
              std::any_of(b.loops.begin(), b.loops.end(),
                          [&](const Loop& l) { return !uses_var(a.index, l.var); });
  }
  std::vector<Block> parts;
  for (int t : written) {
    Block part = b;
    for (auto& l : part.loops) std::erase_if(l.stmts, [&](const Stmt& s) { return s.tensor != t; });
    while (part.loops.back().stmts.empty()) part.loops.pop_back();
    if (!parts.empty()) fresh_vars(p, part);
    std::vector<int> pack;
    splits |= better_order(p, part, &pack, reuse).has_value();
    parts.push_back(std::move(part));
  }
  return splits ? parts : std::vector<Block>{};
}

// A block accumulating one sum into y, zero on entry and touched by nothing else, whose
// reduction loops (those y's index does not use) can run innermost with every load walking the
// last of them with stride 1 or not at all, while no order makes its stores and loads all walk
// with stride 1 (the da of matmul's gradient, da[i, k] += dc[i, j] * b[k, j]), computes dot
// products: the kept loops first, then the reductions, each in its order, the last kept loop
// owning a carried sum that the innermost loop reduces and that it stores into y. The same
// contributions in the same order from the same zero: bit for bit; and the form tile_dots
// (reduction_tiling.h) blocks.
bool to_dot_products(Program& p, size_t bi) {
  Block& b = p.blocks[bi];
  size_t n = b.loops.size();
  for (size_t k = 0; k < n; ++k) {
    const Loop& l = b.loops[k];
    if (!l.carried.empty() || (k + 1 < n && !l.stmts.empty()) || bounds_use_vars(l) ||
        may_raise(l.start) || may_raise(l.end))
      return false;
  }
  auto& stmts = b.loops.back().stmts;
  if (stmts.size() != 1 || stmts[0].kind != StmtKind::accumulate || stmts[0].op != ReduceOp::sum ||
      may_raise(stmts[0]))
    return false;
  Stmt store = stmts[0];
  int y = store.tensor;
  if (p.tensors[y].dtype != p.value_type() || !starts_zero(p, bi, y)) return false;
  auto accesses = block_accesses(b);
  for (auto& a : accesses)
    if (a.tensor == y && !a.write) return false;
  std::vector<Loop> kept, reduced;
  for (auto& l : b.loops) {
    const bool in_index = uses_var(store.index, l.var);
    if (in_index && !pins_var(store.index, l.var)) return false;
    (in_index ? kept : reduced).push_back(l);
  }
  if (kept.empty() || reduced.empty()) return false;
  int r = reduced.back().var;
  for (auto& a : accesses)
    if (!a.write && !stride_one(p, a, r) && uses_var(a.index, r)) return false;
  const Access& write =
      *std::find_if(accesses.begin(), accesses.end(), [](const Access& a) { return a.write; });
  if (stride_one(p, write, b.loops.back().var)) {
    // The innermost loop already walks y with stride 1: better_order judged the loads.
    bool loads_fine = true;
    for (auto& a : accesses)
      if (!a.write)
        loads_fine &=
            stride_one(p, a, b.loops.back().var) || !uses_var(a.index, b.loops.back().var);
    if (loads_fine) return false;
  }
  for (auto& l : kept) l.stmts.clear();
  for (auto& l : reduced) l.stmts.clear();
  int c = p.num_carried++;
  kept.back().carried.push_back({c, ReduceOp::sum});
  reduced.back().stmts.push_back(
      {.kind = StmtKind::reduce, .op = ReduceOp::sum, .carried = c, .value = store.value});
  store.kind = StmtKind::assign;
  store.value = val::carried(c);
  kept.back().stmts.push_back(std::move(store));
  b.loops = std::move(kept);
  b.loops.insert(b.loops.end(), reduced.begin(), reduced.end());
  return true;
}

constexpr size_t kKept = size_t(-1);

// Reorders block bi (packing what the new order needs); returns the blocks it put before it, or
// kKept when the block keeps its order.
// With `once`, copies read across a single loop may be made, and `once` receives the lengths of
// each (PackedOnce).
size_t reorder(Program& p, size_t bi, Block b, std::vector<PackedOnce>* once) {
  std::vector<int> pack;
  auto order = better_order(p, b, &pack, once ? 1 : 2);
  if (!order) return kKept;
  if (once) {
    // The loops that index no copied element re-read it; those that index no written one reduce.
    auto accesses = block_accesses(b);
    auto indexes = [&](const Loop& l, bool write, int t) {
      for (auto& a : accesses)
        if (a.write == write && (write || a.tensor == t) && uses_var(a.index, l.var)) return true;
      return false;
    };
    for (int t : pack) {
      PackedOnce copy{idx::constant(1), idx::constant(1)};
      int across = 0;
      for (auto& l : b.loops) {
        Index n = idx::sub(l.end, l.start);
        if (!indexes(l, false, t)) copy.reuse = idx::mul(copy.reuse, n), ++across;
        if (!indexes(l, true, t)) copy.reduction = idx::mul(copy.reduction, n);
      }
      if (across == 1) once->push_back(std::move(copy));
    }
  }
  std::vector<Stmt> stmts = std::move(b.loops.back().stmts);
  std::vector<Loop> loops;
  for (size_t k : *order) loops.push_back(std::move(b.loops[k]));
  loops.back().stmts = std::move(stmts);
  b.loops = std::move(loops);
  p.blocks[bi] = std::move(b);
  for (int t : pack) pack_for_order(p, bi++, t);
  return pack.size();
}

}  // namespace

Program order_loops(Program p, std::vector<PackedOnce>* packed_once) {
  const int reuse = packed_once ? 1 : 2;
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    int num_vars = p.num_vars;
    if (auto parts = split_independent(p, p.blocks[bi], reuse); !parts.empty()) {
      p.blocks.erase(p.blocks.begin() + long(bi));
      p.blocks.insert(p.blocks.begin() + long(bi), parts.begin(), parts.end());
    } else {
      p.num_vars = num_vars;
    }
    Block b = p.blocks[bi];
    num_vars = p.num_vars;  // the epilogues take new loop variables
    std::vector<Block> prologues, epilogues;
    for (size_t k = 0; k < b.loops.size(); ++k) {
      std::vector<Carried> owned = b.loops[k].carried;
      for (auto& c : owned)
        if (c.op == ReduceOp::sum || c.op == ReduceOp::max || c.op == ReduceOp::min)
          accumulate_directly(p, b, k, c, &prologues, &epilogues);
    }
    size_t packs = reorder(p, bi, std::move(b), packed_once);
    if (packs == kKept) {
      p.num_vars = num_vars;
      to_dot_products(p, bi);
      continue;
    }
    // The prologues go right before the block, after its packs: a run of blocks may then share
    // their outer loops (row_local_runs.h).
    bi += packs;
    p.blocks.insert(p.blocks.begin() + long(bi), prologues.begin(), prologues.end());
    bi += prologues.size();
    p.blocks.insert(p.blocks.begin() + long(bi) + 1, epilogues.begin(), epilogues.end());
    bi += epilogues.size();
  }
  return p;
}

}  // namespace uops
