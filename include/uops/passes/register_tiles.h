// register_tiles (a C backend pass, after row_local_runs): the register tiles tile_registers
// and tile_dots made, recorded in the loops' plans (ir::LoopPlan::tile, tile_corners) so the C
// printer keeps each tile's elements in a local array across the loops that accumulate into
// them: loaded before, stored after; the same operations in the same order.
//
// A block keeps a tile around its outermost loop k (the first inside a row-local run's shared
// loop) followed by trailing loops with constant ranges [0, n) that hold at most 1024 elements,
// when k runs more than once, the loops from k on hold no statements but the innermost, and its
// statements all accumulate into one tensor at one index, free of data, that holds
// each tile variable alone (plus terms of other variables) on some axis and uses none of the
// loops from k to the tile loops, and read neither that tensor nor data: then each tile
// iteration owns one element, the same in every iteration of those loops. No tile is kept when
// threads share one of the tile loops (parallel_loops, worksharing): each thread would store the
// whole local tile back, elements it did not compute included.
//
// A checked index (a window's scatter, scatter_tiling.h) is tested at the tile's corners in
// front of the tile: the tile is kept where they are in range, and its else runs the loops with
// each element tested and no tile; a tile whose corners cannot be tested there is not kept. The
// else first tests, once, the axes of the index that no loop inside it moves (and that cannot
// raise), where the statement is the block's only one (LoopPlan::tile_skip): out of range there,
// no element of it would store (conv2d's dx: a row or column beyond the border, for every output
// channel and every element of the tile; 3-4% of the kernel at one thread, 8% at two).
//
// Checked loads keep the compiler from holding a tile in registers: when every checked load's
// index is affine in the tile variables and cannot raise, the tile's corners bound it, so the
// loops run twice, unchecked under a test of the corners and checked in its else. The test sits
// in front of the outermost loop inside the tile from which the corners do not change; when that
// is right in front of the tile loops (a pooling window's loops all change the corners) and the
// loops from k have bounds free of loop variables, the corners span those loops too and the test
// sits in front of the tile, each branch with a tile of its own: a tile shared by both branches
// across the window's loops is one GCC keeps on the stack.
//
// A tile at the border then ran its whole window with every load checked, a test per element
// that also kept the tile on the stack (conv2d's weight gradient ran 8 of its 9 window positions
// so). Where the checked loads read rows along the innermost tile loop (ir::reads_row: pooling's
// and the weight gradient's x along the channels), the else tests, at the same corners, only
// those rows' own axis (LoopPlan::tile_rows); where it holds, a test of each row's other axes,
// once per row, reads it through a pointer or takes the load's fill, each way in a copy of the
// loops from the outermost that moves no row but along it (ir::row_binding_loop; the weight
// gradient's: the unrolled loop over output channels, 8-11% faster than a test in each of its
// copies) inward (at most 3 such loads, 8 copies): the same values, a tile in registers. Where it
// does not, the loads are checked per element.
//
// A tile whose elements hold a known constant when it starts (what the blocks before wrote,
// ir::value_at_start) starts from it instead of loading them (LoopPlan::tile_start) when the
// loops outside it are exclusive; where a loop outside it is not but revisits the same elements
// in every iteration (matmul's and attention's reduction tiles, outside their register tiles),
// in that loop's first iteration alone (LoopPlan::tile_start_first), and only from zero where
// the block sums into thread copies of the tensor, which start from zero. In the first tile of
// attention s128's products that skipped reading scores and output the fill had just written:
// 1-2% of the kernel at one thread, 2-5% at two (a C driver). A tile that starts from no known
// value loads its elements at each visit, and its copies run their rows unrolled
// (LoopPlan::tile_unrolled): rolled, GCC kept conv2d's data gradient's 8 x 32 tile on the stack
// at both ends of its reduction (a C driver: 18.7 -> 18.1 ms at one thread, 10.4 -> 9.4 at two;
// the bench at two threads: 12.4 -> 9.9 ms).
//
// A tile that starts from a known value in a row-local run, whose tensor (an f32 or f64 output)
// no later block loads and whose stored rows along the innermost tile loop are whole cache lines
// (LoopPlan::tile_stream), stores those rows around the cache where the tensor holds at least
// CpuTarget::tile_stream_bytes (kStreamBytes, or a quarter of the host's last-level cache where
// that is more): a store that misses reads its line in first, a third of depthwise conv2d's
// memory traffic. Below that the output likely stays in cache for whoever reads it next; at
// 8 x 56 x 56 x 128 the kernel alone took 3.1-3.6 ms with plain stores, 2.1-2.9 with streamed
// ones, and under 3 MB of output the two were the same (a C driver, one thread, 32 MB of L3).
// There each tile stores plainly and fetches the next tile's rows for writing first: with
// 300 MB of L3, 2.3-2.9 ms streamed, 1.5-1.7 so (docs/cpu-kernels.md, Register tiling).
//
// A row-local block with no tile whose one statement assigns a row of such an output (along
// its last axis), which neither it nor a later block loads and no later block accumulates into,
// streams its rows as well (LoopPlan::stream): above kStreamBytes the printer computes each
// cache line's elements into a local array and stores it around the cache (layernorm's y,
// log_softmax's, layernorm's dx: 5-17% of layernorm's kernel at one thread in a C driver). So
// does such a block outside a row-local run whose only parallel loop is its outer one, on a team
// of its own or on one thread (the printer fences the stores once per thread, at the end of its
// share), where the row calls no math function (LoopPlan::simd_math): a 4096 x 1024 add ran
// 1.3-1.8x faster, gelu's gradient, which its tanh bounds, 15-20% slower.
#pragma once

#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

constexpr int64_t kStreamBytes = int64_t(8) << 20;

Program plan_register_tiles(Program p);

}  // namespace uops
