// The optimizer's cost is bounded on chains whose expressions would grow when composed: every
// index it leaves stays small, and results do not change.
#include <gtest/gtest.h>

#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

// The largest index expression anywhere in the program: loop bounds, stores, loads.
size_t largest_index(const Program& p) {
  size_t most = 0;
  auto see = [&](const Index& e) { most = std::max(most, node_count(e)); };
  for (auto& t : p.tensors)
    for (auto& e : t.shape) see(e);
  for (auto& b : p.blocks)
    for (auto& l : b.loops) {
      see(l.start);
      see(l.end);
      for (auto& s : l.stmts) {
        for (auto& e : s.index) see(e);
        for_each_load(s.value, [&](const ValueNode& n) {
          for (auto& e : n.index) see(e);
        });
      }
    }
  return most;
}

void expect_same_results(const Program& p, const Program& q, int64_t size) {
  Tensor x(DType::f32, {size});
  for (int64_t i = 0; i < size; ++i) x.set(i, double(i) - 2.5);
  TensorMap a = interpret(p, {{"x", x}}), b = interpret(q, {{"x", x}});
  ASSERT_EQ(a.at("y").shape, b.at("y").shape);
  for (int64_t i = 0; i < a.at("y").numel(); ++i) EXPECT_EQ(a.at("y").get(i), b.at("y").get(i));
}

// y = n reindexes of x in a row, each with the given shape and index.
Graph chain(int n, const std::string& shape, const std::string& index) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  for (int k = 0; k < n; ++k) x = g.reindex(x, {shape}, {index});
  g.output("y", x);
  return g;
}

// Each read composes the previous index into itself: `i0` occurs three times, so composing the
// whole chain would give 3^20 leaves (n = 14 took 8 s and 3.2 GB, n = 16 exhausted 8 GB).
TEST(ExpressionGrowth, ChainOfSelfComposingReindexes) {
  Program p = lower(chain(20, "dA0", "min(i0, dA0 - 1 - i0 + i0)"));
  Program q = optimize(p);
  EXPECT_LE(largest_index(q), 200u);
  expect_same_results(p, q, 7);
}

// Each reindex grows the shape by one: the shape stays `x.0 + k`, not a chain of k additions.
TEST(ExpressionGrowth, ChainOfGrowingReindexes) {
  Program p = lower(chain(300, "dA0 + 1", "i0"));
  EXPECT_EQ(index_text(p, p.tensors[p.find_tensor("y")].shape[0]), "x.0 + 300");
  Program q = optimize(p);
  EXPECT_LE(largest_index(q), 8u);
  expect_same_results(p, q, 3);
}

}  // namespace
}  // namespace uops
