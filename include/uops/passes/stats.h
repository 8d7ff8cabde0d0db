// Size figures of a program, as `uopc stats` reports them before and after the passes: block and
// loop counts, how many temporaries the backends allocate and their bytes at given input shapes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops {

struct ProgramStats {
  int blocks = 0, loops = 0, temporaries = 0;
  int64_t temporary_bytes = 0;
};

// Throws uops::Error when an input's shape or a parameter is missing or of the wrong rank.
ProgramStats program_stats(const Program& p,
                           const std::map<std::string, std::vector<int64_t>>& input_shapes,
                           const ParamMap& params);

}  // namespace uops
