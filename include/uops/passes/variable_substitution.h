// Variable substitution (docs/design.md §3.5). A temporary that gives back what is stored into it
// (of the program's value type, or i32 holding a comparison or an i32 load with an integer fill)
// and is written by exactly one statement, an assign proven in range, and read only by later
// statements of the same loop of the same block at the identical index, is replaced by the
// assigned expression at each read, and the assign goes. Statement order is respected: a read
// before the write, or a statement between the write and a read that changes a tensor or carried
// scalar the expression uses, blocks the substitution. The temporary is then untouched and dead
// code elimination drops it from the tensor table.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program substitute_variables(Program p);

}  // namespace uops
