// Which loops of a block may run their iterations concurrently. The C backend's passes
// (parallel_loops, row_local_runs) put threads on exclusive loops; the CUDA launch plan maps loops
// to the grid and turns the accumulations that may collide into atomics.
//
// The region of loop k is everything loop k runs: its own statements and the loops inside it.
// Iterations of loop k are independent when no reduce statement in the region updates a carried
// scalar owned by an outer loop, and every tensor the region writes is accessed, by every read
// and write in the region, at exactly `v_k` on one common axis — then iteration i touches only
// elements whose axis holds i. A loop that runs once is trivially independent.
#pragma once

#include <set>
#include <vector>

#include "uops/ir/analysis.h"
#include "uops/ir/program.h"

namespace uops::ir {

struct LoopParallelism {
  bool exclusive = false;  // iterations touch disjoint elements: plain parallel loop
  // Iterations collide only in accumulations of one op into tensors the region never reads or
  // assigns: parallel with atomic accumulation (sums then change rounding order, not meaning).
  bool with_atomics = false;
};

std::vector<LoopParallelism> loop_parallelism(const Program& p, const Block& b);

// The exclusive loops' rule without register tiles, for the tilings that make them: every access
// (of `accesses`) to a tensor that `written` marks holds exactly `var` on one common axis.
bool exclusive(const std::vector<Access>& accesses, const std::vector<bool>& written, int var);

// Whether blocks (in program order) can run their outer loops as one, each block's inner loops in
// turn per iteration (row-local: softmax reads a row from memory once and re-reads it from L1).
// They can when they have inner loops and the same outer range, free of data, and every tensor
// any of them writes is accessed, by all of them, at exactly their outer variable on one common
// axis: then iteration i of each block touches only elements whose axis holds i, the iterations
// are independent (the loop may also run in parallel), and for each i the blocks keep their order.
bool share_outer_loop(const std::vector<const Block*>& blocks);

// Whether parallel loop k of b may run, on a team started in front of the block, as one
// worksharing loop per iteration of the loops outside it with no thread waiting at its end: those
// loops hold no statements or carried scalars (every thread runs them), loop k's bounds use no
// variable or data (it runs the same iterations in each), and different values of its variable
// touch different written elements whatever the outer loops' iterations. A static schedule gives
// a thread the same iterations of loop k each time, so no thread touches another's elements.
bool stays_with_threads(const Block& b, size_t k);

// Whether loop m of b may join the loops in front of it in a parallel loop's collapse
// (LoopPlan::collapse), given b's loop_parallelism: it is exclusive and not the innermost (which
// stays whole, to vectorize), and OpenMP sees a perfect nest: the loop before holds no
// statements or carried scalars, and nothing is printed in front of loop m (its bounds use no
// loop variable and cannot raise, it is not unrolled, and no test or tile sits there).
bool joins_collapse(const Block& b, const std::vector<LoopParallelism>& par, size_t m);

// Tensors whose accumulations may collide when loops [0, depth) all run concurrently.
std::set<int> colliding_tensors(const Program& p, const Block& b, int depth);

// Whether loop k's range is the constant [c, c + 1).
bool runs_once(const Loop& l);

// The same block with its exclusive loops moved outermost, where that keeps every result: the
// block owns no carried scalar, its statements all sit in the innermost loop, and no loop
// bound depends on another loop or on data. Then exclusivity is a property of the statements
// alone, each value of the exclusive loops' variables names a class of iterations that touch
// disjoint written elements, and inside a class the other loops keep their order. A GPU grid
// then covers those loops without atomics (a CPU-friendly order such as matmul's i, k, j would
// put k on the grid). Any other block comes back unchanged.
Block exclusive_loops_first(const Program& p, const Block& b);

}  // namespace uops::ir
