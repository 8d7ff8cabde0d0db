// Lowering: each uop of a graph emits one loop block (docs/design.md §3.4), in graph order.
//
// A graph without outputs is an error. Every non-input node gets a tensor: outputs take their
// output names, the rest are temporaries named t<node>. Axis sizes asserted equal are unified (the
// later one is written as the earlier one everywhere) so that passes see equal ranges as equal
// expressions; the assertions stay in the program and are checked when it runs.
#pragma once

#include <vector>

#include "uops/ir/graph.h"
#include "uops/ir/program.h"

namespace uops {

// A sum `a + s` of a scatter s that nothing else reads accumulates s into the sum's tensor (after
// a copy of a, unless a is such a sum or a scatter built in that tensor already): a gradient
// that several scatters add to is one tensor, as it would be written by hand.
//
// `tensor_of_node`, when given, receives the program tensor of every graph node (-1 for a
// scatter accumulated into a sum; the nodes of a sum share its tensor).
Program lower(const Graph& graph, std::vector<int>* tensor_of_node = nullptr);

}  // namespace uops
