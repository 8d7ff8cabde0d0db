// The C backend's packed variant of an optimized program, chosen at run time.
//
// loop_order packs an operand a contraction reads with stride (copies it into the layout its
// loops walk, so that the contraction runs in register tiles) only where at least two loops
// re-read each element. Across a single loop the copy costs about as much as a few passes of the
// product over that loop: it pays where the loop is long and more than doubles the work where it
// has one iteration (a linear layer's batch of 1, attention's single query row in a decoding
// step). Sizes are known only at run time, so the C backend compiles the program and this
// variant of it and runs the variant where every copy pays (packed_variant_pays).
//
// The variant is the program with attention's row reductions split off their scores
// (split_row_reductions, dot_tiling.h), then loop_order allowed copies read across one loop: q k^T
// reads a copy of k laid out [b][d][j], matmul's gradient da = dc b^T a copy of b. Same
// contributions in the same order, so it computes the same bits as the program. Its tensor table
// is the program's, same ids, then the copies as temporaries. Nothing when no copy is made, or
// when a copy's loop lengths could raise an error (they are tested before the kernel runs).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "uops/ir/program.h"
#include "uops/passes/loop_order.h"

namespace uops {

struct PackedVariant {
  ir::Program program;
  std::vector<PackedOnce> copies;
};

std::optional<PackedVariant> packed_variant(const ir::Program& p);

// Where the loop that re-reads each copied element runs at least kPackedReuseShort times over a
// reduction of at most kPackedShortReduction iterations, or kPackedReuseLong times over a longer
// one (sizes and parameters from `env`). The plain program's dot tiles (dot_tiling.h) sum each
// result's SIMD lanes once after its reduction: over a short one that costs as much as the
// reduction, and the register tiles' gain pays for the copy within a few dozen rows; over a long
// one the dot tiles run nearly as fast and the copy takes hundreds. Measured, one and two
// threads, in docs/cpu-kernels.md (Packed variants).
inline constexpr int64_t kPackedShortReduction = 128;
inline constexpr int64_t kPackedReuseShort = 64;
inline constexpr int64_t kPackedReuseLong = 512;
bool packed_variant_pays(const std::vector<PackedOnce>& copies, const ir::IndexEnv& env);

}  // namespace uops
