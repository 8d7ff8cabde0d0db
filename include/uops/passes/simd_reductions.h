// simd_reductions (a C backend pass with reassociation, CCompileOptions::reassociate): marks the
// innermost loops that may reduce their carried scalars in SIMD lanes (`omp simd reduction`),
// recorded in the loops' plans (ir::LoopPlan::simd).
//
// An innermost loop qualifies when it is not the block's only loop nor its parallel loop, owns
// no carried scalar, updates scalars owned further out with sum, mean, product, max or min and
// nothing else in it reads them, each iteration stores to its own elements (every tensor it
// writes is written and read at one index with an axis that is the loop variable, and no index
// reads data), and nothing in it may raise an error. Sums and products then change rounding
// order only; max and min keep the first of equal values and skip NaN in every lane, so lanes
// combined differ from one sequential pass only in which of -0 and +0 they keep.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program plan_simd_reductions(Program p);

}  // namespace uops
