// Simplification (docs/design.md §3.5): constant folding and algebraic identities on index and
// value expressions. Values fold in the program's value type with the scalar semantics of
// uops/ir/scalar_semantics.h, so a folded constant is exactly what the interpreter would have
// computed. Only identities that hold for every input, NaN and infinity included, are used
// (x*1, x/1, x-0, --x, c ? a : a, constant conditions; never x*0, and not x+0, which turns
// -0 into +0); index expressions are rebuilt so that their constructors fold them.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program simplify(Program p);

}  // namespace uops
