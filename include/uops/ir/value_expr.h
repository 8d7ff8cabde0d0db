// Value expressions: what a statement computes per element. Immutable shared trees, like index
// expressions. Values are computed in the program's float type; i32 tensors load and store
// through it (indices are exact up to 2^24 in f32).
#pragma once

#include <memory>
#include <vector>

#include "uops/ir/ops.h"
#include "uops/parser/index_expr.h"

namespace uops::ir {

enum class ValueKind { Const, Load, Carried, IndexValue, Unary, Binary, Ternary };

struct ValueNode;
using Value = std::shared_ptr<const ValueNode>;

struct ValueNode {
  ValueKind kind = ValueKind::Const;
  double constant = 0.0;     // Const
  int tensor = -1;           // Load
  std::vector<Index> index;  // Load: one expression per axis
  double fill = 0.0;         // Load: the value read outside the tensor
  bool checked = true;       // Load: false once the bounds pass proved the access in range
  int carried = -1;          // Carried
  Index ivalue;              // IndexValue: an index expression used as a value
  UnaryOp uop = UnaryOp::neg;
  BinaryOp bop = BinaryOp::add;
  Value a, b, c;  // operands (Ternary: a ? b : c, true when a != 0)
};

namespace val {
Value constant(double v);
Value load(int tensor, std::vector<Index> index, double fill = 0.0, bool checked = true);
Value carried(int id);
Value index(Index e);
Value unary(UnaryOp op, Value a);
Value binary(BinaryOp op, Value a, Value b);
Value ternary(Value cond, Value a, Value b);
}  // namespace val

bool equal(const Value& a, const Value& b);

// Calls `f` on every Load node (pre-order).
void for_each_load(const Value& v, const std::function<void(const ValueNode&)>& f);
bool uses_carried(const Value& v, int id);
// Appends the loop variables of every index expression inside `v`.
void collect_vars(const Value& v, std::vector<int>& out);
// Some index expression inside `v` may raise an error when evaluated (see may_raise(Index)).
bool may_raise(const Value& v);
// Calls `node` on every node of `v`, parents first, and `index`, when given, on every index
// expression a node holds (load positions, index values).
void visit(const Value& v, const std::function<void(const ValueNode&)>& node,
           const std::function<void(const Index&)>& index = nullptr);

// Rebuilds `v` bottom-up; `node` may replace any node by returning non-null. Index expressions
// inside are rewritten by `index` when given.
Value rewrite(const Value& v, const std::function<Value(const Value&)>& node,
              const std::function<Index(const Index&)>& index = nullptr);

}  // namespace uops::ir
