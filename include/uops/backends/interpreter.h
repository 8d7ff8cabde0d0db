// The interpreter: the executable definition of the semantics (docs/design.md §3.4). Runs every
// program the IR can express in f32 or f64 (the program's value type). Each run binds shapes,
// then compiles every index expression once, to an affine form over loop variables where it is
// affine (nearly always) and to a tree of closures with constants folded otherwise, so no
// expression tree is walked per element.
//
// Outputs and temporaries start as zeros. A load or store the bounds pass marked unchecked that
// falls outside its tensor is an InternalError (a bounds-pass bug), never a silent read.
#pragma once

#include <memory>

#include "uops/backends/executable.h"

namespace uops {

TensorMap interpret(const Program& p, const TensorMap& inputs, const ParamMap& params = {});
std::unique_ptr<Executable> make_interpreter(Program p);

}  // namespace uops
