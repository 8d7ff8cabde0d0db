// Reverse-mode automatic differentiation of a uop graph, into a uop graph (so gradients can be
// differentiated again, composed and oracle-checked) and into its loop program (docs/design.md
// §3.6).
//
// The gradient program of `g` with respect to the inputs named in `wrt`:
//   inputs   d<name> for every output `name` of g (same shape and dtype as that output), then
//            the forward inputs the gradient reads: their values, or their axis sizes where a
//            gradient's shape cannot be written over the other inputs (the gradient of a sum over
//            an axis needs that axis' size); unread inputs are left out, so callers pass only
//            what the gradient needs;
//   outputs  d<input> for every input in `wrt`, shaped like that input.
// Forward nodes come first, in topological order (the gradient recomputes what it needs from
// the inputs), then the gradient nodes in reverse order. A node used several times gets the sum
// of its contributions: elementwise ones are added as they come, scatters (the gradients of
// reindex and select) last, so lowering accumulates them into the sum's one tensor. In the
// program, blocks that no requested gradient depends on are dropped; it is otherwise
// unoptimized (run passes/pipeline.h on it).
//
// Conventions where the derivative is not defined:
//   max, min (binary)    a tie goes to the first operand, as `a >= b ? a : b` picks it;
//   reduce max, min      all of it goes to the first extremal element (argmax's first index);
//   reduce prod          the product of the other elements, exact at zeros;
//   pow                  the exponent gets 0 where the base is not positive;
//   (a branch a ternary drops never divides by zero or takes log of x <= 0, so a second
//   derivative sees no infinite slope times zero)
//   abs                  0 at 0; floor, comparisons and arg-reductions give no gradient;
//   ternary, select      no gradient to the condition or to the i32 index; a select index out of
//                        range contributes nothing, as a reindex fill position does.
#pragma once

#include <string>
#include <vector>

#include "uops/ir/graph.h"
#include "uops/ir/program.h"

namespace uops {

// The gradient as a uop graph: `g`'s nodes at their own ids (the forward values it recomputes),
// an input d<name> per output of g (shaped like it), then the gradient nodes, each rule written
// with uops (a reindex's gradient is a scatter, a scatter's a reindex), and an output d<input>
// per name in `wrt`. So a gradient graph can be differentiated again, lowered, or checked as an
// op. `prefix` replaces the d of every gradient's name, so a gradient of a gradient (whose
// outputs are d<input> already) can be named apart: gradient_graph(gradient_graph(g, {"x"}, "g"),
// {"x", "gy"}) gives dx and dgy. Throws uops::Error when a name in `wrt` is no float input of
// `g`, is given twice, or when a gradient's name is already the name of a tensor of `g`.
//
// `saved` lists forward nodes whose values the gradient is given instead of recomputing them
// (what a training framework keeps from the forward pass): each becomes an input named
// saved<id> (see with_saved_outputs), and the forward nodes only it needed drop out of the
// program. Nothing flows through a saved value to its operands in a gradient of this gradient.
// Throws uops::Error also when a saved id is no node of `g`, is an input, or is given twice.
Graph gradient_graph(const Graph& g, const std::vector<std::string>& wrt,
                     const std::string& prefix = "d", const std::vector<int>& saved = {});

// lower(gradient_graph(g, wrt, prefix, saved)) without the blocks and inputs the gradients do
// not need: the program described above. Throws as gradient_graph does.
Program gradient(const Graph& g, const std::vector<std::string>& wrt,
                 const std::string& prefix = "d", const std::vector<int>& saved = {});

// The residuals of the gradient with respect to `wrt`: the forward nodes, inputs aside, whose
// values its rules read, ascending. A rule that reads a reindex (a row statistic broadcast back
// over its row) lists what the reindex reads instead, so no broadcast copy is kept. Given all of
// them as `saved`, the optimized gradient recomputes no forward value but reindexes of them,
// which cost nothing (before optimize, a rule's constant shaped like a forward value still reads
// it, at no index, until simplification folds that read into the constant).
std::vector<int> gradient_residuals(const Graph& g, const std::vector<std::string>& wrt);

// `g` with an output saved<id> for every node in `saved`: the forward pass that keeps what
// gradient(g, wrt, prefix, saved) reads. Throws uops::Error when a name is taken or an id is no
// node of `g`.
Graph with_saved_outputs(const Graph& g, const std::vector<int>& saved);

}  // namespace uops
