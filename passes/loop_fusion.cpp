#include "uops/passes/loop_fusion.h"

#include <algorithm>

#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace {

Index rename(const Index& e, const std::vector<std::pair<int, int>>& vars) {
  return rewrite(e, [&](const Index& leaf) -> Index {
    if (leaf->kind != IndexKind::Var) return nullptr;
    for (auto& [from, to] : vars)
      if (leaf->var == from) return idx::var(to);
    return nullptr;
  });
}

Stmt rename(Stmt s, const std::vector<std::pair<int, int>>& vars) {
  return map_indices(std::move(s), [&](const Index& e) { return rename(e, vars); });
}

class Fusion {
 public:
  Fusion(const Block& a, const Block& b, int num_tensors)
      : a_(a), b_(b), num_tensors_(num_tensors) {}

  // The fused block, or false when the pair may not fuse.
  bool run(Block& out) {
    b_is_host_ = b_.loops.size() > a_.loops.size();
    const Block& host = b_is_host_ ? b_ : a_;
    const Block& guest = b_is_host_ ? a_ : b_;
    placed_.assign(guest.loops.size(), -1);
    used_.assign(host.loops.size(), false);
    budget_ = 2000;
    if (!search(host, guest, 0)) return false;
    out = build(host, guest);
    return true;
  }

 private:
  // Assigns guest loop j a host position, then checks pivots and data once all are placed.
  bool search(const Block& host, const Block& guest, size_t j) {
    if (--budget_ < 0) return false;
    if (j == guest.loops.size()) return pivots_ok(guest) && data_ok(host, guest);
    std::vector<size_t> order;
    order.push_back(j);
    for (size_t k = 0; k < host.loops.size(); ++k)
      if (k != j) order.push_back(k);
    for (size_t k : order) {
      if (used_[k] || !same_range(host.loops[k], guest.loops[j])) continue;
      used_[k] = true;
      placed_[j] = int(k);
      if (search(host, guest, j + 1)) return true;
      used_[k] = false;
      placed_[j] = -1;
    }
    return false;
  }

  bool same_range(const Loop& h, const Loop& g) const {
    auto vars = renames();
    return equal(h.start, rename(g.start, vars)) && equal(h.end, rename(g.end, vars));
  }

  std::vector<std::pair<int, int>> renames() const {
    const Block& host = b_is_host_ ? b_ : a_;
    const Block& guest = b_is_host_ ? a_ : b_;
    std::vector<std::pair<int, int>> vars;
    for (size_t j = 0; j < guest.loops.size(); ++j)
      if (placed_[j] >= 0) vars.push_back({guest.loops[j].var, host.loops[placed_[j]].var});
    return vars;
  }

  // A guest pivot p keeps its statements and carried scalars at position p, so its loops 0..p
  // must be exactly the host's loops 0..p.
  bool pivots_ok(const Block& guest) const {
    for (size_t p = 0; p < guest.loops.size(); ++p) {
      if (!guest.loops[p].is_pivot()) continue;
      for (size_t j = 0; j <= p; ++j)
        if (placed_[j] > int(p)) return false;
    }
    return true;
  }

  bool data_ok(const Block& host, const Block& guest) {
    auto vars = renames();
    std::vector<Access> acc_a, acc_b;
    auto guest_acc = block_accesses(guest);
    for (auto& x : guest_acc)
      for (auto& e : x.index) e = rename(e, vars);
    auto host_acc = block_accesses(host);
    (b_is_host_ ? acc_b : acc_a) = host_acc;
    (b_is_host_ ? acc_a : acc_b) = guest_acc;
    std::vector<bool> wa(num_tensors_), ta(num_tensors_), wb(num_tensors_), tb(num_tensors_);
    for (auto& x : acc_a) (x.write ? wa : ta)[x.tensor] = true;
    for (auto& x : acc_b) (x.write ? wb : tb)[x.tensor] = true;
    for (int t = 0; t < num_tensors_; ++t) {
      bool conflict = (wa[t] && (wb[t] || tb[t])) || (wb[t] && ta[t]);
      if (!conflict) continue;
      const std::vector<Index>* index = nullptr;
      int min_a = int(host.loops.size()), max_b = -1;
      for (auto* list : {&acc_a, &acc_b})
        for (auto& x : *list) {
          if (x.tensor != t) continue;
          if (x.stmt < 0) return false;  // a loop bound reads it
          if (!index) index = &x.index;
          if (!same_index(*index, x.index)) return false;
          if (list == &acc_a) min_a = std::min(min_a, x.loop);
          if (list == &acc_b) max_b = std::max(max_b, x.loop);
        }
      // Every A access at least as deep as every B access; positions are host positions once
      // the guest's depths are mapped, and guest statements keep their depth.
      if (min_a < max_b) return false;
      for (int k = 0; k <= max_b; ++k) {
        int var = host.loops[k].var;
        int64_t start, end;
        bool pinned = is_const(host.loops[k].start, &start) && is_const(host.loops[k].end, &end) &&
                      end - start <= 1;  // a single iteration orders nothing
        pinned |= pins_var(*index, var);
        if (!pinned) return false;
      }
    }
    return true;
  }

