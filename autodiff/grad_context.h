// What every gradient rule works on: the program being assembled, each graph node's forward
// tensor and gradient tensor, and the helpers that build loop blocks over node shapes.
// Internal to autodiff/.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "uops/ir/graph.h"
#include "uops/ir/program.h"

namespace uops::autodiff {

using namespace ir;

class GradContext {
 public:
  // `p` is the lowered forward program and `value` its tensor of every node.
  GradContext(const Graph& g, Program& p, std::vector<int> value);

  const Graph& graph() const { return g_; }
  Program& program() { return p_; }
  const UopNode& node(int n) const { return g_.nodes()[n]; }

  // The shape of node `n`, with axes asserted equal written as one (as lowering writes them).
  std::vector<Index> shape(int n) const;
  // The forward value of node `n` at `at`.
  Value value(int n, std::vector<Index> at) const;
  int value_tensor(int n) const { return value_[n]; }

  // Gradient tensors. A node receives contributions only when it has one; `contributions` is
  // how many it will receive.
  bool has_grad(int n) const { return grad_[n] >= 0; }
  void set_grad(int n, int tensor, int contributions);
  Value grad(int n, std::vector<Index> at) const;
  // Adds `v` to the gradient of `n` at `at` in the innermost loop of `b`. A contribution that
  // writes every element once (`covers_all`) and is the only one assigns; any other accumulates
  // into a tensor zeroed by a block emitted now, before its first contribution.
  void contribute(Block& b, int n, std::vector<Index> at, Value v, bool covers_all);
  // Zeroes the gradient of `n` unless a contribution has written it.
  void ensure_written(int n);

  // An input gets its own axis sizes as its shape; `shape` then only gives its rank.
  int new_tensor(const std::string& name, DType dtype, std::vector<Index> shape, Role role);
  // A name no tensor of the program has yet, `base` when it is free.
  std::string unique_name(const std::string& base) const;

  // A loop per extent (one loop over [0, 1) for rank 0); returns the loop variables.
  std::vector<Index> nest(Block& b, const std::vector<Index>& shape);
  void emit(Block b, std::string origin);

  // A reduction of `body(vars)` over `axes` of `shape` into `out` (reduced axes at index 0),
  // laid out as lowering lays out a reduce uop; arg-reductions store the row-major position
  // among the reduced axes.
  void emit_reduce(const std::vector<Index>& shape, const std::vector<int>& axes, ReduceOp op,
                   const std::function<Value(const std::vector<Index>&)>& body, int out,
                   std::string origin);

 private:
  Index canon(const Index& e) const;

  const Graph& g_;
  Program& p_;
  std::vector<int> value_;
  std::vector<int> grad_;
  std::vector<int> contributions_;
  std::vector<bool> written_;
  std::map<std::pair<int, int>, std::pair<int, int>> equal_dim_;  // input axis -> representative
};

// The row-major position of `vars` among `axes` of `shape`, and the number of such positions.
Index reduced_position(const std::vector<Index>& shape, const std::vector<int>& axes,
                       const std::vector<Index>& vars);
Index reduced_count(const std::vector<Index>& shape, const std::vector<int>& axes);

}  // namespace uops::autodiff
