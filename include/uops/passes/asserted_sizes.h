// asserted_sizes: an index expression of the program (a loop bound, a shape, an index; whole,
// not a part of one) that may raise (a division by a parameter, such as conv2d's output size
// `(x.1 + 2 * $pad - ...) / $stride + 1`) and is one side of an equality assertion whose other
// side cannot raise (`dy.1`, in conv2d's gradient) is replaced by that other side; the
// assertions themselves stay.
//
// Exact: binding (ir/binding.h) evaluates every assertion before any block runs, so a run that
// reaches the blocks has evaluated the expression without error and found it equal to the other
// side. What it gains: loop bounds that cannot raise, which the passes that reorder and tile
// loops may move (loop_order.h, reduction_tiling.h), where a bound that may raise must stay
// outermost so that whether it raises does not change.
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program use_asserted_sizes(Program p);

}  // namespace uops
