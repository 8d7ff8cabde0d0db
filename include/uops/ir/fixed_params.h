// Parameters fixed when a program is compiled, as a oneDNN primitive is made for one stride and
// one window: fix_params adds an assertion `$name = value` per parameter, which binding checks
// before anything runs like any other (a run given another value is refused with a uops::Error,
// nothing written), and the C and CUDA printers declare such a parameter as a constant (a CUDA
// kernel no longer takes it), so the compiler sees the window's size and the stride (a pool's
// window loops unroll). The passes are unchanged: they see the parameter, as before; the range
// analysis (ir/range_prover.h) reads it as its value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops {

// Throws uops::Error for a name that is not one of p's parameters.
Program fix_params(Program p, const ParamMap& values);

// The value an assertion `$name = constant` (either way round) fixes parameter `name` to.
std::optional<int64_t> fixed_param(const Program& p, const std::string& name);
// `e`'s value, where it is a constant or a parameter fixed to one.
std::optional<int64_t> fixed_value(const Program& p, const ir::Index& e);

}  // namespace uops
