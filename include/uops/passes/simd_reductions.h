// simd_reductions (a C backend pass with reassociation, CCompileOptions::reassociate): marks the
// innermost loops that may reduce their carried scalars in SIMD lanes (`omp simd reduction`),
// recorded in the loops' plans (ir::LoopPlan::simd).
//
// An innermost loop qualifies when it is not the block's only loop nor its parallel loop, owns
// no carried scalar, updates scalars owned further out with sum, mean, product, max, min, argmax
// or argmin and nothing else in it reads them, each iteration stores to its own elements (every
// tensor it writes is written and read at one index with an axis that is the loop variable, and
// no index reads data), and nothing in it may raise an error. Sums and products then change
// rounding order only; max and min keep the first of equal values and skip NaN in every lane, so
// lanes combined differ from one sequential pass only in which of -0 and +0 they keep. No `omp
// simd` clause reduces an argmax or argmin: the printer runs such a loop in lanes of its own
// (codegen::KernelWriter::lanes), which find the position a sequential pass finds.
//
// A loop that sums at least kNarrowScalars scalars (a dot tile, dot_tiling.h), and has no argmax
// or argmin, runs ranges of at most kNarrowUpto iterations in kNarrowLanes lanes
// (LoopPlan::narrow_lanes): the same sums in another grouping. Measured on AVX-512 (Zen 4), a 4 x 4
// dot tile over 64 to 128 elements ran 1.05-1.7x faster in 8 lanes than in 16, and over 256 or 512
// elements 1.1-1.2x slower.
#pragma once

#include <cstddef>
#include <cstdint>

#include "uops/ir/program.h"

namespace uops {

constexpr size_t kNarrowScalars = 4;
constexpr int kNarrowLanes = 8;
constexpr int64_t kNarrowUpto = 128;

Program plan_simd_reductions(Program p);

// simd_math (a C backend pass with reassociation, run after simd_reductions): marks the innermost
// loops that call math functions with SIMD variants in glibc's libmvec (exp, log, sin, cos, tanh,
// pow; sigmoid through exp) and reduce nothing, so that the C printer runs them as `omp simd`
// where libmvec is linked (CCompileOptions::vector_math): GCC calls a function's SIMD variant only
// in such a loop. Recorded as ir::LoopPlan::simd_math.
//
// An innermost loop qualifies when its range is not one constant iteration, it is not a parallel
// loop, owns no carried scalar, has no SIMD reduction and updates no carried scalar, each
// iteration stores to its own elements (as above), and nothing in it may raise an error. Its
// iterations are then independent, so running them in lanes changes no operation and no order:
// results differ from the scalar loop only in the SIMD variants' last bits.
Program plan_simd_math(Program p);

}  // namespace uops
