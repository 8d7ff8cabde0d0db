#include "grad_context.h"

#include "uops/error.h"

namespace uops::autodiff {

using namespace ir;

GradContext::GradContext(const Graph& g, Program& p, std::vector<int> value)
    : g_(g),
      p_(p),
      value_(std::move(value)),
      grad_(g.nodes().size(), -1),
      contributions_(g.nodes().size(), 0),
      written_(g.nodes().size(), false) {
  // Lowering writes every axis of a class of asserted-equal input axes as the earliest one;
  // the input tensors' own shapes are the exception, so gradient loops over them follow suit.
  auto find = [&](std::pair<int, int> k) {
    for (auto it = equal_dim_.find(k); it != equal_dim_.end() && it->second != k;
         it = equal_dim_.find(k))
      k = it->second;
    return k;
  };
  for (auto& eq : p_.equalities) {
    if (eq.a->kind != IndexKind::Dim || eq.b->kind != IndexKind::Dim) continue;
    auto ka = find({eq.a->tensor, eq.a->axis}), kb = find({eq.b->tensor, eq.b->axis});
    if (ka == kb) continue;
    if (kb < ka) std::swap(ka, kb);
    equal_dim_[kb] = ka;
  }
  for (auto& [k, rep] : equal_dim_) rep = find(rep);
}

Index GradContext::canon(const Index& e) const {
  return rewrite(e, [&](const Index& leaf) -> Index {
    if (leaf->kind != IndexKind::Dim) return nullptr;
    auto it = equal_dim_.find({leaf->tensor, leaf->axis});
    return it == equal_dim_.end() ? nullptr : idx::dim(it->second.first, it->second.second);
  });
}

std::vector<Index> GradContext::shape(int n) const {
  std::vector<Index> out;
  for (auto& e : p_.tensors[value_[n]].shape) out.push_back(canon(e));
  return out;
}

Value GradContext::value(int n, std::vector<Index> at) const {
  return val::load(value_[n], std::move(at));
}

void GradContext::set_grad(int n, int tensor, int contributions) {
  grad_[n] = tensor;
  contributions_[n] = contributions;
}

Value GradContext::grad(int n, std::vector<Index> at) const {
  UOPS_ASSERT(has_grad(n), "reading the gradient of a node that has none");
  return val::load(grad_[n], std::move(at));
}

void GradContext::contribute(Block& b, int n, std::vector<Index> at, Value v, bool covers_all) {
  UOPS_ASSERT(has_grad(n), "contributing to the gradient of a node that has none");
  bool assign = covers_all && contributions_[n] == 1 && !written_[n];
  if (!assign) ensure_written(n);
  written_[n] = true;
  b.loops.back().stmts.push_back(Stmt{assign ? StmtKind::assign : StmtKind::accumulate, grad_[n],
                                      std::move(at), true, ReduceOp::sum, -1, std::move(v),
                                      nullptr});
}

void GradContext::ensure_written(int n) {
  if (written_[n]) return;
  written_[n] = true;
  Block b;
  std::vector<Index> vars = nest(b, shape(n));
  b.loops.back().stmts.push_back(
      Stmt{StmtKind::assign, grad_[n], vars, true, ReduceOp::sum, -1, val::constant(0.0), nullptr});
  emit(std::move(b), "zero " + p_.tensors[grad_[n]].name);
}

int GradContext::new_tensor(const std::string& name, DType dtype, std::vector<Index> shape,
                            Role role) {
  int id = int(p_.tensors.size());
  if (role == Role::input)
    for (size_t a = 0; a < shape.size(); ++a) shape[a] = idx::dim(id, int(a));
  p_.tensors.push_back(TensorInfo{name, dtype, std::move(shape), role});
  return id;
}

std::string GradContext::unique_name(const std::string& base) const {
  std::string name = base;
  for (int k = 1; p_.find_tensor(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  return name;
}

std::vector<Index> GradContext::nest(Block& b, const std::vector<Index>& shape) {
  auto loop = [&](Index end) {
    Loop l;
    l.var = p_.num_vars++;
    l.start = idx::constant(0);
    l.end = std::move(end);
    b.loops.push_back(std::move(l));
    return idx::var(b.loops.back().var);
  };
  std::vector<Index> vars;
  for (auto& extent : shape) vars.push_back(loop(extent));
  if (shape.empty()) loop(idx::constant(1));
  return vars;
}

void GradContext::emit(Block b, std::string origin) {
  b.origin = std::move(origin);
  p_.blocks.push_back(std::move(b));
}

void GradContext::emit_reduce(const std::vector<Index>& shape, const std::vector<int>& axes,
                              ReduceOp op,
                              const std::function<Value(const std::vector<Index>&)>& body, int out,
                              std::string origin) {
  Block b;
  int rank = int(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int a : axes) reduced[a] = true;
  std::vector<Index> kept_shape;
  for (int a = 0; a < rank; ++a)
    if (!reduced[a]) kept_shape.push_back(shape[a]);
  std::vector<Index> kept = nest(b, kept_shape);
  size_t owner = b.loops.size() - 1;
  std::vector<Index> reduced_shape;
  for (int a : axes) reduced_shape.push_back(shape[a]);
  std::vector<Index> inner = axes.empty() ? std::vector<Index>{} : nest(b, reduced_shape);
  std::vector<Index> vars(rank);
  for (int a = 0, k = 0, r = 0; a < rank; ++a) vars[a] = reduced[a] ? inner[r++] : kept[k++];

  Carried c{p_.num_carried++, op == ReduceOp::mean ? ReduceOp::sum : op};
  b.loops[owner].carried.push_back(c);
  b.loops.back().stmts.push_back(
      Stmt{StmtKind::reduce,
           -1,
           {},
           true,
           c.op,
           c.id,
           body(vars),
           is_arg_reduce(op) ? reduced_position(shape, axes, vars) : nullptr});
  std::vector<Index> at = vars;
  for (int a : axes) at[a] = idx::constant(0);
  Value result = val::carried(c.id);
  if (op == ReduceOp::mean)
    result = val::binary(BinaryOp::div, result, val::index(reduced_count(shape, axes)));
  b.loops[owner].stmts.push_back(
      Stmt{StmtKind::assign, out, at, true, ReduceOp::sum, -1, result, nullptr});
  emit(std::move(b), std::move(origin));
}

Index reduced_position(const std::vector<Index>& shape, const std::vector<int>& axes,
                       const std::vector<Index>& vars) {
  Index position = idx::constant(0);
  for (int a : axes) position = idx::add(idx::mul(position, shape[a]), vars[a]);
  return position;
}

Index reduced_count(const std::vector<Index>& shape, const std::vector<int>& axes) {
  Index count = idx::constant(1);
  for (int a : axes) count = idx::mul(count, shape[a]);
  return count;
}

}  // namespace uops::autodiff
