// Program equality (uops/ir/program.h): every field counts, expressions by structure. The
// optimizer's fixed point compares programs with it, so a change the printer does not show
// still counts, and an unchanged program (NaN fills included) always compares equal.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "support/programs.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;
namespace {

TEST(ProgramEquality, EveryFieldCounts) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(ReduceOp::max, {1}, g.unary(UnaryOp::exp, x)));
  const Program p = lower(g);
  ASSERT_FALSE(p.blocks.empty());
  EXPECT_TRUE(equal(p, p));
  Program rebuilt = p;
  map_program(
      rebuilt, [](const Index& e) { return rewrite(e, [](const Index&) { return nullptr; }); },
      [](const Value& v) { return rewrite(v, [](const Value&) { return nullptr; }); });
  EXPECT_TRUE(equal(p, rebuilt));  // new nodes, same structure

  std::vector<std::function<void(Program&)>> changes = {
      [](Program& q) { q.tensors[0].name = "z"; },
      [](Program& q) { q.tensors[0].shape[0] = idx::constant(3); },
      [](Program& q) { q.params.push_back("n"); },
      [](Program& q) {
        q.equalities.push_back({idx::dim(0, 0), idx::dim(0, 1)});
      },
      [](Program& q) { q.num_vars += 1; },
      [](Program& q) { q.blocks[0].origin = "other"; },
      [](Program& q) { q.blocks[0].loops[0].end = idx::constant(5); },
      [](Program& q) { q.blocks[0].loops[0].plan.row_local = 1; },
      [](Program& q) {
        q.blocks.back().loops.back().carried.push_back({7, ReduceOp::sum});
      },
      [](Program& q) {
        for (auto& l : q.blocks[0].loops)
          for (auto& s : l.stmts) s.checked = !s.checked;
      },
      [](Program& q) {
        for (auto& l : q.blocks[0].loops)
          for (auto& s : l.stmts) s.value = val::constant(std::nan(""));
      },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    Program q = p;
    changes[i](q);
    EXPECT_FALSE(equal(p, q)) << "change " << i;
    EXPECT_TRUE(equal(q, Program(q))) << "change " << i;
  }
}

// Value equality was not reflexive for a load whose fill is NaN once the node was rebuilt.
TEST(ProgramEquality, ANaNFillEqualsItself) {
  Value a = val::load(0, {idx::var(0)}, std::nan("")),
        b = val::load(0, {idx::var(0)}, std::nan(""));
  EXPECT_TRUE(equal(a, b));
}

}  // namespace
}  // namespace uops
