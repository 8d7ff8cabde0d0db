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

}  // namespace uops::codegen
