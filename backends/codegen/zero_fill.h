// Which outputs and temporaries must be zeroed before a program's first block (by the C kernel's
// entry itself, c_emitter.h; by the CUDA backend and the runtime before they launch). The IR says
// they start at zero, but a tensor whose first toucher is a block that assigns every element and
// reads none never shows that zero: skipping it saves a full pass over memory (for an elementwise
// kernel, about a quarter of the run).
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops::codegen {

// Per tensor id; inputs are false.
std::vector<bool> needs_zero_fill(const Program& p);

// `p` with the zeros it starts from written by blocks of its own, one per tensor needs_zero_fill
// names (`t[i0, i1, ...] = 0` over t's axes: ir::fills_whole), right in front of the first block
// that touches it (last where none does), so that a backend plans them as it plans any block
// and needs_zero_fill then names nothing. The C kernel's entry writes its zeros so
// (c_emitter.h): on its threads, in the row-local runs and behind the waits that form around
// them as around any block, and only where no tile that starts from zero stores
// (fill_trimming.h).
Program with_own_zeros(Program p);

}  // namespace uops::codegen
