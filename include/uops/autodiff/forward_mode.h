// Forward-mode differentiation of a uop graph, and Hessian-vector products as forward over
// reverse (docs/design.md §3.6). Both give graphs, built from the same partial derivatives as
// the reverse-mode rules, so they lower, optimize, run and differentiate like any other graph.
#pragma once

#include <string>
#include <vector>

#include "uops/autodiff/graph_gradient.h"
#include "uops/ir/graph.h"

namespace uops {

// The Jacobian-vector product of `g` along tangents of the inputs in `wrt`:
//   inputs   g's inputs, then <prefix><x> for every x in `wrt` (shaped like x): the direction;
//   outputs  <prefix><y> for every float output y of g: the derivative of y along it,
//            (y(x + h t) - y(x - h t)) / 2h as h goes to 0.
// The derivative conventions are gradient_graph's. Throws uops::Error when a name in `wrt` is
// no float input, is given twice, or a tangent's name is taken, or when g has no float output.
Graph jvp(const Graph& g, const std::vector<std::string>& wrt, const std::string& prefix = "t");

// The Hessian-vector product, forward over reverse: jvp(gradient_graph(g, wrt), wrt, "t").
//   inputs   g's inputs, d<y> for every output y (the weights of L = sum(d<y> * y)), and t<x>
//            for every x in `wrt`;
//   outputs  td<x> for every x in `wrt`: the derivative of dL/dx along t, that is H t with H
//            the Hessian of L over the inputs in `wrt`.
Graph hvp(const Graph& g, const std::vector<std::string>& wrt);

}  // namespace uops
