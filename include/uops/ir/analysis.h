// Facts about a program that passes, backends and autodiff all read, each defined once so that
// no two components can disagree: the tensors a statement or block reads and writes, same-index,
// what may raise (may_raise in index_expr.h is the one meaning), and tensor renumbering.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "uops/ir/program.h"

namespace uops::ir {

struct Access {
  int tensor = -1;
  std::vector<Index> index;
  bool write = false;
  int loop = 0;  // position of the loop whose statement (or bound) makes the access
  int stmt = 0;  // position of that statement in the loop; -1 for a loop bound
};

// Loads and Data leaves (in values, indices and arg positions) are reads; assign and accumulate
// targets are writes (an accumulation's read of its target is not listed). Loop bounds are reads
// of their Data leaves at loop `k`, statement -1. Order: per loop, bounds then statements; per
// statement, value, arg, store index, then the store.
std::vector<Access> stmt_accesses(const Stmt& s, int loop, int stmt);
std::vector<Access> block_accesses(const Block& b);

// Tensors read and written by a block.
struct TensorSets {
  std::vector<bool> reads, writes;
};
TensorSets tensor_sets(const Block& b, int num_tensors);

// Calls `f` on every index expression of a block: bounds, store indices, arg positions and those
// inside values.
void visit(const Block& b, const std::function<void(const Index&)>& f);

// Appends the carried scalars `v` reads that are not in `out` yet (collect_vars' sibling).
void collect_carried(const Value& v, std::vector<int>& out);

bool same_index(const std::vector<Index>& a, const std::vector<Index>& b);
bool bounds_use_vars(const Loop& l);
// The most iterations of a loop that is one tile of a tiled loop, [s, min(e, s + c)): c, and e in
// *end where given; 0 for any other loop.
int64_t one_tile_extent(const Loop& l, Index* end = nullptr);
// Every tensor loop l's statements write is written and read in them at one index with an axis
// that is l's variable, and no index reads data: each iteration has its own elements.
bool stores_stay_apart(const Loop& l);
// Some index expression of the statement may raise (may_raise(Index)).
bool may_raise(const Stmt& s);

// `index` reads a row along `var`: its last axis is var plus terms free of it (through + and the
// left side of -), and no other axis uses var. Gives that axis with var = 0 in `start`. A register
// tile's checked load of such a row tests the other axes once per row (register_tiles.h).
bool reads_row(const std::vector<Index>& index, int var, Index* start = nullptr);
// `v` computes on vectors of f32 lanes along loop variable `var` (LoopPlan::tile_width): it is
// built of constants, loads of f32 tensors, +, - and * and negation, with p's values in f32, and
// every load that uses var is unchecked and reads a row along it (reads_row). The C printer reads
// such a row as one vector of lanes; any other load is one value for every lane (a checked one,
// conv2d's input under its padding, as it prints anywhere).
bool lane_wise(const Program& p, const Value& v, int var);
// Block b's last two loops i, j copy a transposed f32 tile, dst[..., i, j] = src[..., j, i]: j
// holds one statement, which assigns, unchecked, an unchecked plain load of another tensor; i
// holds none; i and j carry nothing; both tensors are f32, with exactly these variables on their
// last two axes and neither variable on another axis (LoopPlan::tile_transpose).
bool copies_transposed(const Program& p, const Block& b);
// The outermost loop of b from `from` inward in front of which each checked load of the
// innermost loop that reads a row along it can take that row once: no loop from there inward,
// but the innermost, moves the row (its other axes and where it starts).
size_t row_binding_loop(const Block& b, size_t from);

// Block b assigns every element of tensor t once: one loop per axis over [0, size), the
// innermost assigning t at exactly the loops' variables, and nothing else.
bool assigns_each_element(const Program& p, const Block& b, int t);
// ... and the value it assigns is one constant.
bool fills_whole(const Program& p, const Block& b, int t);
// How many calls the statements of loop l make, per iteration, of math functions that glibc's
// libmvec has a SIMD variant of (exp, log, sin, cos, tanh, pow; sigmoid prints as a call of exp).
int vector_math_calls(const Loop& l);

// The value every element of tensor t holds when block `bi` starts, when one is known: +0, an
// output's or temporary's initial value, while every earlier write assigns +0 (a gradient's
// "zero" blocks); or the constant c that every earlier write assigns, when one of those blocks
// assigns it to the whole tensor (maxpool's -inf, one loop per axis over its size, the element
// at the loops' variables). None for an input or any other write. The writes of the earlier
// blocks of bi's partition (Block::partition) do not count: none is to an element bi writes.
std::optional<double> value_at_start(const Program& p, size_t bi, int t);

// Each loop variable's loop, over every block of a program (which must outlive it).
class LoopRanges {
 public:
  explicit LoopRanges(const Program& p);
  const Loop* loop(int var) const;  // null for a variable no loop has
  // `e` is a loop variable running over [0, the size of axis a of tensor t): it needs no test of
  // that axis.
  bool spans_axis(int t, size_t a, const Index& e) const;

 private:
  const Program& p_;
  std::map<int, const Loop*> loops_;
};

// Calls `index` on every index expression of the program (shapes, assertions, bounds, accesses,
// positions) and `value` on every value, replacing each by what they return.
void map_program(Program& p, const std::function<Index(const Index&)>& index,
                 const std::function<Value(const Value&)>& value);

// `s` with `index` called on each of its index expressions (the element's, the argument, those
// in its value), each replaced by what it returns.
Stmt map_indices(Stmt s, const std::function<Index(const Index&)>& index);

// Keeps tensor t as tensor new_id[t] (-1 drops it; the kept ids must be 0..n-1) and rewrites
// every reference: Dim and Data leaves, loads and stores. Nothing may refer to a dropped tensor.
void renumber_tensors(Program& p, const std::vector<int>& new_id);

}  // namespace uops::ir
