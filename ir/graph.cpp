#include "uops/ir/graph.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "uops/error.h"
#include "uops/parser/parser.h"

namespace uops {

using namespace ir;

namespace {

constexpr int kMaxRank = 8;

bool valid_name(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// A result of a rank above kMaxRank is refused, as input() refuses such an input.
void check_rank(size_t rank, const char* what) {
  if (rank > size_t(kMaxRank))
    throw Error(std::string(what) + ": rank " + std::to_string(rank) + " is above " +
                std::to_string(kMaxRank));
}

}  // namespace

// Indexed by the enum, as ops.cpp's names are.
const char* uop_kind_name(UopKind k) {
  static constexpr const char* kNames[] = {"input",  "reindex", "unary", "binary", "ternary",
                                           "reduce", "select",  "iota",  "cast",   "scatter"};
  static_assert(std::size(kNames) == size_t(UopKind::scatter) + 1);
  return size_t(k) < std::size(kNames) ? kNames[size_t(k)] : "?";
}

const UopNode& Graph::node(Node n) const {
  return checked(n, "node");
}

const UopNode& Graph::checked(Node n, const char* what) const {
  if (n.id < 0 || n.id >= int(nodes_.size()))
    throw Error(std::string(what) + ": node " + std::to_string(n.id) + " is not in this graph");
  return nodes_[n.id];
}

int Graph::add(UopNode n) {
  nodes_.push_back(std::move(n));
  return int(nodes_.size()) - 1;
}

void Graph::param(const std::string& name) {
  if (!valid_name(name)) throw Error("param: '" + name + "' is not a valid parameter name");
  if (std::find(params_.begin(), params_.end(), name) != params_.end())
    throw Error("param: '$" + name + "' is declared twice");
  params_.push_back(name);
}

void Graph::check_input_name(const std::string& name) const {
  if (!valid_name(name)) throw Error("input: '" + name + "' is not a valid tensor name");
  for (auto& n : nodes_)
    if (n.kind == UopKind::input && n.name == name)
      throw Error("input: '" + name + "' is declared twice");
}

Node Graph::input(const std::string& name, int rank, DType dtype) {
  check_input_name(name);
  if (rank < 0 || rank > kMaxRank)
    throw Error("input '" + name + "': rank " + std::to_string(rank) + " is outside 0.." +
                std::to_string(kMaxRank));
  std::vector<Index> shape;
  for (int a = 0; a < rank; ++a) shape.push_back(idx::dim(int(nodes_.size()), a));
  return Node{
      add({.kind = UopKind::input, .dtype = dtype, .shape = std::move(shape), .name = name})};
}

std::string Graph::index_text(const Index& e) const {
  return to_string(e, [&](const IndexNode& n) -> std::string {
    if (n.kind == IndexKind::Var) return "i" + std::to_string(n.var);
    if (n.kind == IndexKind::Dim && n.tensor >= 0 && n.tensor < int64_t(nodes_.size()))
      return nodes_[n.tensor].name + "." + std::to_string(n.axis);
    return "#" + std::to_string(n.tensor);
  });
}

std::string Graph::shape_text(Node n) const {
  std::string out = "[";
  const auto& shape = node(n).shape;
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + index_text(shape[i]);
  return out + "]";
}

void Graph::assert_equal(const Index& a, const Index& b, const std::string& context) {
  if (equal(a, b)) return;
  int64_t x, y;
  if (is_const(a, &x) && is_const(b, &y))
    throw Error(context + ": sizes " + std::to_string(x) + " and " + std::to_string(y) + " differ");
  for (auto& [p, q] : equalities_)
    if ((equal(p, a) && equal(q, b)) || (equal(p, b) && equal(q, a))) return;
  equalities_.emplace_back(a, b);
}

Index Graph::resolve(const Index& parsed, const std::vector<int>& sources, const std::string& text,
                     bool allow_vars) const {
  return rewrite(parsed, [&](const Index& leaf) -> Index {
    if (leaf->kind == IndexKind::Dim) {
      const UopNode& src = nodes_[sources[leaf->tensor]];
      if (leaf->axis >= int(src.shape.size()))
        throw Error("\"" + text + "\": shape source " + char('A' + leaf->tensor) + " has rank " +
                    std::to_string(src.shape.size()) + ", so it has no axis " +
                    std::to_string(leaf->axis));
      return src.shape[leaf->axis];
    }
    UOPS_ASSERT(allow_vars || leaf->kind != IndexKind::Var, "loop variable in a shape");
    return nullptr;
  });
}

std::vector<int> Graph::source_ids(const std::vector<Node>& sources, const char* what) const {
  std::vector<int> src;
  for (Node s : sources) src.push_back(int(&checked(s, what) - nodes_.data()));
  return src;
}

std::vector<Index> Graph::parse(const std::vector<std::string>& texts, const std::vector<int>& src,
                                int rank, const std::string& what) {
  ParseOptions opts;
  opts.allow_loop_vars = rank >= 0;
  opts.rank = rank;
  opts.num_sources = int(src.size());
  opts.params = &params_;
  std::vector<Index> out;
  std::vector<std::pair<Index, Index>> asserted;
  for (auto& text : texts) {
    ParsedIndex p = parse_index(text, opts);
    out.push_back(resolve(p.expr, src, text, rank >= 0));
    for (auto& [a, b] : p.equalities)
      asserted.emplace_back(resolve(a, src, text, false), resolve(b, src, text, false));
  }
  for (auto& [a, b] : asserted)
    assert_equal(a, b, what + ": asserted equal " + index_text(a) + " and " + index_text(b));
  return out;
}

Node Graph::reindex(Node x, const std::vector<std::string>& shape,
                    const std::vector<std::string>& index, const std::vector<Node>& sources,
                    double fill) {
  const UopNode& in = checked(x, "reindex");
  std::vector<int> src =
      source_ids(sources.empty() ? std::vector<Node>{x} : sources, "reindex source");
  check_rank(shape.size(), "reindex");
  if (index.size() != in.shape.size())
    throw Error("reindex: " + std::to_string(index.size()) +
                " index expressions given for a tensor of rank " + std::to_string(in.shape.size()));
  std::vector<Index> s = parse(shape, src, -1, "reindex");
  return reindex_expr(x, std::move(s), parse(index, src, int(shape.size()), "reindex"), fill);
}

Node Graph::iota(const std::vector<std::string>& shape, const std::string& value,
                 const std::vector<Node>& sources, DType dtype) {
  std::vector<int> src = source_ids(sources, "iota source");
  check_rank(shape.size(), "iota");
  std::vector<Index> s = parse(shape, src, -1, "iota");
  return iota_expr(std::move(s), parse({value}, src, int(shape.size()), "iota")[0], dtype);
}

Node Graph::cast(Node x, DType dtype) {
  const UopNode& in = checked(x, "cast");
  if (in.dtype == dtype) return x;
  return Node{add({.kind = UopKind::cast, .dtype = dtype, .shape = in.shape, .operands = {x.id}})};
}

Node Graph::unary(UnaryOp op, Node x) {
  const UopNode& in = checked(x, "unary");
  if (in.dtype == DType::i32 && op != UnaryOp::neg && op != UnaryOp::abs && op != UnaryOp::floor)
    throw Error(std::string("unary ") + op_name(op) + ": needs a float input, not i32 (cast it)");
  return Node{add({.kind = UopKind::unary,
                   .dtype = in.dtype,
                   .shape = in.shape,
                   .operands = {x.id},
                   .uop = op})};
}

Node Graph::binary(BinaryOp op, Node x, Node y) {
  std::string what = std::string("binary ") + op_name(op);
  const UopNode& a = checked(x, what.c_str());
  const UopNode& b = checked(y, what.c_str());
  if (a.dtype != b.dtype)
    throw Error(what + ": dtypes " + dtype_name(a.dtype) + " and " + dtype_name(b.dtype) +
                " differ");
  if (a.shape.size() != b.shape.size())
    throw Error(what + ": shapes " + shape_text(x) + " and " + shape_text(y) +
                " differ in rank (no implicit broadcast; broadcast is a reindex)");
  for (size_t i = 0; i < a.shape.size(); ++i)
    assert_equal(a.shape[i], b.shape[i],
                 what + ": shapes " + shape_text(x) + " and " + shape_text(y) + " on axis " +
                     std::to_string(i));
  return Node{add({.kind = UopKind::binary,
                   .dtype = a.dtype,
                   .shape = a.shape,
                   .operands = {x.id, y.id},
                   .bop = op})};
}

Node Graph::ternary(Node cond, Node x, Node y) {
  const UopNode& c = checked(cond, "ternary");
  const UopNode& a = checked(x, "ternary");
  const UopNode& b = checked(y, "ternary");
  if (a.dtype != b.dtype)
    throw Error(std::string("ternary: dtypes ") + dtype_name(a.dtype) + " and " +
                dtype_name(b.dtype) + " differ");
  if (c.shape.size() != a.shape.size() || a.shape.size() != b.shape.size())
    throw Error("ternary: shapes " + shape_text(cond) + ", " + shape_text(x) + " and " +
                shape_text(y) + " differ in rank");
  for (size_t i = 0; i < a.shape.size(); ++i) {
    std::string ctx = "ternary: shapes " + shape_text(cond) + ", " + shape_text(x) + " and " +
                      shape_text(y) + " on axis " + std::to_string(i);
    assert_equal(c.shape[i], a.shape[i], ctx);
    assert_equal(a.shape[i], b.shape[i], ctx);
  }
  return Node{add({.kind = UopKind::ternary,
                   .dtype = a.dtype,
                   .shape = a.shape,
                   .operands = {cond.id, x.id, y.id}})};
}

Node Graph::reduce(ReduceOp op, std::vector<int> axes, Node x) {
  std::string what = std::string("reduce ") + op_name(op);
  const UopNode& in = checked(x, what.c_str());
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= int(in.shape.size()))
      throw Error(what + ": axis " + std::to_string(axes[i]) + " is out of range for rank " +
                  std::to_string(in.shape.size()));
    if (i && axes[i] == axes[i - 1])
      throw Error(what + ": axis " + std::to_string(axes[i]) + " is given twice");
  }
  if ((is_arg_reduce(op) || op == ReduceOp::mean) && in.dtype == DType::i32)
    throw Error(what + ": needs a float input, not i32 (cast it)");
  std::vector<Index> shape = in.shape;
  for (int a : axes) shape[a] = idx::constant(1);
  return Node{add({.kind = UopKind::reduce,
                   .dtype = is_arg_reduce(op) ? DType::i32 : in.dtype,
                   .shape = std::move(shape),
                   .operands = {x.id},
                   .rop = op,
                   .axes = std::move(axes)})};
}

