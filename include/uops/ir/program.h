// The loop-block IR (docs/design.md §3.4). A program is a tensor table, parameters, run-time
// equality assertions and a list of blocks run in order. A block is a perfect loop nest; running
// loop k for each value of its range resets k's carried scalars, runs loop k+1 completely, then
// runs k's statements. Plain structs with value semantics: passes copy and rebuild them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/value_expr.h"
#include "uops/parser/index_expr.h"

namespace uops::ir {

enum class Role { input, output, temporary };
const char* role_name(Role r);

// In a program, Dim(T, a) names axis a of tensor T; only inputs' axes appear in shapes after
// lowering, so every shape is an expression over input sizes and parameters.
struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<Index> shape;
  Role role = Role::temporary;
};

enum class StmtKind { assign, accumulate, reduce };

struct Stmt {
  StmtKind kind = StmtKind::assign;
  int tensor = -1;              // assign, accumulate: the tensor written
  std::vector<Index> index;     // assign, accumulate: the element written (outside: no store)
  bool checked = true;          // assign, accumulate: false once proven in range
  ReduceOp op = ReduceOp::sum;  // accumulate: sum, max or min; reduce: the carried scalar's op
  int carried = -1;             // reduce: the carried scalar updated
  Value value;
  Index arg;  // reduce with argmax/argmin: the position of `value`
};

struct Carried {
  int id = -1;
  ReduceOp op = ReduceOp::sum;
  bool operator==(const Carried&) const = default;
};

// An index on one axis of a tensor: what a range test tests.
struct AxisIndex {
  int tensor = -1;
  int axis = 0;
  Index at;
};

