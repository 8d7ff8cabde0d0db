// y[0] += x[i] with no block that zeroes y: a program that relies on its outputs starting at
// zero (docs/design.md §3.4), which the glue's zero nodes must provide on every run.
#pragma once

#include "uops/ir/program.h"

namespace uops::testing {

using namespace ir;

inline Program sum_without_zeroing() {
  Program p;
  p.tensors = {{"x", DType::f64, {idx::dim(0, 0)}, Role::input},
               {"y", DType::f64, {idx::constant(1)}, Role::output}};
  p.num_vars = 1;
  Loop l;
  l.var = 0;
  l.start = idx::constant(0);
  l.end = idx::dim(0, 0);
  l.stmts.push_back({StmtKind::accumulate,
                     1,
                     {idx::constant(0)},
                     true,
                     ReduceOp::sum,
                     -1,
                     val::load(0, {idx::var(0)}),
                     nullptr});
  p.blocks.push_back({{l}, "sum by hand"});
  return p;
}

}  // namespace uops::testing
