#include "prune.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace uops::autodiff {

using namespace ir;

namespace {

using Key = std::pair<int, int>;  // (tensor, axis)

// Calls `f` on every index expression of a block.
void for_each_index(const Block& b, const std::function<void(const Index&)>& f) {
  std::function<void(const Value&)> value = [&](const Value& v) {
    if (!v) return;
    for (auto& e : v->index) f(e);
    if (v->ivalue) f(v->ivalue);
    value(v->a);
    value(v->b);
    value(v->c);
  };
  for (auto& l : b.loops) {
    f(l.start);
    f(l.end);
    for (auto& s : l.stmts) {
      for (auto& e : s.index) f(e);
      if (s.arg) f(s.arg);
      value(s.value);
    }
  }
}

// Calls `f` on every leaf of `e`, Data arguments included.
void for_each_leaf(const Index& e, const std::function<void(const IndexNode&)>& f) {
  rewrite(e, [&](const Index& leaf) -> Index {
    f(*leaf);
    return nullptr;
  });
}

std::set<int> reads(const Block& b) {
  std::set<int> out;
  for (auto& l : b.loops)
    for (auto& s : l.stmts)
      for_each_load(s.value, [&](const ValueNode& v) { out.insert(v.tensor); });
  for_each_index(b, [&](const Index& e) {
    for_each_leaf(e, [&](const IndexNode& n) {
      if (n.kind == IndexKind::Data) out.insert(int(n.value));
    });
  });
  return out;
}

std::set<int> writes(const Block& b) {
  std::set<int> out;
  for (auto& l : b.loops)
    for (auto& s : l.stmts)
      if (s.kind != StmtKind::reduce) out.insert(s.tensor);
  return out;
}

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
      std::set<int> w = writes(b);
      if (std::none_of(w.begin(), w.end(), [&](int t) { return needed_.count(t); })) continue;
      needed_.insert(w.begin(), w.end());
      for (int t : reads(b)) needed_.insert(t);
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
      for_each_leaf(e, [&](const IndexNode& n) {
        if (n.kind == IndexKind::Dim) used.insert({int(n.value), n.axis});
      });
    };
    for (auto& b : p_.blocks) for_each_index(b, use);
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
      Key a{int(eq.a->value), eq.a->axis}, b{int(eq.b->value), eq.b->axis};
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

  Index map_index(const Index& e) {
    return rewrite(e, [&](const Index& leaf) -> Index {
      switch (leaf->kind) {
        case IndexKind::Dim: {
          auto it = substitute_.find({int(leaf->value), leaf->axis});
          Key k = it == substitute_.end() ? Key{int(leaf->value), leaf->axis} : it->second;
          return idx::dim(new_id_.at(k.first), k.second);
        }
        case IndexKind::Data: {
          std::vector<Index> args;
          for (auto& a : leaf->args) args.push_back(map_index(a));
          return idx::data(new_id_.at(int(leaf->value)), std::move(args));
        }
        case IndexKind::Var:
          return idx::var(number(var_, int(leaf->value)));
        default:
          return nullptr;
      }
    });
  }

  Value map_value(const Value& v) {
    return rewrite(
        v,
        [&](const Value& n) -> Value {
          if (n->kind == ValueKind::Load) {
            std::vector<Index> at;
            for (auto& e : n->index) at.push_back(map_index(e));
            return val::load(new_id_.at(n->tensor), std::move(at), n->fill, n->checked);
          }
          if (n->kind == ValueKind::Carried) return val::carried(number(carried_, n->carried));
          return nullptr;
        },
        [&](const Index& e) { return map_index(e); });
  }

  static int number(std::map<int, int>& ids, int old) {
    return ids.emplace(old, int(ids.size())).first->second;
  }

  // Whether `e` mentions an axis of a dropped input that has no substitute.
  bool names_dropped(const Index& e) const {
    bool dropped = false;
    for_each_leaf(e, [&](const IndexNode& n) {
      if (n.kind == IndexKind::Dim && !kept_inputs_.count(int(n.value)) &&
          !substitute_.count({int(n.value), n.axis}))
        dropped = true;
    });
    return dropped;
  }

  Program renumber() {
    Program out;
    out.params = p_.params;
    for (Role role : {Role::input, Role::output, Role::temporary})
      for (size_t t = 0; t < p_.tensors.size(); ++t) {
        const TensorInfo& info = p_.tensors[t];
        bool stays =
            info.role == Role::input ? kept_inputs_.count(int(t)) > 0 : needed_.count(int(t)) > 0;
        if (info.role == role && stays) {
          new_id_[int(t)] = int(out.tensors.size());
          out.tensors.push_back(info);
        }
      }
    for (auto& info : out.tensors)
      for (auto& e : info.shape) e = map_index(e);
    for (auto& eq : p_.equalities) {
      if (names_dropped(eq.a) || names_dropped(eq.b)) continue;
      Equality m{map_index(eq.a), map_index(eq.b)};
      if (equal(m.a, m.b)) continue;
      bool seen = false;
      for (auto& q : out.equalities)
        seen |= (equal(q.a, m.a) && equal(q.b, m.b)) || (equal(q.a, m.b) && equal(q.b, m.a));
      if (!seen) out.equalities.push_back(m);
    }
    for (auto& b : p_.blocks) {
      Block nb;
      nb.origin = b.origin;
      for (auto& l : b.loops) {
        Loop nl;
        nl.var = number(var_, l.var);
        nl.start = map_index(l.start);
        nl.end = map_index(l.end);
        for (auto& c : l.carried) nl.carried.push_back({number(carried_, c.id), c.op});
        for (auto& s : l.stmts) {
          Stmt ns = s;
          if (s.kind == StmtKind::reduce) {
            ns.carried = number(carried_, s.carried);
          } else {
            ns.tensor = new_id_.at(s.tensor);
            for (auto& e : ns.index) e = map_index(e);
          }
          if (s.arg) ns.arg = map_index(s.arg);
          ns.value = map_value(s.value);
          nl.stmts.push_back(std::move(ns));
        }
        nb.loops.push_back(std::move(nl));
      }
      out.blocks.push_back(std::move(nb));
    }
    out.num_vars = int(var_.size());
    out.num_carried = int(carried_.size());
    return out;
  }

  Program p_;
  std::vector<int> keep_;
  std::set<int> needed_;  // tensors the kept blocks write or read, and the outputs
  std::set<int> kept_inputs_;
  std::map<Key, Key> substitute_;  // axis of a dropped input -> equal axis of a kept input
  std::map<int, int> new_id_, var_, carried_;
};

}  // namespace

Program prune(Program p, const std::vector<int>& keep) {
  return Pruner(std::move(p), keep).run();
}

}  // namespace uops::autodiff
