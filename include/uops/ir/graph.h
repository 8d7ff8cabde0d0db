// The uop graph: how ops are described (docs/design.md §3.3). Each call checks its arguments and
// infers the result's shape at once, so construction errors (unknown `$name`, shape source out
// of range, rank mismatch, unequal shapes) surface where the graph is built, not when it runs.
//
//   Graph g;
//   Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
//   Node ab = g.binary(BinaryOp::mul,
//       g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
//       g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
//   g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
//
// Shapes are index expressions over the inputs' axis sizes and the declared parameters.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/ops.h"
#include "uops/parser/index_expr.h"

namespace uops {

struct Node {
  int id = -1;
};

enum class UopKind { input, reindex, unary, binary, ternary, reduce, select, iota, cast, scatter };
const char* uop_kind_name(UopKind k);

struct UopNode {
  UopKind kind = UopKind::input;
  DType dtype = DType::f32;
  // Over Dim(input node id, axis) and parameters.
  std::vector<ir::Index> shape;
  std::vector<int> operands;  // node ids: reindex x; unary x; binary x y; ternary c a b;
                              // reduce x; select x index; iota none; cast x; scatter x [index]
  std::string name;           // input: its name
  UnaryOp uop = UnaryOp::neg;
  BinaryOp bop = BinaryOp::add;
  ReduceOp rop = ReduceOp::sum;
  std::vector<int> axes;         // reduce: the reduced axes, ascending
  int axis = 0;                  // select: the gathered axis; scatter with an index: the axis
                                 // that index[i] replaces
  std::vector<ir::Index> index;  // reindex: Var(N) is output axis N; sizes resolved like shapes;
                                 // iota: its one value expression; scatter without an index:
                                 // where element i of x lands, Var(N) being axis N of x
  double fill = 0.0;             // reindex
  bool stop_gradient = false;    // no gradient or tangent flows through to the operands
};

class Graph {
 public:
  // Declares a named integer parameter that expressions may use as `$name`.
  void param(const std::string& name);
  Node input(const std::string& name, int rank, DType dtype);
  // out[i] = x[index(i)], `fill` outside x. `sources` give the tensors dA0, dB1... refer to;
  // empty means {x}.
  Node reindex(Node x, const std::vector<std::string>& shape, const std::vector<std::string>& index,
               const std::vector<Node>& sources = {}, double fill = 0.0);
  // out[i] = value(i): an index expression over the output axes `iN`, the axis sizes of
  // `sources` and the parameters, as a `dtype` tensor. Gives a size as a value (shape {"1"},
  // value "dA1"), positions ("i1"), and masks by comparing two of them. No gradient.
  Node iota(const std::vector<std::string>& shape, const std::string& value,
            const std::vector<Node>& sources = {}, DType dtype = DType::i32);
  // x converted to `dtype`: to i32 truncates toward zero (0 outside the i32 range, NaN
  // included); i32 to a float is exact up to 2^24 in f32. The gradient through an i32 is zero.
  // A cast to x's own dtype is x.
  Node cast(Node x, DType dtype);
  // exp, log, sqrt, rsqrt, recip, tanh, sigmoid, sin and cos need a float x.
  Node unary(UnaryOp op, Node x);
  Node binary(BinaryOp op, Node x, Node y);
  Node ternary(Node cond, Node a, Node b);
  // Reduced axes keep size 1 (squeeze drops them); argmax and argmin give i32 and need a float
  // x, as mean does.
  Node reduce(ReduceOp op, std::vector<int> axes, Node x);
  // out[i] = x[i with `axis` replaced by index[i]]; out-of-range indices read 0.
  Node select(int axis, Node x, Node index);
  // x's value, through which no gradient flows back (nor a tangent forward): JAX's
  // stop_gradient, PyTorch's detach. For a term whose derivative is zero in exact arithmetic,
  // such as softmax's shift by the row max, it saves computing that zero out of rounding.
  Node stop_gradient(Node x);
  // A tensor shaped like `like` whose every element is `value` (a reindex that reads only fill).
  Node fill(Node like, double value);
  // x without `axes`, each of which must have size 1: an error now when its size is a constant
  // other than 1, else asserted when the program runs. A reindex.
  Node squeeze(Node x, std::vector<int> axes);
  // Asserts that two shape expressions (over the axis sizes of `sources` and the parameters)
  // are equal: an error now when both are constants that differ, else checked when the program
  // is bound to its inputs, before anything runs. E.g. assert_equal("dA1", "dB1 * $groups",
  // {x, w}) for a grouped convolution.
  void assert_equal(const std::string& a, const std::string& b,
                    const std::vector<Node>& sources = {});
  // The transpose of reindex: a `shape` tensor, zero where nothing lands, that gets
  // out[index(i)] += x[i] for every element i of x (`index` over x's axes `iN`); an element
  // landing outside it is dropped. A reindex's gradient is one, and its gradient is a reindex.
  Node scatter(Node x, const std::vector<std::string>& shape, const std::vector<std::string>& index,
               const std::vector<Node>& sources = {});
  // The transpose of select: x's shape with axis `axis` of size `size`, getting
  // out[i with `axis` replaced by index[i]] += x[i]; an index out of range is dropped. `index`
  // (i32) has x's shape. A select's gradient is one, and its gradient is a select.
  Node scatter(int axis, Node x, Node index, const std::string& size,
               const std::vector<Node>& sources = {});
  // A graph needs at least one output to be lowered.
  void output(const std::string& name, Node x);

