// A catalogue of hand-written CUDA kernels for built-in ops, each wrong one with one classic bug
// and a correct kernel of the same family beside it (docs/cuda-kernels.md). Checked on the CPU
// emulation of CUDA, every wrong kernel must fail, with a report that says what is wrong: the
// detector that caught it ("out of bounds", "race", "__syncthreads", "uninitialised", "mask") or,
// for a bug that only gives wrong values, "disagrees" and no detector; every correct one must
// pass with no detector report. The sources are tests/oracle/cuda_kernels/*.cu; each wrong file
// says its bug at the top. Three bugs are in the launch rule, not in the source: the kernel is its
// family's correct one, launched as a kernel written for other sizes would be.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "uops/error.h"
#include "uops/oracle/cuda_kernel.h"

#ifndef UOPS_CUDA_KERNELS_DIR
#error "UOPS_CUDA_KERNELS_DIR must name tests/oracle/cuda_kernels"
#endif

namespace uops::oracle {

struct CudaCatalogueEntry {
  std::string name;  // "softmax_missing_sync"
  std::string op;    // the built-in op it implements
  std::string bug;   // what is wrong, in words; empty for a correct kernel
  std::string file;  // under tests/oracle/cuda_kernels
  std::string entry;
  std::vector<std::string> args;
  std::string grid, block, shared_bytes;
  // What the report of a wrong kernel must contain: a detector's word, or "disagrees" when the
  // values alone are wrong (then no detector may fire). Empty for a correct kernel.
  std::string expect;
  std::string correct;  // for a wrong kernel, the correct kernel of its family
  bool wrong() const { return !expect.empty(); }
};

inline const std::vector<CudaCatalogueEntry>& cuda_kernel_catalogue() {
  static const std::vector<CudaCatalogueEntry> catalogue = [] {
    std::vector<CudaCatalogueEntry> k;
    const std::vector<std::string> flat = {"x", "y", "x_n0 * x_n1"};
    const std::vector<std::string> rows = {"x", "y", "x_n0", "x_n1"};
    const std::vector<std::string> mm = {"a", "b", "c", "a_n0", "b_n1", "a_n1"};
    const std::vector<std::string> ln = {"x", "gamma", "beta", "y", "x_n0", "x_n1"};

    // relu: elementwise, on 1-D and 2-D grids.
    k.push_back({"relu", "relu", "", "relu.cu", "relu_kernel", flat, "(x_n0 * x_n1 + 255) / 256",
                 "256", "0", "", ""});
    k.push_back({"relu_tail_block_dropped", "relu",
                 "launch rule: grid = n / 256 rounded down (at least one block), so the last "
                 "n % 256 elements past the last whole block are never written",
                 "relu.cu", "relu_kernel", flat, "max(x_n0 * x_n1 / 256, 1)", "256", "0",
                 "disagrees", "relu"});
    k.push_back({"relu_grid_stride", "relu", "", "relu_grid_stride.cu", "relu_grid_stride", flat,
                 "min((x_n0 * x_n1 + 127) / 128, 8)", "128", "0", "", ""});
    k.push_back({"relu_grid_stride_off_by_one", "relu",
                 "the grid-stride loop runs while i <= n: reads x[n] and writes y[n]",
                 "relu_grid_stride_off_by_one.cu", "relu_grid_stride", flat,
                 "min((x_n0 * x_n1 + 127) / 128, 8)", "128", "0", "out of bounds",
                 "relu_grid_stride"});
    k.push_back({"relu_float4", "relu", "", "relu_float4.cu", "relu_float4", flat,
                 "(x_n0 * x_n1 + 511) / 512", "128", "0", "", ""});
    k.push_back({"relu_float4_no_tail", "relu",
                 "float4 loads and stores with no scalar tail: the last n % 4 elements are "
                 "never written",
                 "relu_float4_no_tail.cu", "relu_float4", flat, "(x_n0 * x_n1 + 511) / 512", "128",
                 "0", "disagrees", "relu_float4"});
    k.push_back({"relu2d", "relu", "", "relu2d.cu", "relu2d", rows,
                 "(x_n1 + 31) / 32, (x_n0 + 7) / 8", "32, 8", "0", "", ""});
    k.push_back({"relu2d_pitch_stride", "relu",
                 "the row stride is the grid's width (cols rounded up to 32), not cols: the last "
                 "rows run past the end of x and y",
                 "relu2d_pitch_stride.cu", "relu2d", rows, "(x_n1 + 31) / 32, (x_n0 + 7) / 8",
                 "32, 8", "0", "out of bounds", "relu2d"});

    // transpose: a 32 x 32 shared-memory tile moved by 32 x 8 threads.
    const std::string tgrid = "(x_n1 + 31) / 32, (x_n0 + 31) / 32";
    k.push_back({"transpose_tiled", "transpose", "", "transpose_tiled.cu", "transpose_tiled", rows,
                 tgrid, "32, 8", "0", "", ""});
    k.push_back({"transpose_grid_rounded_down", "transpose",
                 "launch rule: the 2-D grid is rows / 32 by cols / 32 rounded down (at least "
                 "one block each way): the partial tiles at the right and bottom edges of x are "
                 "never moved",
                 "transpose_tiled.cu", "transpose_tiled", rows,
                 "max(x_n1 / 32, 1), max(x_n0 / 32, 1)", "32, 8", "0", "disagrees",
                 "transpose_tiled"});
    k.push_back({"transpose_tile_wrong_index", "transpose",
                 "the write reads tile[ty + j][tx] instead of tile[tx][ty + j]: each tile lands "
                 "untransposed",
                 "transpose_tile_wrong_index.cu", "transpose_tiled", rows, tgrid, "32, 8", "0",
                 "disagrees", "transpose_tiled"});
    k.push_back({"transpose_early_return", "transpose",
                 "threads past the last column return before the __syncthreads the rest of "
                 "their block waits at",
                 "transpose_early_return.cu", "transpose_tiled", rows, tgrid, "32, 8", "0",
                 "__syncthreads", "transpose_tiled"});

    // softmax: a shared-memory tree, warp shuffles with the warps' partials in shared memory,
    // one warp per row.
    k.push_back({"softmax_block", "softmax", "", "softmax_block.cu", "softmax_block", rows, "x_n0",
                 "128", "128 * 4", "", ""});
    k.push_back({"softmax_block_96", "softmax", "", "softmax_block.cu", "softmax_block", rows,
                 "x_n0", "96", "96 * 4", "", ""});
    k.push_back({"softmax_pow2_block", "softmax",
                 "the shared-memory tree halves blockDim.x as if it were a power of two; "
                 "launched with 96 threads it drops buf[2] (the columns of threads 3k + 2)",
                 "softmax_pow2_block.cu", "softmax_block", rows, "x_n0", "96", "96 * 4",
                 "disagrees", "softmax_block_96"});
    k.push_back({"softmax_warp", "softmax", "", "softmax_warp.cu", "softmax_warp<128>", rows,
                 "x_n0", "128", "0", "", ""});
    k.push_back({"softmax_missing_sync", "softmax",
                 "no __syncthreads between the warps writing their partial max to shared "
                 "memory and warp 0 reading them",
                 "softmax_missing_sync.cu", "softmax_warp<128>", rows, "x_n0", "128", "0",
                 "uninitialised", "softmax_warp"});
    k.push_back({"softmax_shared_one_short", "softmax",
                 "the shared array of warp partials is one element short: the row's value, "
                 "stored after them, is past its end",
                 "softmax_shared_one_short.cu", "softmax_warp<128>", rows, "x_n0", "128", "0",
                 "out of bounds", "softmax_warp"});
    k.push_back({"softmax_warp_rows", "softmax", "", "softmax_warp_rows.cu", "softmax_warp_rows",
                 rows, "(x_n0 + 3) / 4", "32, 4", "0", "", ""});
    k.push_back({"softmax_shuffle_offset", "softmax",
                 "the warp sum's last shuffle has offset 2 instead of 1: odd and even lanes "
                 "never meet",
                 "softmax_shuffle_offset.cu", "softmax_warp_rows", rows, "(x_n0 + 3) / 4", "32, 4",
                 "0", "disagrees", "softmax_warp_rows"});

    // sum (along rows): warps and shared memory, atomics, one thread per row.
    k.push_back(
        {"sum_block", "sum", "", "sum_block.cu", "sum_rows", rows, "x_n0", "128", "0", "", ""});
    k.push_back({"sum_block_fitted", "sum", "", "sum_block.cu", "sum_rows", rows, "x_n0",
                 "min((x_n1 + 31) / 32 * 32, 1024)", "0", "", ""});
    k.push_back({"sum_partial_warp_full_mask", "sum",
                 "launch rule: one thread per column (block = cols), not a multiple of 32, "
                 "while the warp sums shuffle with the full mask 0xffffffff: the last warp's "
                 "mask names lanes that do not exist",
                 "sum_block.cu", "sum_rows", rows, "x_n0", "min(x_n1, 1024)", "0", "mask",
                 "sum_block_fitted"});
    k.push_back({"sum_uninitialised_warp_sums", "sum",
                 "warp 0 reads all 32 warp sums from shared memory, of which only as many as "
                 "there are warps were written",
                 "sum_uninitialised_warp_sums.cu", "sum_rows", rows, "x_n0", "128", "0",
                 "uninitialised", "sum_block"});
    k.push_back({"sum_shared_atomic", "sum", "", "sum_shared_atomic.cu", "sum_shared_atomic", rows,
                 "x_n0", "128", "0", "", ""});
    k.push_back({"sum_shared_accumulator_race", "sum",
                 "every thread adds to the shared accumulator with a plain +=, not atomicAdd",
                 "sum_shared_accumulator_race.cu", "sum_shared_atomic", rows, "x_n0", "128", "0",
                 "race", "sum_shared_atomic"});
    k.push_back({"sum_warp_atomic", "sum", "", "sum_warp_atomic.cu", "sum_warp_atomic", rows,
                 "x_n0", "128", "0", "", ""});
    k.push_back({"sum_global_rmw", "sum",
                 "each warp adds its sum to y[row] with a plain read-modify-write where it needs "
                 "atomicAdd",
                 "sum_global_rmw.cu", "sum_warp_atomic", rows, "x_n0", "128", "0", "race",
                 "sum_warp_atomic"});
    k.push_back({"sum_thread_per_row", "sum", "", "sum_thread_per_row.cu", "sum_thread_per_row",
                 rows, "(x_n0 + 127) / 128", "128", "0", "", ""});
    // Past the end of x when rows > cols, wrong values when rows < cols; the smallest failing
    // case (x=2,1, to which every failure shrinks) reads past the end.
    k.push_back({"sum_stride_rows_for_cols", "sum",
                 "the row stride is rows, not cols: x[row * rows + j]",
                 "sum_stride_rows_for_cols.cu", "sum_thread_per_row", rows, "(x_n0 + 127) / 128",
                 "128", "0", "out of bounds", "sum_thread_per_row"});

    // layernorm: two block sums through one shared buffer.
    k.push_back({"layernorm_rows", "layernorm", "", "layernorm_rows.cu", "layernorm_rows", ln,
                 "x_n0", "128", "0", "", ""});
    k.push_back({"layernorm_reused_buffer", "layernorm",
                 "no __syncthreads between reading the mean from the shared buffer and the "
                 "variance's sum writing its partials to it",
                 "layernorm_reused_buffer.cu", "layernorm_rows", ln, "x_n0", "128", "0", "race",
                 "layernorm_rows"});

    // matmul: 16 x 16 shared-memory tiles.
    const std::string mgrid = "(b_n1 + 15) / 16, (a_n0 + 15) / 16";
    k.push_back({"matmul_tiled", "matmul", "", "matmul_tiled.cu", "matmul_tiled<16>", mm, mgrid,
                 "16, 16", "0", "", ""});
    k.push_back({"matmul_missing_second_sync", "matmul",
                 "no __syncthreads after the accumulation: with K > 16 the next tiles overwrite "
                 "the ones other threads still read",
                 "matmul_missing_second_sync.cu", "matmul_tiled<16>", mm, mgrid, "16, 16", "0",
                 "race", "matmul_tiled"});
    k.push_back({"matmul_tile_unguarded", "matmul",
                 "no bounds checks on the tile loads and the store: assumes M, N and K are "
                 "multiples of 16",
                 "matmul_tile_unguarded.cu", "matmul_tiled<16>", mm, mgrid, "16, 16", "0",
                 "out of bounds", "matmul_tiled"});
    return k;
  }();
  return catalogue;
}

// The entry as an implementation's description, its source read from $UOPS_CUDA_KERNELS_DIR (for a
// copy of the tests run elsewhere, a GPU machine) or else from the source tree.
inline CudaKernel catalogue_kernel(const CudaCatalogueEntry& e) {
  const char* env = std::getenv("UOPS_CUDA_KERNELS_DIR");
  std::string path = std::string(env && *env ? env : UOPS_CUDA_KERNELS_DIR) + "/" + e.file;
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  CudaKernel k;
  k.source = text.str();
  k.file = e.file;
  k.entry = e.entry;
  k.args = e.args;
  k.grid = e.grid;
  k.block = e.block;
  k.shared_bytes = e.shared_bytes;
  return k;
}

}  // namespace uops::oracle
