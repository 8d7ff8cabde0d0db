// The verifier: every invariant of docs/design.md §3.4 that a pass could break. Tests run it after
// every pass; a violation is a bug in uops, so it throws InternalError (not uops::Error).
//
// Checked: tensor ids and ranks of every access; shapes use only input axes and declared
// parameters; a block's loop variables are distinct and used only inside their loops; every
// carried scalar is owned by one loop and used only at or below it in the same block, by
// reduce statements of its own op; arg-reductions carry their position; accumulate uses sum,
// max or min; inputs are never written; every output is written; Data leaves read i32 tensors.
#pragma once

#include <string>
#include <vector>

#include "uops/ir/program.h"

namespace uops::ir {

std::vector<std::string> verify(const Program& p);
void verify_or_throw(const Program& p, const std::string& stage);

}  // namespace uops::ir
