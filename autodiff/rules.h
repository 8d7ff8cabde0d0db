// The gradient rule of each uop kind: given node `n` whose gradient is complete, each rule
// emits the blocks that accumulate n's contribution into the gradient of every operand that
// has one. Internal to autodiff/.
#pragma once

#include "grad_context.h"

namespace uops::autodiff {

void reindex_grad(GradContext& c, int n);
void unary_grad(GradContext& c, int n);
void cast_grad(GradContext& c, int n);
void binary_grad(GradContext& c, int n);
void ternary_grad(GradContext& c, int n);
void reduce_grad(GradContext& c, int n);
void select_grad(GradContext& c, int n);

}  // namespace uops::autodiff
