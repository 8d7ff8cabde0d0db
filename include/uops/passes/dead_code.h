// Dead-code elimination (docs/design.md §3.5). Keeps the statements that write, directly or through
// other statements, what the program outputs, stopping at program inputs; a reduce statement
// lives when its carried scalar feeds a live statement. Blocks left without statements go, and
// so do carried scalars nothing updates. Every temporary that no statement touches any more is
// dropped from the tensor table and the remaining tensors are renumbered everywhere (shapes,
// assertions, loads, stores, Data leaves), so backends never allocate it.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program eliminate_dead_code(Program p);

}  // namespace uops
