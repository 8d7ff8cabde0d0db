// The one stable text form of a program; golden tests compare against it.
//
//   tensor x f32 [x.0, x.1] input
//   assert x.1 == w.0
//   block 0: reduce sum
//     for v0 in [0, x.0) carry c0 sum:
//       for v1 in [0, x.1):
//         c0 sum= x[v0, v1]
//       y[v0, 0] = c0
//
// Loads the bounds pass has not proven in range print as `x?[...]` (with `fill F` when the
// fill is not 0); proven loads and stores print plain. A loop's statements print after its
// inner loop, in the order they run.
#pragma once

#include <string>

#include "uops/ir/program.h"

namespace uops::ir {

std::string print(const Program& p);
std::string print(const Program& p, const Value& v);
std::string print_block(const Program& p, const Block& b, int number);
std::string format_double(double v);  // shortest text that reads back to the same double

}  // namespace uops::ir
