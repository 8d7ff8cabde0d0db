// Hand-written loop-block programs for the pass tests: the smallest program where a rule matters,
// built statement by statement, and the check that a pass left its results alone.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "support/tensors.h"
#include "uops/ir.h"

namespace uops::testing {

using namespace ir;

// The interpreter gives the same outputs for both programs.
inline void expect_same(const Program& p, const Program& q, const TensorMap& in) {
  TensorMap a = interpret(p, in), b = interpret(q, in);
  for (auto& [name, t] : a)
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), b.at(name).get(i)) << name << i;
}

inline Stmt assign(int tensor, std::vector<Index> at, Value v) {
  Stmt s;
  s.tensor = tensor;
  s.index = std::move(at);
  s.value = std::move(v);
  return s;
}

inline Stmt accumulate(int tensor, std::vector<Index> at, Value v) {
  Stmt s = assign(tensor, std::move(at), std::move(v));
  s.kind = StmtKind::accumulate;
  return s;
}

// A program over input x [N] with the given extra tensors (shape [x.0] each), all of `dtype`.
inline Program vector_program(const std::vector<std::pair<std::string, Role>>& tensors,
                              DType dtype = DType::f32) {
  Program p;
  p.tensors.push_back({"x", dtype, {idx::dim(0, 0)}, Role::input});
  for (auto& [name, role] : tensors) p.tensors.push_back({name, dtype, {idx::dim(0, 0)}, role});
  return p;
}

// Statements are written with Var(-1) standing for the block's loop variable.
inline Index V() {
  return idx::var(-1);
}
inline Index rewrite_var(const Index& e, const Index& v) {
  return rewrite(e, [&](const Index& leaf) -> Index {
    return leaf->kind == IndexKind::Var && leaf->var == -1 ? v : nullptr;
  });
}
inline std::vector<Index> rewrite_vars(std::vector<Index> ix, const Index& v) {
  for (auto& e : ix) e = rewrite_var(e, v);
  return ix;
}

// One loop over [0, x.0) running `stmts`.
inline Block vector_block(Program& p, const std::string& origin, std::vector<Stmt> stmts) {
  Block b;
  Loop l;
  l.var = p.num_vars++;
  l.start = idx::constant(0);
  l.end = idx::dim(0, 0);
  Index v = idx::var(l.var);
  for (auto& s : stmts) {
    s.index = rewrite_vars(s.index, v);
    s.value = rewrite(s.value, nullptr, [&](const Index& e) { return rewrite_var(e, v); });
  }
  l.stmts = std::move(stmts);
  b.loops.push_back(std::move(l));
  b.origin = origin;
  return b;
}

}  // namespace uops::testing
