// C source for programs: one function per program, sharing one set of helpers, so a batch of
// programs can go through a single compiler call.
#pragma once

#include <string>
#include <vector>

#include "backends/codegen/dialect.h"
#include "uops/ir/program.h"
#include "uops/passes/pipeline.h"

namespace uops::cgen {

// A translation unit defining `entries[i]` for `programs[i]`, each with the ABI documented in
// uops/backends/c/c_backend.h, planned for `target` (plan_cpu; cpu_target gives the one a compile
// is for). `reassociate` lets innermost sum and product reductions run as SIMD reductions
// (CCompileOptions::reassociate); off, every operation keeps its order. Threads run as the team
// plan says (c_team_plan.h): a team per block, or one per kernel whose blocks would start two or
// more. `worksharing` prints functions meant to be called by every thread of an enclosing OpenMP
// team (backends/scheduled/wavefront.h): each block's parallel loop is an orphaned
// `omp for schedule(static)` (no size threshold), a block without one that every thread
// could run is `omp single nowait`, the threads wait where the team plan says, and `threads` is
// ignored; each thread returns its own error bits. Called outside a team, such a function runs
// alone, as usual. `dialect` spells it (C's; the tests print another).
//
// The outputs and temporaries a program starts from zero (codegen::needs_zero_fill): a whole
// program's entry writes those zeros itself, as blocks planned in front of the first block that
// touches each tensor (codegen::with_own_zeros), so its caller zeroes nothing (Zeros::by_entry).
// The runtime's block kernels (backends/scheduled/c_block_kernels.h), each one block of a larger
// program, leave them to their caller (Zeros::by_caller): a block's tensors may hold what earlier
// blocks wrote.
enum class Zeros { by_entry, by_caller };
std::string emit_c_unit(const std::vector<const Program*>& programs,
                        const std::vector<std::string>& entries,
                        const CpuTarget& target = {false, false}, Zeros zeroes = Zeros::by_entry,
                        const codegen::Dialect& dialect = codegen::c_dialect());

}  // namespace uops::cgen
