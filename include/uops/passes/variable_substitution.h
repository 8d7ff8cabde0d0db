// Variable substitution (docs/design.md §3.5). A temporary that gives back what is stored into it
// (of the program's value type, or i32 holding a comparison or an i32 load with an integer fill)
// and is written by exactly one statement, an assign proven in range, and read only by later
// statements of the same loop of the same block at the identical index, is replaced by the
// assigned expression at each read, and the assign goes. Statement order is respected: a read
// before the write, or a statement between the write and a read that changes a tensor or carried
// scalar the expression uses, blocks the substitution. The temporary is then untouched and dead
// code elimination drops it from the tensor table.
//
// Before that, for each temporary: one assigned by a single statement (at most 32 distinct
// subexpressions, a repeated one counted once as a compiler computes it once; reading no carried
// scalar and nothing its own block or any later block writes) in the
// innermost loop of a block whose loops are exactly its axes from 0, is recomputed in each later
// block whose every access to it is proven in range: the reads become the assigned expression
// at the composed index (unless a composed index passes 64 nodes). softmax and layernorm then
// need no full-size temporary; the assign goes when dead code finds no read left. An assign that
// reads no tensor (a fill, a scale) may sit in a block fused around it, with loops inside the
// one at its rank: attention's gradient no longer stores its scale to every score.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program substitute_variables(Program p);

}  // namespace uops
