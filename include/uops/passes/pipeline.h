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

namespace uops {

struct PipelineOptions {
  bool verify = false;
  std::string dump_after;  // a pass name or "all"
  std::ostream* dump = nullptr;
};

// Throws uops::Error when `dump_after` names no pass.
Program optimize(Program p, const PipelineOptions& options = {});

// The pass names `dump_after` accepts, in pipeline order.
std::vector<std::string> pass_names();

}  // namespace uops
