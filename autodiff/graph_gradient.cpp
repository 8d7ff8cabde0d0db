#include "uops/autodiff/graph_gradient.h"

#include <algorithm>
#include <numeric>

#include "prune.h"
#include "rules.h"
#include "uops/error.h"
#include "uops/ir/analysis.h"
#include "uops/ir/lower.h"

namespace uops {

using namespace ir;

namespace {

using autodiff::GradContext;

// Whether a reindex reads only its fill (a constant, `Graph::fill`): an index that is a negative
// constant is outside on every element.
bool reads_only_fill(const UopNode& n) {
  for (auto& e : n.index) {
    int64_t v;
    if (is_const(e, &v) && v < 0) return true;
  }
  return false;
}

// Whether operand `slot` of `n` receives a gradient from it: exactly the edges the rules
// contribute along.
bool differentiable_edge(const Graph& g, const UopNode& n, int slot) {
  if (n.stop_gradient || !is_float(n.dtype) || !is_float(g.nodes()[n.operands[slot]].dtype))
    return false;
  switch (n.kind) {
    case UopKind::reindex:
      return !reads_only_fill(n);
    case UopKind::unary:
      return n.uop != UnaryOp::floor;
    case UopKind::binary:
      return !is_comparison(n.bop);
    case UopKind::ternary:
      return slot != 0;
    case UopKind::reduce:
      return !is_arg_reduce(n.rop);
    case UopKind::select:
    case UopKind::scatter:
      return slot == 0;
    default:
      return true;
  }
}

void rule(GradContext& c, int n, Node dn) {
  switch (c.node(n).kind) {
    case UopKind::reindex:
      return autodiff::reindex_grad(c, n, dn);
    case UopKind::scatter:
      return autodiff::scatter_grad(c, n, dn);
    case UopKind::unary:
      return autodiff::unary_grad(c, n, dn);
    case UopKind::binary:
      return autodiff::binary_grad(c, n, dn);
    case UopKind::ternary:
      return autodiff::ternary_grad(c, n, dn);
    case UopKind::reduce:
      return autodiff::reduce_grad(c, n, dn);
    case UopKind::select:
      return autodiff::select_grad(c, n, dn);
    case UopKind::cast:
      return autodiff::cast_grad(c, n, dn);
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

// A gradient's name must not be a tensor name of the graph already.
void check_free(const Graph& g, const std::string& name, const std::string& what) {
  bool taken = false;
  for (auto& n : g.nodes()) taken |= n.kind == UopKind::input && n.name == name;
  for (auto& [out, id] : g.outputs()) taken |= out == name;
  if (taken)
    throw Error("gradient: " + what + " would be named '" + name +
                "', which is already a tensor of the graph");
}

std::string saved_name(int id) {
  return "saved" + std::to_string(id);
}

// Every id in `saved` a distinct node of `g` that is no input, and free to be named saved<id>.
void check_saved(const Graph& g, const std::vector<int>& saved) {
  for (size_t k = 0; k < saved.size(); ++k) {
    int id = saved[k];
    if (id < 0 || id >= int(g.nodes().size()))
      throw Error("gradient: saved node " + std::to_string(id) + " is not in the graph");
    if (g.nodes()[id].kind == UopKind::input)
      throw Error("gradient: saved node " + std::to_string(id) + " is the input '" +
                  g.nodes()[id].name + "', given already");
    if (std::count(saved.begin(), saved.begin() + k, id))
      throw Error("gradient: node " + std::to_string(id) + " is saved twice");
    check_free(g, saved_name(id), "saved node " + std::to_string(id));
  }
}

// The gradient graph with every forward node recomputed: `g`'s nodes at their own ids, then the
// gradient nodes.
Graph full_gradient_graph(const Graph& g, const std::vector<std::string>& wrt,
                          const std::string& prefix) {
  std::vector<int> wrt_nodes = find_wrt(g, wrt);
  const auto& nodes = g.nodes();
  int count = int(nodes.size());

  // A node gets a gradient when it depends on a requested input and an output depends on it,
  // both along differentiable edges.
  std::vector<bool> from_wrt(count, false), to_out(count, false), needs(count, false);
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
  for (int n = 0; n < count; ++n) needs[n] = from_wrt[n] && to_out[n];

  Graph out = g.without_outputs();
  GradContext c(g, out, needs);
  // d<output> for every output, shaped like it; the seed of that output's gradient.
  std::vector<std::pair<int, Node>> seeds;
  for (auto& [name, n] : g.outputs()) {
    check_free(g, prefix + name, "the gradient of output '" + name + "'");
    seeds.emplace_back(n, out.input_shaped(prefix + name, nodes[n].shape, nodes[n].dtype));
  }
  for (int n : wrt_nodes)
    check_free(g, prefix + nodes[n].name, "the gradient of '" + nodes[n].name + "'");

  // Reverse order: a node's gradient is complete once every later node has contributed to it.
  for (int n = count; n-- > 0;) {
    if (!needs[n]) continue;
    for (auto& [m, seed] : seeds)
      if (m == n) c.contribute(n, seed);
    rule(c, n, c.grad(n));
  }
  // A requested input no output depends on has a zero gradient, which reads nothing (an iota).
  for (int n : wrt_nodes) {
    Node d = needs[n] ? c.grad(n) : Node{-1};
    if (d.id < 0) d = out.iota_expr(nodes[n].shape, idx::constant(0), nodes[n].dtype);
    out.output(prefix + nodes[n].name, d);
  }
  return out;
}

}  // namespace

Graph gradient_graph(const Graph& g, const std::vector<std::string>& wrt, const std::string& prefix,
                     const std::vector<int>& saved) {
  check_saved(g, saved);
  Graph out = full_gradient_graph(g, wrt, prefix);
  for (int id : saved) out.replace_with_input(Node{id}, saved_name(id));
  return out;
}

std::vector<int> gradient_residuals(const Graph& g, const std::vector<std::string>& wrt) {
  Graph full = full_gradient_graph(g, wrt, "d");
  const auto& nodes = full.nodes();
  int count = int(g.nodes().size());
  // The forward values gradient nodes read (a reindex of only fill reads none)...
  std::vector<bool> read(count, false);
  for (size_t n = count; n < nodes.size(); ++n)
    if (nodes[n].kind != UopKind::reindex || !reads_only_fill(nodes[n]))
      for (int m : nodes[n].operands)
        if (m < count) read[m] = true;
  // ...with a view read as what it views: operands come first, so one descending sweep follows
  // chains of reindexes.
  for (int m = count; m-- > 0;)
    if (read[m] && nodes[m].kind == UopKind::reindex) {
      read[m] = false;
      if (!reads_only_fill(nodes[m])) read[nodes[m].operands[0]] = true;
    }
  std::vector<int> out;
  for (int m = 0; m < count; ++m)
    if (read[m] && nodes[m].kind != UopKind::input) out.push_back(m);
  return out;
}

Graph with_saved_outputs(const Graph& g, const std::vector<int>& saved) {
  check_saved(g, saved);
  Graph out = g;
  for (int id : saved) out.output(saved_name(id), Node{id});
  return out;
}

Program gradient(const Graph& g, const std::vector<std::string>& wrt, const std::string& prefix,
                 const std::vector<int>& saved) {
  Program p = lower(gradient_graph(g, wrt, prefix, saved));
  std::vector<int> keep;
  for (auto& [name, n] : g.outputs()) keep.push_back(p.find_tensor(prefix + name));
  p = autodiff::prune(std::move(p), keep);
  // Outputs in the order of `wrt`, whatever order lowering made them in.
  std::vector<int> new_id(p.tensors.size());
  std::iota(new_id.begin(), new_id.end(), 0);
  std::vector<int> outputs = p.outputs();
  for (size_t k = 0; k < wrt.size(); ++k) new_id[p.find_tensor(prefix + wrt[k])] = outputs[k];
  renumber_tensors(p, new_id);
  return p;
}

}  // namespace uops
