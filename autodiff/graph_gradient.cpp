#include "uops/autodiff/graph_gradient.h"

#include <algorithm>
#include <map>

#include "prune.h"
#include "rules.h"
#include "uops/error.h"
#include "uops/ir/lower.h"

namespace uops {

using namespace ir;

namespace {

using autodiff::GradContext;

// Whether operand `slot` of `n` receives a gradient from it: exactly the edges the rules
// contribute along.
bool differentiable_edge(const Graph& g, const UopNode& n, int slot) {
  if (!is_float(n.dtype) || !is_float(g.nodes()[n.operands[slot]].dtype)) return false;
  switch (n.kind) {
    case UopKind::unary:
      return n.uop != UnaryOp::floor;
    case UopKind::binary:
      return !is_comparison(n.bop);
    case UopKind::ternary:
      return slot != 0;
    case UopKind::reduce:
      return !is_arg_reduce(n.rop);
    case UopKind::select:
      return slot == 0;
    default:
      return true;
  }
}

void rule(GradContext& c, int n) {
  switch (c.node(n).kind) {
    case UopKind::reindex:
      autodiff::reindex_grad(c, n);
      break;
    case UopKind::unary:
      autodiff::unary_grad(c, n);
      break;
    case UopKind::binary:
      autodiff::binary_grad(c, n);
      break;
    case UopKind::ternary:
      autodiff::ternary_grad(c, n);
      break;
    case UopKind::reduce:
      autodiff::reduce_grad(c, n);
      break;
    case UopKind::select:
      autodiff::select_grad(c, n);
      break;
    case UopKind::cast:
      autodiff::cast_grad(c, n);
      break;
    case UopKind::input:
    case UopKind::iota:
      break;
  }
}

std::vector<int> find_wrt(const Graph& g, const std::vector<std::string>& wrt) {
  std::vector<int> out;
  for (auto& name : wrt) {
    int found = -1;
    for (size_t i = 0; i < g.nodes().size(); ++i)
      if (g.nodes()[i].kind == UopKind::input && g.nodes()[i].name == name) found = int(i);
    if (found < 0) throw Error("gradient: '" + name + "' is not an input of the graph");
    if (!is_float(g.nodes()[found].dtype))
      throw Error("gradient: input '" + name + "' is " + dtype_name(g.nodes()[found].dtype) +
                  " and has no gradient");
    if (std::count(out.begin(), out.end(), found))
      throw Error("gradient: '" + name + "' is asked for twice");
    out.push_back(found);
  }
  return out;
}

int named_tensor(GradContext& c, const std::string& name, const std::string& what, DType dtype,
                 std::vector<Index> shape, Role role) {
  if (c.program().find_tensor(name) >= 0)
    throw Error("gradient: " + what + " would be named '" + name +
                "', which is already a tensor of the graph");
  return c.new_tensor(name, dtype, std::move(shape), role);
}

}  // namespace

Program gradient(const Graph& g, const std::vector<std::string>& wrt) {
  std::vector<int> wrt_nodes = find_wrt(g, wrt);
  const auto& nodes = g.nodes();
  int count = int(nodes.size());
  std::vector<int> value;
  Program p = lower(g, &value);
  // The forward outputs are recomputed as temporaries: the gradient's outputs are d<input>.
  for (auto& t : p.tensors)
    if (t.role == Role::output) t.role = Role::temporary;
  GradContext c(g, p, value);

  // A node gets a gradient when it depends on a requested input and an output depends on it,
  // both along differentiable edges.
  std::vector<bool> from_wrt(count, false), to_out(count, false);
  for (int n : wrt_nodes) from_wrt[n] = true;
  for (int n = 0; n < count; ++n)
    for (size_t k = 0; k < nodes[n].operands.size(); ++k)
      if (differentiable_edge(g, nodes[n], int(k)) && from_wrt[nodes[n].operands[k]])
        from_wrt[n] = true;
  for (auto& [name, n] : g.outputs()) to_out[n] = is_float(nodes[n].dtype);
  for (int n = count; n-- > 0;)
    if (to_out[n])
      for (size_t k = 0; k < nodes[n].operands.size(); ++k)
        if (differentiable_edge(g, nodes[n], int(k))) to_out[nodes[n].operands[k]] = true;
  auto needs = [&](int n) { return from_wrt[n] && to_out[n]; };

  // d<output> inputs, asserted to have the outputs' shapes.
  std::vector<int> d_inputs;
  std::map<int, std::vector<int>> seeds;
  for (auto& [name, n] : g.outputs()) {
    std::vector<Index> shape = c.shape(n);
    int t = named_tensor(c, "d" + name, "the gradient of output '" + name + "'", nodes[n].dtype,
                         shape, Role::input);
    for (size_t a = 0; a < shape.size(); ++a)
      p.equalities.push_back({idx::dim(t, int(a)), shape[a]});
    d_inputs.push_back(t);
    if (needs(n)) seeds[n].push_back(t);
  }

  // Gradient tensors: d<input> for the requested inputs; d<output> itself for a node whose only
  // contribution it is; a temporary otherwise.
  std::vector<int> contributions(count, 0);
  for (int n = 0; n < count; ++n) {
    contributions[n] += int(seeds[n].size());
    if (needs(n))
      for (size_t k = 0; k < nodes[n].operands.size(); ++k)
        if (differentiable_edge(g, nodes[n], int(k))) ++contributions[nodes[n].operands[k]];
  }
  for (int n : wrt_nodes)
    c.set_grad(n,
               named_tensor(c, "d" + nodes[n].name, "the gradient of '" + nodes[n].name + "'",
                            nodes[n].dtype, c.shape(n), Role::output),
               contributions[n]);
  std::vector<bool> aliased(count, false);
  for (int n = 0; n < count; ++n) {
    if (!needs(n) || c.has_grad(n)) continue;
    aliased[n] = contributions[n] == 1 && seeds[n].size() == 1;
    if (aliased[n])
      c.set_grad(n, seeds[n][0], 1);
    else
      c.set_grad(n,
                 c.new_tensor(c.unique_name("grad_" + p.tensors[value[n]].name), nodes[n].dtype,
                              c.shape(n), Role::temporary),
                 contributions[n]);
  }

  // Gradient blocks in reverse order: a node's gradient is complete once every later node has
  // contributed to it.
  for (int n = count; n-- > 0;) {
    if (!needs(n)) continue;
    if (!aliased[n])
      for (int d : seeds[n]) {
        Block b;
        std::vector<Index> vars = c.nest(b, c.shape(n));
        c.contribute(b, n, vars, val::load(d, vars), true);
        c.emit(std::move(b), "grad from " + p.tensors[d].name);
      }
    rule(c, n);
  }
  // A requested input no output depends on has a zero gradient.
  for (int n : wrt_nodes) c.ensure_written(n);
  return autodiff::prune(std::move(p), d_inputs);
}

}  // namespace uops
