// The gradient rule of each uop kind: given node `n` whose gradient `dn` is complete, each rule
// adds to the gradient graph the nodes of n's contribution to the gradient of every operand
// that has one, written with uops only, so a gradient graph can be differentiated again.
// Internal to autodiff/.
#pragma once

#include "grad_context.h"

namespace uops::autodiff {

void reindex_grad(GradContext& c, int n, Node dn);
void scatter_grad(GradContext& c, int n, Node dn);
void select_grad(GradContext& c, int n, Node dn);
void unary_grad(GradContext& c, int n, Node dn);
void cast_grad(GradContext& c, int n, Node dn);
void binary_grad(GradContext& c, int n, Node dn);
void ternary_grad(GradContext& c, int n, Node dn);
void reduce_grad(GradContext& c, int n, Node dn);

// The partial derivatives the rules share with forward mode, each linear in its last argument
// (elementwise Jacobians are diagonal, so one formula serves both directions):
//   d * op'(x), with y = op(x);
Node unary_derivative(GradContext& c, UnaryOp op, Node x, Node y, Node d);
//   d * dz/d(operand `slot`) of binary node n;
Node binary_partial(GradContext& c, int n, int slot, Node d);
//   v * dy/dx[i] over the input's shape of reduce node n (for a reduction over the same axes).
Node reduce_partial(GradContext& c, int n, Node v);

}  // namespace uops::autodiff