  // Resolved forms, for code that builds graphs out of graphs (autodiff): shapes and indices
  // already over Dim(input node id, axis), Var(N) and parameters, as nodes hold them; the
  // equalities they need must already be asserted.
  //
  // An input whose shape is `shape`: checked when the program runs, and what nodes built on it
  // see (a gradient d<y> is shaped like y).
  Node input_shaped(const std::string& name, std::vector<ir::Index> shape, DType dtype);
  Node reindex_expr(Node x, std::vector<ir::Index> shape, std::vector<ir::Index> index,
                    double fill);
  Node iota_expr(std::vector<ir::Index> shape, ir::Index value, DType dtype);
  Node scatter_expr(Node x, std::vector<ir::Index> shape, std::vector<ir::Index> index);
  Node scatter_expr(int axis, Node x, Node index, std::vector<ir::Index> shape);
  // Records that `a` and `b` must be equal: dropped when they are the same expression, an error
  // now when both are constants that differ, otherwise checked when the program runs.
  void assert_equal(const ir::Index& a, const ir::Index& b, const std::string& context);
  // This graph without its outputs: what a rewrite extends (node ids stay).
  Graph without_outputs() const;
  // Node `n` becomes an input named `name`, of its shape and dtype, whose operands are no longer
  // read: a value given instead of computed (a gradient given the forward values it reads).
  // Throws uops::Error when `n` is an input already or `name` is taken or invalid.
  void replace_with_input(Node n, const std::string& name);

  const std::vector<UopNode>& nodes() const { return nodes_; }
  const UopNode& node(Node n) const;
  int rank(Node n) const { return int(node(n).shape.size()); }
  const std::vector<std::pair<std::string, int>>& outputs() const { return outputs_; }
  const std::vector<std::string>& params() const { return params_; }
  // Run-time assertions, over Dim(input node id, axis) and parameters.
  const std::vector<std::pair<ir::Index, ir::Index>>& equalities() const { return equalities_; }
  // "[x.0, x.1 + 2]" in the names of the inputs.
  std::string shape_text(Node n) const;
  std::string index_text(const ir::Index& e) const;

 private:
  int add(UopNode n);
  // A valid tensor name that no input has yet.
  void check_input_name(const std::string& name) const;
  const UopNode& checked(Node n, const char* what) const;
  ir::Index resolve(const ir::Index& parsed, const std::vector<int>& sources,
                    const std::string& text, bool allow_vars) const;
  // Parses and resolves `texts` over `sources`: shape expressions when `rank` is -1, else index
  // expressions over a rank-`rank` output. Records the equalities they assert (`dA1[=dB0]`).
  std::vector<ir::Index> parse(const std::vector<std::string>& texts,
                               const std::vector<int>& sources, int rank, const std::string& what);
  std::vector<int> source_ids(const std::vector<Node>& sources, const char* what) const;
  // What select and scatter ask of their index tensor: i32, of x's rank, `axis` one of x's, and
  // the same size as x on every axis (but `axis` when `except_axis`).
  void check_index_tensor(const char* what, int axis, Node x, Node index, bool except_axis);

  std::vector<UopNode> nodes_;
  std::vector<std::pair<std::string, int>> outputs_;
  std::vector<std::string> params_;
  std::vector<std::pair<ir::Index, ir::Index>> equalities_;
};

}  // namespace uops