  Block build(const Block& host, const Block& guest) const {
    auto vars = renames();
    Block out = host;
    if (b_is_host_)
      for (auto& l : out.loops) l.stmts.clear();
    for (size_t p = 0; p < guest.loops.size(); ++p) {
      Loop& l = out.loops[p];
      l.carried.insert(l.carried.end(), guest.loops[p].carried.begin(),
                       guest.loops[p].carried.end());
      std::vector<Stmt> moved;
      for (auto& s : guest.loops[p].stmts) moved.push_back(rename(s, vars));
      // A's statements run first in every loop.
      if (b_is_host_) {
        l.stmts = moved;
      } else {
        l.stmts.insert(l.stmts.end(), moved.begin(), moved.end());
      }
    }
    if (b_is_host_)
      for (size_t p = 0; p < host.loops.size(); ++p)
        out.loops[p].stmts.insert(out.loops[p].stmts.end(), host.loops[p].stmts.begin(),
                                  host.loops[p].stmts.end());
    out.origin = a_.origin + " + " + b_.origin;
    return out;
  }

  const Block& a_;
  const Block& b_;
  int num_tensors_;
  bool b_is_host_ = false;
  std::vector<int> placed_;
  std::vector<bool> used_;
  int budget_ = 0;
};

bool overlaps(const std::vector<bool>& x, const std::vector<bool>& y) {
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] && y[i]) return true;
  return false;
}

// Fuses blocks ia < ib if legal; returns whether it did. `between` holds what the blocks
// strictly between them read and write.
bool try_fuse(Program& p, int ia, int ib, const TensorSets& sa, const TensorSets& sb,
              const TensorSets& between) {
  bool left = !overlaps(sb.reads, between.writes) && !overlaps(sb.writes, between.writes) &&
              !overlaps(sb.writes, between.reads);
  bool right = !overlaps(sa.writes, between.reads) && !overlaps(sa.writes, between.writes) &&
               !overlaps(sa.reads, between.writes);
  Block fused;
  if (!(left || right) || !Fusion(p.blocks[ia], p.blocks[ib], int(p.tensors.size())).run(fused))
    return false;
  if (left) {
    p.blocks[ia] = std::move(fused);
    p.blocks.erase(p.blocks.begin() + ib);
    return true;
  }
  p.blocks[ib] = std::move(fused);
  p.blocks.erase(p.blocks.begin() + ia);
  return true;
}

}  // namespace

Program fuse_loops(Program p) {
  int n = int(p.tensors.size());
  for (bool changed = true; changed;) {
    changed = false;
    // Each block's sets once, and what lies between grown one block at a time: a long chain of
    // blocks costs pairs times tensors, not pairs times blocks.
    std::vector<TensorSets> sets;
    for (auto& b : p.blocks) sets.push_back(tensor_sets(b, n));
    for (int ib = 1; ib < int(p.blocks.size()) && !changed; ++ib) {
      TensorSets between{std::vector<bool>(n), std::vector<bool>(n)};
      for (int ia = ib - 1; ia >= 0 && !changed; --ia) {
        changed = try_fuse(p, ia, ib, sets[ia], sets[ib], between);
        for (int t = 0; t < n && !changed; ++t) {
          between.reads[t] = between.reads[t] || sets[ia].reads[t];
          between.writes[t] = between.writes[t] || sets[ia].writes[t];
        }
      }
    }
  }
  return p;
}

}  // namespace uops