void Graph::check_index_tensor(const char* what, int axis, Node x, Node index, bool except_axis) {
  const UopNode& in = checked(x, what);
  const UopNode& ix = checked(index, what);
  const std::string op = what;
  if (ix.dtype != DType::i32)
    throw Error(op + ": the index tensor must be i32, not " + dtype_name(ix.dtype));
  if (axis < 0 || axis >= int(in.shape.size()))
    throw Error(op + ": axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(in.shape.size()));
  if (ix.shape.size() != in.shape.size())
    throw Error(op + ": the index " + shape_text(index) + " and the tensor " + shape_text(x) +
                " differ in rank");
  for (size_t i = 0; i < in.shape.size(); ++i)
    if (!except_axis || int(i) != axis)
      assert_equal(in.shape[i], ix.shape[i],
                   op + ": the index " + shape_text(index) + " and the tensor " + shape_text(x) +
                       " on axis " + std::to_string(i));
}

Node Graph::select(int axis, Node x, Node index) {
  check_index_tensor("select", axis, x, index, true);
  return Node{add({.kind = UopKind::select,
                   .dtype = nodes_[x.id].dtype,
                   .shape = nodes_[index.id].shape,
                   .operands = {x.id, index.id},
                   .axis = axis})};
}

Node Graph::scatter(Node x, const std::vector<std::string>& shape,
                    const std::vector<std::string>& index, const std::vector<Node>& sources) {
  const UopNode& in = checked(x, "scatter");
  std::vector<int> src =
      source_ids(sources.empty() ? std::vector<Node>{x} : sources, "scatter source");
  check_rank(shape.size(), "scatter");
  if (index.size() != shape.size())
    throw Error("scatter: " + std::to_string(index.size()) +
                " index expressions given for a result of rank " + std::to_string(shape.size()));
  std::vector<Index> s = parse(shape, src, -1, "scatter");
  return scatter_expr(x, std::move(s), parse(index, src, int(in.shape.size()), "scatter"));
}

Node Graph::scatter(int axis, Node x, Node index, const std::string& size,
                    const std::vector<Node>& sources) {
  check_index_tensor("scatter", axis, x, index, false);
  std::vector<Index> shape = nodes_[x.id].shape;
  shape[axis] = parse({size}, source_ids(sources, "scatter source"), -1, "scatter")[0];
  return scatter_expr(axis, x, index, std::move(shape));
}

Node Graph::input_shaped(const std::string& name, std::vector<Index> shape, DType dtype) {
  Node n = input(name, int(shape.size()), dtype);
  for (size_t a = 0; a < shape.size(); ++a)
    assert_equal(nodes_[n.id].shape[a], shape[a],
                 "input '" + name + "' on axis " + std::to_string(a));
  nodes_[n.id].shape = std::move(shape);
  return n;
}

Node Graph::reindex_expr(Node x, std::vector<Index> shape, std::vector<Index> index, double fill) {
  const UopNode& in = checked(x, "reindex");
  UOPS_ASSERT(index.size() == in.shape.size(), "reindex: an index per axis of its operand");
  return Node{add({.kind = UopKind::reindex,
                   .dtype = in.dtype,
                   .shape = std::move(shape),
                   .operands = {x.id},
                   .index = std::move(index),
                   .fill = fill})};
}

Node Graph::iota_expr(std::vector<Index> shape, Index value, DType dtype) {
  return Node{add({.kind = UopKind::iota,
                   .dtype = dtype,
                   .shape = std::move(shape),
                   .index = {std::move(value)}})};
}

Node Graph::scatter_expr(Node x, std::vector<Index> shape, std::vector<Index> index) {
  const UopNode& in = checked(x, "scatter");
  UOPS_ASSERT(index.size() == shape.size(), "scatter: an index per axis of its result");
  return Node{add({.kind = UopKind::scatter,
                   .dtype = in.dtype,
                   .shape = std::move(shape),
                   .operands = {x.id},
                   .index = std::move(index)})};
}

Node Graph::scatter_expr(int axis, Node x, Node index, std::vector<Index> shape) {
  const UopNode& in = checked(x, "scatter");
  checked(index, "scatter");
  UOPS_ASSERT(shape.size() == in.shape.size(), "scatter: a result of its operand's rank");
  return Node{add({.kind = UopKind::scatter,
                   .dtype = in.dtype,
                   .shape = std::move(shape),
                   .operands = {x.id, index.id},
                   .axis = axis})};
}

Graph Graph::without_outputs() const {
  Graph g = *this;
  g.outputs_.clear();
  return g;
}

void Graph::replace_with_input(Node n, const std::string& name) {
  const UopNode& old = checked(n, "replace_with_input");
  if (old.kind == UopKind::input)
    throw Error("replace_with_input: node " + std::to_string(n.id) + " is the input '" + old.name +
                "' already");
  check_input_name(name);
  nodes_[n.id] = {.kind = UopKind::input, .dtype = old.dtype, .shape = old.shape, .name = name};
  // Its shape stays written over the other inputs, as input_shaped() writes one.
  for (size_t a = 0; a < nodes_[n.id].shape.size(); ++a)
    assert_equal(idx::dim(n.id, int(a)), nodes_[n.id].shape[a],
                 "input '" + name + "' on axis " + std::to_string(a));
}

Node Graph::fill(Node like, double value) {
  int rank = this->rank(like);
  std::vector<std::string> shape, index;
  for (int a = 0; a < rank; ++a) {
    shape.push_back("dA" + std::to_string(a));
    index.push_back("-1");
  }
  if (rank == 0) {
    // A rank-0 tensor has no out-of-range index: go through a one-element rank-1 tensor.
    return reindex(reindex(like, {"1"}, {}), {}, {"-1"}, {}, value);
  }
  return reindex(like, shape, index, {like}, value);
}

Node Graph::stop_gradient(Node x) {
  const UopNode& in = checked(x, "stop_gradient");
  std::vector<Index> index;
  for (size_t a = 0; a < in.shape.size(); ++a) index.push_back(idx::var(int(a)));
  Node y = reindex_expr(x, in.shape, std::move(index), 0.0);
  nodes_[y.id].stop_gradient = true;
  return y;
}

Node Graph::squeeze(Node x, std::vector<int> axes) {
  int rank = this->rank(x);
  std::sort(axes.begin(), axes.end());
  std::vector<std::string> shape, index;
  for (int a = 0, k = 0; a < rank; ++a) {
    bool dropped = std::binary_search(axes.begin(), axes.end(), a);
    if (!dropped) shape.push_back("dA" + std::to_string(a));
    index.push_back(dropped ? "0" : "i" + std::to_string(k++));
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= rank || (i && axes[i] == axes[i - 1]))
      throw Error("squeeze: axis " + std::to_string(axes[i]) +
                  " is out of range or given twice for rank " + std::to_string(rank));
    assert_equal(node(x).shape[axes[i]], idx::constant(1),
                 "squeeze: axis " + std::to_string(axes[i]) + " of " + shape_text(x));
  }
  return reindex(x, shape, index);
}

void Graph::assert_equal(const std::string& a, const std::string& b,
                         const std::vector<Node>& sources) {
  std::vector<Index> e =
      parse({a, b}, source_ids(sources, "assert_equal source"), -1, "assert_equal");
  assert_equal(e[0], e[1], "assert_equal: " + a + " and " + b);
}

void Graph::output(const std::string& name, Node x) {
  checked(x, "output");
  if (!valid_name(name)) throw Error("output: '" + name + "' is not a valid tensor name");
  for (auto& [n, id] : outputs_)
    if (n == name) throw Error("output: '" + name + "' is declared twice");
  for (auto& n : nodes_)
    if (n.kind == UopKind::input && n.name == name)
      throw Error("output: '" + name + "' is already the name of an input");
  outputs_.emplace_back(name, x.id);
}

}  // namespace uops