// What the C backend's passes decided about a loop (plan_cpu in uops/passes/pipeline.h,
// docs/cpu-kernels.md); the C printer prints it and decides nothing. The default is a plain
// sequential loop, which every other pass and backend sees.
struct LoopPlan {
  // parallel_loops: how the block's parallel loop (its outermost exclusive loop) runs.
  enum class Threads {
    none,         // not the parallel loop
    serial,       // the parallel loop, on one thread (too little work, or outside worksharing)
    team,         // a team of threads (`omp parallel for`)
    team_if,      // ... when `work` reaches the threshold (a size known only at run time)
    worksharing,  // a share of the enclosing team's threads (`omp for`)
  };
  Threads threads = Threads::none;
  bool starts_team() const { return threads == Threads::team || threads == Threads::team_if; }
  int collapse = 1;             // the parallel loop and the next collapse - 1 run as one loop
  Index work;                   // team_if: the iterations the team runs in all
  bool reports_errors = false;  // team, team_if: the team or-s the threads' error bits together
  // parallel_loops, worksharing, on the outer loop: one thread of the team runs the block.
  bool single = false;
  // parallel_loops, on a parallel loop inside other loops, whose iterations stay with their
  // threads across those loops (ir::stays_with_threads): no thread waits for the others at its
  // end (`omp for nowait`). A team then starts once, in front of the block, and every thread
  // runs the loops outside this one, instead of a team per iteration of those loops (matmul's
  // k tiles: a sleeping worker's wake-up each).
  bool nowait = false;
  // parallel_loops, on a block's outer loop (threads team or team_if) whose iterations collide
  // only in sums into these tensors: each thread of the team sums into a zeroed copy of them,
  // added into the tensors after the loop (an OpenMP array reduction). The copies live on the
  // threads' stacks, so this runs only while the tensors hold at most kThreadCopyLimit elements
  // in all (parallel_loops.h), only while the block's other parallel loop, if any, would run on
  // one thread, and only where their own team runs (more than one thread, `work` reached);
  // otherwise the outer loop runs on one thread and the other loops as their plans say.
  std::vector<int> thread_copies;
  // simd_reductions: the carried scalars the innermost loop reduces in SIMD lanes.
  std::vector<Carried> simd;
  // simd_reductions, beside simd: a range of at most `narrow_upto` iterations, a test at run time,
  // runs in `narrow_lanes` lanes instead of as many as the compiler chooses (`simdlen`). Each
  // scalar's lanes are summed one by one after the loop, so a dot tile's 16 scalars over a short
  // range cost more there than in the loop (attention's q k^T over 64: 1.7x faster in 8 lanes).
  int narrow_lanes = 0;
  int64_t narrow_upto = 0;
  // The innermost loop runs in `lanes` lanes the printer writes out (codegen::KernelWriter::lanes):
  // each reduced scalar held per lane in an array the compiler keeps in registers, the lanes
  // combined after the loop. simd_reductions: 16 where the loop reduces an argmax or argmin, which
  // no `omp simd` clause reduces. row_local_runs: four vectors' worth where the loop reduces one
  // or two scalars in a block after its run's first, whose rows that block brought to L1.
  int lanes = 0;
  // The C backend's lane groups (backends/c/c_lane_groups.h), on a loop whose every iteration
  // reduces scalars over the loops inside it, reading rows along its variable (a pool's argmax
  // over its window, per channel): the loop runs in groups of `lane_group` iterations, one per
  // SIMD lane, each lane's scalars in arrays (codegen::KernelWriter::lane_group).
  int lane_group = 0;
  // beside lane_group: every argmax or argmin position its scalars hold lies in [0, 2^24) (the
  // loops inside have fixed extents): held in 32-bit lanes, and stored into an i32 tensor as it is,
  // its round trip through f32 exact (maxpool2d's gradient's argmax block: 0.250 -> 0.161 ms in
  // a C driver, docs/cpu-kernels.md "Narrow positions").
  bool narrow_positions = false;
  // row_local_runs, beside lanes: rows to prefetch, each a tensor and the index of its element
  // at this loop's variable: at each step of the loop in lanes, the step's elements of the rows
  // the run's first block reads from memory at the shared loop's next iteration, fetched into
  // the cache while this block re-reads the current ones from L1. The C backend's tile prefetches
  // (backends/c/c_tile_prefetch.h), on a register tile's loop (beside tile): elements fetched at
  // each step of the loop right outside the tile's loops, each a tensor and its index there.
  std::vector<std::pair<int, std::vector<Index>>> prefetch;
  // The C backend's tile panels (backends/c/c_tile_panels.h), on a register tile's loop (beside
  // tile) right outside its rows: one load (a tensor and its index) that reads a row of the
  // tile's columns at each step of this loop, at an index the tile's rows do not move (matmul's
  // b[k, j..j+15]). The printer copies the rows of the loop's range into a buffer of the block's,
  // again only where the index outside this loop or the range changes, and the tile reads them
  // there: consecutive in memory, where the tensor's rows lie a power of two apart and meet in a
  // few cache sets (matmul 512^3 on AVX2, one thread: 62 -> 88 GFLOP/s, a C driver), or start
  // off a cache line (AVX-512, matmul 1000^3: 10.7-10.9 -> 9.6-9.9 ms).
  std::vector<std::pair<int, std::vector<Index>>> tile_panel;
  // simd_math: the innermost loop, which reduces nothing and calls math functions, runs in SIMD
  // lanes where libmvec is linked, so that the calls go to its SIMD variants.
  bool simd_math = false;
  // row_local_runs, on a block's outer loop: the next `row_local` blocks share this loop.
  int row_local = 0;
  // register_tiles: the block's last `tile` loops index a register tile kept across this loop
  // (the elements they accumulate into, held in a local array).
  int tile = 0;
  // register_tiles, beside tile: the value every element of the tile holds when the tile starts,
  // when it is known: the program's initial zero (no earlier block writes the tile's tensor,
  // which is not an input) or the constant of the one earlier block that fills the whole tensor
  // (maxpool's -inf), with exclusive loops outside the tile. The tile then starts there instead
  // of loading its elements (a load that missed the cache: a sixth of depthwise conv2d's kernel).
  std::optional<double> tile_start;
  // register_tiles, beside tile_start: loops outside the tile (their variables) whose every
  // iteration revisits the tile's elements (matmul's reduction tiles, outside its 6 x 64 tiles).
  // The tile starts from tile_start in their first iteration and loads its elements in the others.
  std::vector<int> tile_start_first;
  // register_tiles, beside tile_start: the tile's tensor is written once, here (no later block
  // loads it), and each row the tile stores is whole cache lines: where the tensor holds at
  // least CpuTarget::tile_stream_bytes, a test at run time, the rows that start a line go around
  // the cache (non-temporal stores), so storing a large output does not first read it in; below
  // that the tile stores plainly and, before its reduction, fetches for writing the rows the next
  // tile stores (at the next iteration of the loop outside it). The block is in a row-local run,
  // each of whose threads fences those stores at the end of its share of the run (after each row
  // in a share of an enclosing team's loop).
  bool tile_stream = false;
  // register_tiles, beside tile: the tile loads its elements at each visit (no tile_start), so
  // the printer writes its load's and store's loops over rows unrolled ("#pragma GCC unroll"):
  // looped, GCC copied conv2d's data gradient's 8 x 32 tile through the stack and waited on each
  // row's load (the kernel 4% slower at one thread, 11% at two). Not where the tile starts from
  // a value: matmul's 6 x 64 tile ran about 8% slower at two threads with its copies unrolled.
  bool tile_unrolled = false;
  // register_tiles, on the innermost loop (no tile) of a row-local block, or of a block whose
  // team runs its outer loop alone, whose one statement assigns a row of such an output (a store
  // per element along its last axis): where the tensor holds at least kStreamBytes, the loop
  // computes each whole cache line of the row into a local array stored around the cache, the
  // elements before and after plainly (layernorm's y: the read of each line before it is written
  // was a third of the memory traffic); each thread fences them at the end of its share of the
  // run or block.
  bool stream = false;
  // epilogue_folding, beside tile: what the tile stores instead of its elements, the map of the
  // block after it over the tile's index (avgpool's y / (k * k)); its loads of the tile's tensor
  // at the tile's index read the tile.
  Value tile_store;
  // register_tiles: in front of this loop, the tile's checked loads are tested at the tile's
  // corners: these accesses (a tensor and an index over loop bounds) are in range, so the loops
  // run with the loads unchecked under the test and checked in its else.
  std::vector<std::pair<int, std::vector<Index>>> tile_corners;
  // register_tiles, beside tile_corners: in that test's else (a tile at the border), the checked
  // loads that read a row along the innermost tile loop (ir::reads_row; at most 3) read it through
  // a pointer or take their fill, by a test of their other axes once per row, when these (a
  // tensor and its last axis at the tile's corners) are in range: the row's own axis, which the
  // pointer does not test. Where they are not, every load is checked.
  std::vector<std::pair<int, Index>> tile_rows;
  // register_tiles, beside tile_rows: the loop in front of which each such row is bound, the
  // outermost from the test inward that, but for the innermost, moves none of its other axes
  // (conv2d's weight gradient: in front of the output channels' unrolled loop, whose rows all
  // read the same row of x, rather than a test in each of its copies).
  int tile_rows_at = 0;
  // register_tiles, beside tile_corners: in that test's else, the checked loads (a tensor and its
  // index) that are one value for every column of the tile, whose last axis is a loop's variable
  // spanning that axis (conv2d's input channels, between the test and the tile's rows), the loop
  // tile_steps_at. In front of it each row of the tile binds a pointer to its row, or to the
  // load's fill where the other axes are out of range, and a step of 1 or 0; the loop reads
  // row[r][i * step[r]], with no test inside it (a test per element ran conv2d's border tiles
  // 1.8x slower than its others).
  std::vector<std::pair<int, std::vector<Index>>> tile_steps;
  int tile_steps_at = 0;
  // register_tiles, beside tile_corners, where the tile's tensor is checked (a scatter's store,
  // which stores nothing out of range) and its statement is the block's only one: the axes of its
  // index that no loop from the test inward moves, and that cannot raise. That test's else runs
  // only where they are in range (conv2d's dx at the border: a row above the image, for every
  // output channel of the tile), instead of testing each element.
  std::vector<AxisIndex> tile_skip;
  // tile_copies, on a copy tile's row loop i, the block's last loop but one: the block copies a
  // transposed f32 tile, dst[..., i, j] = src[..., j, i] over i and the innermost loop j
  // (ir::copies_transposed). The printer writes both loops as one call that moves 4 x 4 blocks
  // through SSE registers where the tile has them, element by element elsewhere: the same
  // elements get the same values (a strided read per element was 9% of attention's kernel).
  bool tile_transpose = false;
  // tile_scatters, on the loop within a one-loop tile, and tile_registers, on a row tile's rows:
  // the compiler unrolls it fully (`#pragma GCC unroll`). GCC vectorizes such a loop and keeps
  // the tile in memory; unrolled, it stays in registers (conv2d's data gradient; batched matmul's
  // 12 x 32 tiles, 2.4x). A pool's tile runs faster vectorized (measured 1.7x slower avgpool2d,
  // 3x maxpool2d, unrolled): so the pass that makes the tile decides.
  bool unroll = false;
  // tile_registers, on the innermost loop of a register tile (over the columns a contraction's
  // tiles of 16 leave: reduction_tiling.h): the loop runs fewer than `tile_width` iterations, a
  // count known at run time, or (a whole tile, on targets with narrower vectors than AVX-512's)
  // exactly `tile_width`, and its statements are lane_wise (ir/analysis.h). The tile holds
  // rows of tile_width lanes, and the printer computes each row in vectors as wide as the
  // target's (GCC's vector extensions: a plain array whose rows run a count known at run time GCC
  // kept in memory, and so a vector wider than the target's registers); it loads and stores only
  // the loop's iterations, and the lanes past them compute zeros or what they read past the row
  // (within its tensor), which nothing stores.
  int tile_width = 0;
  // empty_range_tests: in front of this loop, the ranges of the block's loops `empty_tests`
  // (this one or loops inside it) are tested: one empty, the block skips this loop. On the
  // outer loop the test is the block's, in front of its team (an OpenMP region entered for
  // nothing costs about a microsecond, its if-clause false or not).
  std::vector<int> empty_tests;
  // fill_trimming, on a fill's outer loop: the block `fill_unless` blocks later keeps a tile
  // that stores every element this block fills, starting from its constant, whenever that block
  // runs on its team (not its thread copies) and each loop its tile starts in (tile_start_first)
  // runs: this block runs only where one of those does not hold (matmul's zeros, a team start
  // and a pass over the output in front of its tiles, where K may be 0 or the output small).
  int fill_unless = 0;
};

