#include "uops/ir/lower.h"

#include <map>
#include <numeric>

#include "uops/error.h"

namespace uops {

using namespace ir;

namespace {

class Lowering {
 public:
  explicit Lowering(const Graph& g) : g_(g) {}

  Program run(std::vector<int>* tensor_of_node) {
    if (g_.outputs().empty()) throw Error("lower: the graph has no outputs");
    p_.params = g_.params();
    const auto& nodes = g_.nodes();
    tensor_of_.assign(nodes.size(), -1);
    // Inputs first so that every shape can be written over their axes.
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].kind == UopKind::input)
        tensor_of_[i] = new_tensor(nodes[i], nodes[i].name, Role::input);
    unify_equal_dims();
    plan_sums();
    std::map<int, std::vector<std::string>> output_names;
    for (auto& [name, id] : g_.outputs()) output_names[id].push_back(name);
    auto make_tensor = [&](int i) {
      auto names = output_names.find(i);
      bool is_output = names != output_names.end();
      tensor_of_[i] = new_tensor(nodes[i], is_output ? names->second[0] : "t" + std::to_string(i),
                                 is_output ? Role::output : Role::temporary);
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].kind == UopKind::input || absorbed_by_[i] >= 0) continue;
      if (tensor_of_[host_[i]] < 0) make_tensor(host_[i]);
      tensor_of_[i] = tensor_of_[host_[i]];
      emit(nodes[i]);
    }
    // An input given as an output, or one node given under several names, needs copies.
    for (auto& [id, names] : output_names) {
      bool first_is_tensor = g_.nodes()[id].kind != UopKind::input;
      for (size_t k = first_is_tensor ? 1 : 0; k < names.size(); ++k) {
        int t = new_tensor(g_.nodes()[id], names[k], Role::output);
        emit_copy(g_.nodes()[id], tensor_of_[id], t);
      }
    }
    for (auto& [a, b] : g_.equalities()) p_.equalities.push_back({map(a, false), map(b, false)});
    if (tensor_of_node) *tensor_of_node = tensor_of_;
    return std::move(p_);
  }

 private:
  int new_tensor(const UopNode& n, const std::string& name, Role role) {
    TensorInfo t;
    t.name = name;
    t.dtype = n.dtype;
    t.role = role;
    int id = int(p_.tensors.size());
    p_.tensors.push_back(std::move(t));
    if (role == Role::input)
      for (size_t a = 0; a < n.shape.size(); ++a)
        p_.tensors[id].shape.push_back(idx::dim(id, int(a)));
    else
      for (auto& e : n.shape) p_.tensors[id].shape.push_back(map(e));
    return id;
  }

  // Sums of scatters, as autodiff builds a gradient: in `a + s` where s is a scatter that only
  // this add reads, s accumulates straight into the add's tensor after a copy of a. An `a` that
  // only this add reads and that is itself such a sum or a scatter is built in that same tensor
  // (its host), so a chain of scatters into one gradient needs no copy and no temporaries.
  void plan_sums() {
    const auto& nodes = g_.nodes();
    int count = int(nodes.size());
    std::vector<int> uses(count, 0);
    for (auto& n : nodes)
      for (int o : n.operands) ++uses[o];
    for (auto& [name, id] : g_.outputs()) uses[id] += 2;
    absorbed_by_.assign(count, -1);
    absorbs_.assign(count, -1);
    host_.resize(count);
    std::iota(host_.begin(), host_.end(), 0);
    for (int i = 0; i < count; ++i) {
      const UopNode& n = nodes[i];
      if (n.kind != UopKind::binary || n.bop != BinaryOp::add) continue;
      for (int k : {1, 0}) {
        int s = n.operands[k], other = n.operands[1 - k];
        if (nodes[s].kind != UopKind::scatter || uses[s] != 1) continue;
        absorbs_[i] = s;
        absorbed_by_[s] = i;
        if (uses[other] == 1 && (nodes[other].kind == UopKind::scatter || absorbs_[other] >= 0))
          host_[other] = i;
        break;
      }
    }
    for (int i = count; i-- > 0;) host_[i] = host_[host_[i]];
  }

  // Union-find over input axes that an assertion says are equal; the representative is the
  // earliest axis so that printed programs read naturally.
  void unify_equal_dims() {
    for (auto& [a, b] : g_.equalities()) {
      if (a->kind != IndexKind::Dim || b->kind != IndexKind::Dim) continue;
      auto ka = find({a->tensor, a->axis}), kb = find({b->tensor, b->axis});
      if (ka == kb) continue;
      if (kb < ka) std::swap(ka, kb);
      parent_[kb] = ka;
    }
  }
  std::pair<int, int> find(std::pair<int, int> k) {
    auto it = parent_.find(k);
    if (it == parent_.end() || it->second == k) return k;
    return it->second = find(it->second);
  }

  // Graph form (Dim over input node ids) to program form (Dim over tensor ids, unified unless
  // `unify` is false: the assertions themselves must keep naming the axes they compare).
  Index map(const Index& e, bool unify = true) {
    return rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind != IndexKind::Dim) return nullptr;
      std::pair<int, int> key{leaf->tensor, leaf->axis};
      auto [node, axis] = unify ? find(key) : key;
      return idx::dim(tensor_of_[node], axis);
    });
  }

  // A loop per output axis (a single [0, 1) loop for rank 0); returns the loop variables.
  std::vector<Index> elementwise_nest(Block& b, const std::vector<Index>& shape) {
    std::vector<Index> vars;
    for (auto& extent : shape) vars.push_back(new_loop(b, map(extent)));
    if (shape.empty()) new_loop(b, idx::constant(1));
    return vars;
  }
  Index new_loop(Block& b, Index end) {
    b.loops.push_back({.var = p_.num_vars++, .start = idx::constant(0), .end = std::move(end)});
    return idx::var(b.loops.back().var);
  }

  Value load_all(int node, const std::vector<Index>& vars) {
    return val::load(tensor_of_[node], vars);
  }

  void assign(Loop& l, int tensor, std::vector<Index> at, Value v) {
    l.stmts.push_back({.kind = StmtKind::assign,
                       .tensor = tensor,
                       .index = std::move(at),
                       .value = std::move(v)});
  }

  void emit(const UopNode& n) {
    Block b;
    int out = tensor_of_[&n - g_.nodes().data()];
    if (n.kind == UopKind::reduce) {
      emit_reduce(n, out, b);
      return p_.blocks.push_back(std::move(b));
    }
    // A scatter, or a node that absorbs one (its other operand copied into the output first).
    const UopNode* scatter = n.kind == UopKind::scatter ? &n : nullptr;
    if (int s = absorbs_[&n - g_.nodes().data()]; s >= 0) {
      int other = n.operands[n.operands[0] == s ? 1 : 0];
      if (tensor_of_[other] != out) emit_copy(n, tensor_of_[other], out);
      scatter = &g_.nodes()[s];
    }
    if (scatter) {
      emit_scatter(*scatter, out, b);
      return p_.blocks.push_back(std::move(b));
    }
    std::vector<Index> vars = elementwise_nest(b, n.shape);
    Value v;
    auto at_vars = [&](const Index& e) {
      return rewrite(map(e), [&](const Index& leaf) -> Index {
        return leaf->kind == IndexKind::Var ? vars[leaf->var] : nullptr;
      });
    };
    switch (n.kind) {
      case UopKind::reindex: {
        std::vector<Index> at;
        for (auto& e : n.index) at.push_back(at_vars(e));
        v = val::load(tensor_of_[n.operands[0]], at, n.fill);
        b.origin = "reindex";
        break;
      }
      case UopKind::iota:
        v = val::index(at_vars(n.index[0]));
        b.origin = "iota";
        break;
      case UopKind::cast:  // the store into the new dtype converts
        v = load_all(n.operands[0], vars);
        b.origin = std::string("cast to ") + dtype_name(n.dtype);
        break;
      case UopKind::unary:
        v = val::unary(n.uop, load_all(n.operands[0], vars));
        b.origin = op_name(n.uop);
        break;
      case UopKind::binary:
        v = val::binary(n.bop, load_all(n.operands[0], vars), load_all(n.operands[1], vars));
        b.origin = op_name(n.bop);
        break;
      case UopKind::ternary:
        v = val::ternary(load_all(n.operands[0], vars), load_all(n.operands[1], vars),
                         load_all(n.operands[2], vars));
        b.origin = "ternary";
        break;
      case UopKind::select: {
        std::vector<Index> at = vars;
        at[n.axis] = idx::data(tensor_of_[n.operands[1]], vars);
        v = val::load(tensor_of_[n.operands[0]], at, 0.0);
        b.origin = "select axis " + std::to_string(n.axis);
        break;
      }
      default:
        UOPS_ASSERT(false, "unexpected uop kind in lowering");
    }
    assign(b.loops.back(), out, vars, v);
    p_.blocks.push_back(std::move(b));
  }

  // Kept axes outside, reduced axes inside. The innermost kept loop (or a [0, 1) loop when every
  // axis is reduced) owns the carried scalar and stores it; the innermost loop accumulates.
  void emit_reduce(const UopNode& n, int out, Block& b) {
    const auto& in_shape = g_.nodes()[n.operands[0]].shape;
    int rank = int(in_shape.size());
    std::vector<bool> reduced(rank, false);
    for (int a : n.axes) reduced[a] = true;
    std::vector<Index> vars(rank);
    for (int a = 0; a < rank; ++a)
      if (!reduced[a]) vars[a] = new_loop(b, map(in_shape[a]));
    if (b.loops.empty()) new_loop(b, idx::constant(1));
    size_t owner = b.loops.size() - 1;
    for (int a : n.axes) vars[a] = new_loop(b, map(in_shape[a]));

    Carried c{p_.num_carried++, n.rop == ReduceOp::mean ? ReduceOp::sum : n.rop};
    b.loops[owner].carried.push_back(c);

    Index position = idx::constant(0);  // row-major position among the reduced axes
    Index count = idx::constant(1);
    for (int a : n.axes) {
      position = idx::add(idx::mul(position, map(in_shape[a])), vars[a]);
      count = idx::mul(count, map(in_shape[a]));
    }
    b.loops.back().stmts.push_back({.kind = StmtKind::reduce,
                                    .op = c.op,
                                    .carried = c.id,
                                    .value = load_all(n.operands[0], vars),
                                    .arg = is_arg_reduce(n.rop) ? position : nullptr});

    std::vector<Index> at = vars;
    for (int a : n.axes) at[a] = idx::constant(0);
    Value result = val::carried(c.id);
    if (n.rop == ReduceOp::mean) result = val::binary(BinaryOp::div, result, val::index(count));
    assign(b.loops[owner], out, at, result);
    b.origin = std::string("reduce ") + op_name(n.rop);
  }

  // One loop per axis of x, accumulating into the output, which starts at zero; a store outside
  // it does nothing, so elements landing outside are dropped.
  void emit_scatter(const UopNode& n, int out, Block& b) {
    int x = n.operands[0];
    std::vector<Index> vars = elementwise_nest(b, g_.nodes()[x].shape);
    std::vector<Index> at;
    if (n.operands.size() == 2) {
      at = vars;
      at[n.axis] = idx::data(tensor_of_[n.operands[1]], vars);
      b.origin = "scatter axis " + std::to_string(n.axis);
    } else {
      for (auto& e : n.index)
        at.push_back(rewrite(map(e), [&](const Index& leaf) -> Index {
          return leaf->kind == IndexKind::Var ? vars[leaf->var] : nullptr;
        }));
      b.origin = "scatter";
    }
    b.loops.back().stmts.push_back({.kind = StmtKind::accumulate,
                                    .tensor = out,
                                    .index = std::move(at),
                                    .op = ReduceOp::sum,
                                    .value = load_all(x, vars)});
  }

  void emit_copy(const UopNode& n, int from, int to) {
    Block b;
    std::vector<Index> vars = elementwise_nest(b, n.shape);
    assign(b.loops.back(), to, vars, val::load(from, vars));
    b.origin = "copy";
    p_.blocks.push_back(std::move(b));
  }

  const Graph& g_;
  Program p_;
  std::vector<int> tensor_of_;
  std::vector<int> absorbs_, absorbed_by_, host_;  // plan_sums
  std::map<std::pair<int, int>, std::pair<int, int>> parent_;
};

}  // namespace

Program lower(const Graph& graph, std::vector<int>* tensor_of_node) {
  return Lowering(graph).run(tensor_of_node);
}

}  // namespace uops
