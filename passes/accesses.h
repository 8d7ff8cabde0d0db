// Internal to passes/: every tensor access of a block or statement, in one list, so that the
// legality checks of fusion and substitution read the same facts.
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops::passes {

using namespace ir;

struct Access {
  int tensor = -1;
  std::vector<Index> index;
  bool write = false;
  int loop = 0;  // position of the loop whose statement makes the access
  int stmt = 0;  // position of that statement in the loop
};

// Loads and Data leaves (in values, indices and arg positions) are reads; assign and accumulate
// targets are writes. Loop bounds are included as reads of their Data leaves at loop `k`.
std::vector<Access> stmt_accesses(const Stmt& s, int loop, int stmt);
std::vector<Access> block_accesses(const Block& b);

// Tensors read and written by a block.
struct TensorSets {
  std::vector<bool> reads, writes;
};
TensorSets tensor_sets(const Block& b, int num_tensors);

// Calls `f` on every index expression of the program (shapes, assertions, bounds, accesses,
// positions) and every value, rebuilding them from what `f` returns.
void map_program(Program& p, const std::function<Index(const Index&)>& index,
                 const std::function<Value(const Value&)>& value);

}  // namespace uops::passes
