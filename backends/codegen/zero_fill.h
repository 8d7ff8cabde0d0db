// Which outputs and temporaries a backend must zero before a run. The IR says they start at
// zero, but a tensor whose first toucher is a block that assigns every element and reads none
// never shows that zero: skipping it saves a full pass over memory (for an elementwise kernel,
// about a quarter of the run).
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops::codegen {

// Per tensor id; inputs are false.
std::vector<bool> needs_zero_fill(const Program& p);

}  // namespace uops::codegen
