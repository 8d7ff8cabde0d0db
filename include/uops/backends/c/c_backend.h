// The C backend (docs/design.md §3.7): one self-contained C99 translation unit per program,
// compiled by the system compiler into a shared object and loaded with dlopen.
//
// The generated entry point is
//
//   int uops_kernel(void *const *tensors, const int64_t *sizes, const int64_t *params,
//                   int threads);
//
//   tensors  one pointer per program tensor, in tensor-table order (inputs, outputs and
//            temporaries alike; outputs and temporaries may hold anything: the kernel writes
//            the zeros the program starts from itself, backends/codegen/zero_fill.h)
//   sizes    every tensor's axis sizes, concatenated in tensor-table order
//   params   the parameters' values, in the program's parameter order
//   threads  OpenMP threads for each parallel loop (ignored when built without OpenMP)
//   returns  0, or a set of error bits: 1 division by zero, 2 modulo by zero, 4 overflow
//
// Sizes and parameters are run-time arguments, so one compiled kernel serves every shape.
// Artifacts go through the kernel cache (backends/kernel_cache.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uops/backends/executable.h"

namespace uops {

struct CCompileOptions {
  std::string compiler;  // empty: $CC, else "cc"
  bool openmp = true;    // -fopenmp when the compiler accepts it
  // Threads per parallel loop; 0: one per core. On a machine shared with other work, run with
  // OMP_WAIT_POLICY=passive: libgomp's default spinning after each parallel loop takes the core
  // the caller's next serial work needs (measured: 2 threads 10x slower than 1 elementwise).
  // One thread compiles with OpenMP's SIMD part alone (-fopenmp-simd): the kernel enters no
  // OpenMP region, which costs a microsecond or more each even where no team starts.
  int threads = 0;
  // Innermost reductions into carried scalars (sum, product, max, min) run as OpenMP SIMD
  // reductions (with OpenMP only), and a multiply and an add may contract into one fused
  // multiply-add (-ffp-contract=fast): results differ from the interpreter's in the last bits.
  // Off, the generated code keeps every operation, its rounding and its order
  // (-ffp-contract=off) and calls the scalar math functions: bit-exact.
  bool reassociate = true;
  // With reassociate, the f32 exponential is arithmetic of the kernel's own that the compiler
  // vectorizes (vector_expf: within 1.25 ulps, results under 2^-125 flush to zero), and loops
  // the compiler vectorizes call glibc's SIMD variants of f64 exp, log, sin, cos, pow and (glibc
  // 2.35 and later, x86-64) tanh (libmvec, with OpenMP, where the compiler links it): within a
  // few ulps of the scalar functions, not equal to them. Innermost elementwise loops that call
  // them run as `omp simd` for it (passes/simd_reductions.h, simd_math).
  bool vector_math = true;
  // The instruction set kernels are compiled for: "native" (the host's: -march=native on x86,
  // -mcpu=native on AArch64; the host's CPU model and features go into the kernel-cache key),
  // "" (the compiler's default target: portable), or any other value, passed as -march=<value>.
  // A target with AVX-512 also gets -mprefer-vector-width=512, so that the loops the compiler
  // vectorizes on its own use the whole width (a -mprefer-vector-width in extra_flags wins).
  std::string target = "native";
  std::vector<std::string> extra_flags;
  // Also compile the program's packed variant, where it has one (uops/passes/packed_variant.h:
  // contractions whose operand a single loop re-reads, such as attention's q k^T and a linear
  // layer), as entry point uops_kernel_packed, and run it when that loop is long enough. The same
  // bits either way; off, the source is shorter and compiles faster.
  bool packed_variant = true;
  // Register tiles that write an output once store it around the cache (non-temporal stores,
  // LoopPlan::tile_stream) where it holds at least this many bytes, and below that store plainly,
  // fetching the next tile's lines for writing; 0: a quarter of the host's last-level cache where
  // the target is native and the system reports it, never under kStreamBytes (8 MiB), else
  // kStreamBytes. Streamed rows (LoopPlan::stream) keep kStreamBytes. On a host whose L3 held a
  // 12.8 MB output, its tiles ran 1.6x faster so than streamed (docs/cpu-kernels.md, Streamed
  // tiles and the last-level cache).
  int64_t tile_stream_bytes = 0;
};

std::string emit_c(const Program& p, const CCompileOptions& options = {});
std::unique_ptr<Executable> compile_c(Program p, const CCompileOptions& options = {});
// Many programs in one translation unit and one compiler call (entry points uops_kernel_<i>):
// what the differential tests use when compile latency would dominate.
std::vector<std::unique_ptr<Executable>> compile_c_batch(std::vector<Program> programs,
                                                         const CCompileOptions& options = {});

}  // namespace uops
