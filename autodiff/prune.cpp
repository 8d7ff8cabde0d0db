#include "prune.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "uops/ir/analysis.h"

namespace uops::autodiff {

using namespace ir;

namespace {

using Key = std::pair<int, int>;  // (tensor, axis)

class Pruner {
 public:
  Pruner(Program p, const std::vector<int>& keep) : p_(std::move(p)), keep_(keep) {}

  Program run() {
    keep_live_blocks();
    choose_inputs();
    return renumber();
  }

 private:
  void keep_live_blocks() {
    for (int t : p_.outputs()) needed_.insert(t);
    std::vector<Block> kept;
    for (size_t k = p_.blocks.size(); k-- > 0;) {
      const Block& b = p_.blocks[k];
      TensorSets sets = tensor_sets(b, int(p_.tensors.size()));
      bool live = false;
      for (size_t t = 0; t < sets.writes.size(); ++t)
        live |= sets.writes[t] && needed_.count(int(t));
      if (!live) continue;
      for (size_t t = 0; t < sets.writes.size(); ++t)
        if (sets.writes[t] || sets.reads[t]) needed_.insert(int(t));
      kept.push_back(b);
    }
    std::reverse(kept.begin(), kept.end());
    p_.blocks = std::move(kept);
  }

  bool is_input(int t) const { return p_.tensors[t].role == Role::input; }

  // Inputs stay when read or listed in `keep`, or when an axis size in use has no kept equal.
  void choose_inputs() {
    for (int t : p_.inputs())
      if (needed_.count(t) || std::count(keep_.begin(), keep_.end(), t)) kept_inputs_.insert(t);
    std::set<Key> used;
    auto use = [&](const Index& e) {
      visit(e, [&](const IndexNode& n) {
        if (n.kind == IndexKind::Dim) used.insert({n.tensor, n.axis});
      });
    };
    for (auto& b : p_.blocks) visit(b, use);
    for (size_t t = 0; t < p_.tensors.size(); ++t)
      if (!is_input(int(t)) && needed_.count(int(t)))
        for (auto& e : p_.tensors[t].shape) use(e);

    std::map<Key, Key> parent;
    std::function<Key(Key)> find = [&](Key k) {
      auto it = parent.find(k);
      return it == parent.end() || it->second == k ? k : it->second = find(it->second);
    };
    for (auto& eq : p_.equalities) {
      if (eq.a->kind != IndexKind::Dim || eq.b->kind != IndexKind::Dim) continue;
      Key a{eq.a->tensor, eq.a->axis}, b{eq.b->tensor, eq.b->axis};
      parent.emplace(a, a);
      parent.emplace(b, b);
      parent[find(a)] = find(b);
    }
    auto kept_equal = [&](Key k) -> const Key* {
      for (auto& [m, unused] : parent)
        if (kept_inputs_.count(m.first) && find(m) == find(k)) return &m;
      return nullptr;
    };
    for (bool changed = true; changed;) {
      changed = false;
      substitute_.clear();
      for (auto& k : used) {
        if (kept_inputs_.count(k.first)) continue;
        if (const Key* m = kept_equal(k)) {
          substitute_[k] = *m;
        } else {
          kept_inputs_.insert(k.first);
          changed = true;
          break;
        }
      }
    }
  }

  // Rewrites each axis of a dropped input as its kept equal.
  Index substitute(const Index& e) const {
    return rewrite(e, [&](const Index& leaf) -> Index {
      auto it = substitute_.find({leaf->tensor, leaf->axis});
      if (leaf->kind != IndexKind::Dim || it == substitute_.end()) return nullptr;
      return idx::dim(it->second.first, it->second.second);
    });
  }

  static int number(std::map<int, int>& ids, int old) {
    return ids.emplace(old, int(ids.size())).first->second;
  }

  // Whether `e` mentions an axis of a dropped input that has no substitute.
  bool names_dropped(const Index& e) const {
    bool dropped = false;
    visit(e, [&](const IndexNode& n) {
      if (n.kind == IndexKind::Dim && !kept_inputs_.count(n.tensor) &&
          !substitute_.count({n.tensor, n.axis}))
        dropped = true;
    });
    return dropped;
  }

  Program renumber() {
    std::vector<Equality> equalities;
    for (auto& eq : p_.equalities) {
      if (names_dropped(eq.a) || names_dropped(eq.b)) continue;
      Equality m{substitute(eq.a), substitute(eq.b)};
      if (equal(m.a, m.b)) continue;
      bool seen = false;
      for (auto& q : equalities)
        seen |= (equal(q.a, m.a) && equal(q.b, m.b)) || (equal(q.a, m.b) && equal(q.b, m.a));
      if (!seen) equalities.push_back(m);
    }
    p_.equalities.clear();
    std::function<Index(const Index&)> index = [&](const Index& e) { return substitute(e); };
    map_program(p_, index, [&](const Value& v) { return rewrite(v, nullptr, index); });
    p_.equalities = std::move(equalities);
    std::vector<int> new_id(p_.tensors.size(), -1);
    int n = 0;
    for (Role role : {Role::input, Role::output, Role::temporary})
      for (size_t t = 0; t < p_.tensors.size(); ++t) {
        const TensorInfo& info = p_.tensors[t];
        bool stays =
            info.role == Role::input ? kept_inputs_.count(int(t)) > 0 : needed_.count(int(t)) > 0;
        if (info.role == role && stays) new_id[t] = n++;
      }
    renumber_tensors(p_, new_id);
    renumber_vars();
    return std::move(p_);
  }

  // Loop variables and carried scalars in order of declaration.
  void renumber_vars() {
    std::map<int, int> var, carried;
    for (auto& b : p_.blocks)
      for (auto& l : b.loops) {
        l.var = number(var, l.var);
        for (auto& c : l.carried) c.id = number(carried, c.id);
      }
    std::function<Index(const Index&)> index = [&](const Index& e) {
      return rewrite(e, [&](const Index& leaf) -> Index {
        return leaf->kind == IndexKind::Var ? idx::var(var.at(leaf->var)) : nullptr;
      });
    };
    map_program(p_, index, [&](const Value& v) {
      return rewrite(
          v,
          [&](const Value& n) -> Value {
            return n->kind == ValueKind::Carried ? val::carried(carried.at(n->carried)) : nullptr;
          },
          index);
    });
    for (auto& b : p_.blocks)
      for (auto& l : b.loops)
        for (auto& s : l.stmts)
          if (s.kind == StmtKind::reduce) s.carried = carried.at(s.carried);
    p_.num_vars = int(var.size());
    p_.num_carried = int(carried.size());
  }

  Program p_;
  std::vector<int> keep_;
  std::set<int> needed_;  // tensors the kept blocks write or read, and the outputs
  std::set<int> kept_inputs_;
  std::map<Key, Key> substitute_;  // axis of a dropped input -> equal axis of a kept input
};

}  // namespace

Program prune(Program p, const std::vector<int>& keep) {
  return Pruner(std::move(p), keep).run();
}

}  // namespace uops::autodiff
