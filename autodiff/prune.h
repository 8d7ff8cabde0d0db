// Liveness for an assembled gradient program. Internal to autodiff/.
//
// Keeps the blocks that write, directly or through other blocks, an output (a block stays live
// once any block after it reads or writes what it writes, so a zeroing block stays with its
// accumulations). Drops every tensor no kept block or shape mentions. An input whose values
// no kept block reads is dropped too when each of its axis sizes still in use is asserted equal
// (a Dim == Dim equality) to an axis of a kept input, and is rewritten as that axis; otherwise
// it stays, for its sizes. Inputs in `keep` always stay. Equalities over dropped inputs go.
// Tensors are renumbered inputs first, then outputs, then temporaries (each in table order);
// loop variables and carried scalars in order of appearance.
#pragma once

#include <vector>

#include "uops/ir/program.h"

namespace uops::autodiff {

using namespace ir;

Program prune(Program p, const std::vector<int>& keep);

}  // namespace uops::autodiff
