// Bounds-check elimination (docs/design.md §3.5). Interval analysis of every access's index over
// its block's loop ranges and the symbolic shapes: a load or store proven in range loses its check
// (the interpreter treats an unchecked access that falls outside as an internal error). A load
// proven always outside its tensor becomes its fill constant, unless evaluating its index could
// raise an error (may_raise: a division or modulo by other than a positive constant).
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program eliminate_bounds_checks(Program p);

}  // namespace uops
