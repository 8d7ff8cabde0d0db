// The optimization pipeline (docs/design.md §3.5): dead-code elimination, bounds-check elimination
// (which folds loads that read only their fill, so they block no fusion) and storage reuse, then
// loop fusion, variable substitution and dead-code elimination repeated until the program stops
// changing, then loop ordering, bounds-check elimination and simplification. No pass changes a
// result; the random-program differential tests hold them to it.
//
// `verify` runs the verifier after every pass (an InternalError names the pass); `dump_after`
// prints the program after the named pass, or after every pass with "all", to `dump` (stderr
// when null).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/passes/register_tiles.h"

namespace uops {

struct PipelineOptions {
  bool verify = false;
  std::string dump_after;  // a pass name or "all"
  std::ostream* dump = nullptr;
};

// Throws uops::Error when `dump_after` names no pass.
Program optimize(Program p, const PipelineOptions& options = {});

// What the C backend's passes plan for: SIMD reductions and SIMD math only with reassociation
// (CCompileOptions::reassociate); functions run by every thread of an enclosing team
// (`worksharing`, c_emitter.h) take no row-local runs and no size threshold. `vector_bytes`: the
// width of the vectors the kernel is compiled for (64 AVX-512, 32 AVX, 16 SSE or NEON), which
// sizes the register tiles (tile_registers); the C backend sets it from its compile target
// (cgen::cpu_target). `one_thread`: the kernel is compiled to run on one thread (no OpenMP, or
// CCompileOptions::threads 1), so no block plans thread copies, whose team could never start:
// a second copy of each such block, compiled for nothing (conv2d's weight gradient compiled in
// 5.4 s with them, 2.6 without).
struct CpuTarget {
  bool reassociate = true;
  bool worksharing = false;
  int vector_bytes = 64;
  bool one_thread = false;
  int64_t tile_stream_bytes = kStreamBytes;  // CCompileOptions::tile_stream_bytes, as chosen
};

// The C backend's passes, which its emitter runs on the program it is given (optimized or not):
// the tilings tile_dots(4, 4, 16), tile_reductions(512), tile_registers(6, 6, 64, 64,
// vector_bytes) and tile_copies(16), accumulator_promotion (with reassociation), then the
// decisions its printer prints, recorded in the loops' plans (ir::LoopPlan): parallel_loops,
// simd_reductions, simd_math, row_local_runs and register_tiles; then fill_trimming and
// epilogue_folding, which read those plans, and last empty_range_tests, on the blocks they leave.
// `options` as for optimize().
Program plan_cpu(Program p, const CpuTarget& target, const PipelineOptions& options = {});

// The pass names `dump_after` accepts, in pipeline order: optimize()'s, then plan_cpu()'s.
std::vector<std::string> pass_names();

}  // namespace uops