struct Loop {
  int var = -1;
  Index start, end;  // half-open range
  std::vector<Carried> carried;
  std::vector<Stmt> stmts;
  LoopPlan plan;
  bool is_pivot() const { return !carried.empty() || !stmts.empty(); }
};

struct Block {
  std::vector<Loop> loops;  // outermost first; never empty (rank 0 uses a loop over [0, 1))
  std::string origin;       // what emitted it, for the printer ("mul", "grad of reduce sum"...)
  // tile_registers: the blocks of one nonzero partition are the parts of one block, cut along
  // loops whose iterations write disjoint elements, or into alternatives of which one runs at
  // most: each element they write, one of them writes. Where one of them starts, a tensor holds
  // what it held in front of the first (ir::value_at_start).
  int partition = 0;
};

// A run-time assertion that two index expressions (over input sizes and parameters) are equal.
struct Equality {
  Index a, b;
};

struct Program {
  std::vector<TensorInfo> tensors;  // tensor id = position
  std::vector<std::string> params;
  std::vector<Equality> equalities;
  std::vector<Block> blocks;
  int num_vars = 0;        // loop variable ids are 0 .. num_vars-1
  int num_carried = 0;     // carried scalar ids are 0 .. num_carried-1
  int num_partitions = 0;  // Block::partition ids are 1 .. num_partitions

  std::vector<int> inputs() const;                 // tensor ids with Role::input, in table order
  std::vector<int> outputs() const;                // tensor ids with Role::output, in table order
  int find_tensor(const std::string& name) const;  // -1 when absent
  // The float type values are computed in: f64 if any tensor is f64, else f32.
  DType value_type() const;
};

// Every field the same, expressions compared by structure (equal() of index_expr.h and
// value_expr.h): the optimizer's fixed point.
bool equal(const Program& a, const Program& b);

// Human-readable name of a Dim(T, a) leaf: "x.1" is axis 1 of tensor x.
std::string dim_name(const Program& p, int tensor, int axis);
std::string index_text(const Program& p, const Index& e);

}  // namespace uops::ir

namespace uops {
// What lower, gradient and optimize give and the backends run; uops.h's users hold it whole.
using ir::Program;
}  // namespace uops
