// Index expressions: 64-bit integer arithmetic over loop variables, tensor axis sizes and named
// parameters (docs/design.md §3.1). Trees are immutable and shared; the constructors fold constants
// and the trivial identities so that structurally equal ranges compare equal.
//
// The same node type serves two stages:
//   parsed form  Var(N) is output axis N (`iN`), Dim(S, a) is axis a of shape source S (`dA0`);
//   program form Var(v) is loop variable v, Dim(T, a) is axis a of program tensor T.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace uops::ir {

enum class IndexKind { Const, Var, Dim, Param, Data, Neg, Add, Sub, Mul, Div, Mod, Min, Max };

struct IndexNode;
using Index = std::shared_ptr<const IndexNode>;

struct IndexNode {
  IndexKind kind = IndexKind::Const;
  int64_t constant = 0;     // Const: the value
  int var = -1;             // Var: the loop variable (parsed form: the output axis)
  int tensor = -1;          // Dim, Data: the tensor (parsed form: the shape source)
  int axis = 0;             // Dim: the axis
  std::string name;         // Param: the parameter's name
  Index a, b;               // operands of Neg (a only) and of the binary kinds
  std::vector<Index> args;  // Data: the element of an i32 tensor that is read as an index
};

namespace idx {
Index constant(int64_t v);
Index var(int v);
Index dim(int tensor, int axis);
Index param(const std::string& name);
Index data(int tensor, std::vector<Index> args);
Index neg(Index a);
Index add(Index a, Index b);
Index sub(Index a, Index b);
Index mul(Index a, Index b);
Index floordiv(Index a, Index b);
Index floormod(Index a, Index b);
Index min(Index a, Index b);
Index max(Index a, Index b);
Index binary(IndexKind kind, Index a, Index b);
}  // namespace idx

bool is_const(const Index& e, int64_t* value = nullptr);
// Nodes of the tree, a shared subtree counted at each use (as printing spells it); no recursion.
size_t node_count(const Index& e);
bool equal(const Index& a, const Index& b);
bool uses_var(const Index& e, int var);
bool uses_var(const std::vector<Index>& index, int var);  // some expression of `index` does
bool uses_any_var(const Index& e);
bool uses_data(const Index& e);
// Appends the loop variables of `e` not in `out` yet, in order of first use.
void collect_vars(const Index& e, std::vector<int>& out);
// `e` uses no loop variable and reads no data: one value for a whole run of the program.
bool is_fixed(const Index& e);
// `e` determines `var`: it is ±var plus fixed terms, so distinct values of var give distinct
// values of e.
bool pins_var(const Index& e, int var);
bool pins_var(const std::vector<Index>& index, int var);  // some expression of `index` does
// `e` is var plus terms free of it, through + and the left side of -: consecutive values of var
// give consecutive values of e. With `fixed`, those terms also use no loop variable and no data.
bool plus_var(const Index& e, int var, bool fixed = false);
// `e` is affine in `vars` jointly: made of them by +, - and multiplication by factors that use
// none of them, around terms that use none of them. Over a box of values of `vars`, such an
// expression takes its least and greatest values at corners of the box.
bool affine_in(const Index& e, const std::vector<int>& vars);
// The one meaning of "may raise" that every component uses: `e` holds a division or modulo
// whose divisor is not a positive constant (Data arguments included), so evaluating it can
// raise an error and where and whether it is evaluated must not change. Nothing else raises
// per element: a Data read outside its tensor reads 0, and an expression under a loop over an
// empty range is never evaluated, so it raises nothing (docs/design.md §3.4).
bool may_raise(const Index& e);
// The node itself is such a division or modulo (may_raise is true where some node of `e` is).
bool raises_here(const IndexNode& n);

// Rebuilds `e` bottom-up; `leaf` may replace a leaf (Var, Dim, Param, Data) by returning non-null.
Index rewrite(const Index& e, const std::function<Index(const Index&)>& leaf);
// The read-only walk: calls `f` on every node of `e`, parents first, Data arguments included.
void visit(const Index& e, const std::function<void(const IndexNode&)>& f);

// Floor division and modulo: the result of `%` has the sign of the divisor. Division by zero
// throws uops::Error.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// Evaluation with every leaf resolved by the callbacks (no loop variables allowed unless `var`
// is given). Used for shapes at bind time, never per element.
struct IndexEnv {
  std::function<int64_t(int)> var;
  std::function<int64_t(int, int)> dim;
  std::function<int64_t(const std::string&)> param;
};
int64_t evaluate(const Index& e, const IndexEnv& env);

// Text in the grammar of docs/design.md §3.1. `leaf` names Var/Dim/Data leaves; the default prints
// the parsed form (`i0`, `dA1`). Parentheses only where precedence needs them, so printing a parsed
// expression and parsing it again gives an equal tree.
std::string to_string(const Index& e,
                      const std::function<std::string(const IndexNode&)>& leaf = nullptr);

}  // namespace uops::ir
