// Which loops of a block may run their iterations concurrently. Both code generators use it:
// C puts `omp parallel for` on exclusive loops, CUDA maps loops to the grid and turns the
// accumulations that may collide into atomics.
//
// The region of loop k is everything loop k runs: its own statements and the loops inside it.
// Iterations of loop k are independent when no reduce statement in the region updates a carried
// scalar owned by an outer loop, and every tensor the region writes is accessed, by every read
// and write in the region, at exactly `v_k` on one common axis — then iteration i touches only
// elements whose axis holds i. A loop that runs once is trivially independent.
#pragma once

#include <set>
#include <vector>

#include "uops/ir/program.h"

namespace uops::codegen {

struct LoopParallelism {
  bool exclusive = false;  // iterations touch disjoint elements: plain parallel loop
  // Iterations collide only in accumulations of one op into tensors the region never reads or
  // assigns: parallel with atomic accumulation (sums then change rounding order, not meaning).
  bool with_atomics = false;
};

std::vector<LoopParallelism> loop_parallelism(const Program& p, const Block& b);

// Tensors whose accumulations may collide when loops [0, depth) all run concurrently.
std::set<int> colliding_tensors(const Program& p, const Block& b, int depth);

// Whether loop k's range is the constant [c, c + 1).
bool runs_once(const Loop& l);

}  // namespace uops::codegen
