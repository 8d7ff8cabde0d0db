// ir/parallelism.h: which loops may share a team, and when a team's threads need not wait for
// each other between the runs of a parallel loop inside other loops.
#include "ir/parallelism.h"

#include <gtest/gtest.h>

#include "uops/ir.h"

namespace uops {

using namespace ir;
namespace {

// for v0 in [0, 2): for v1 in [0, 2): for v2 in [0, 2): y[index] = 1, y of 8 elements.
Program three_loops(const Index& index) {
  Program p;
  p.tensors.push_back({"y", DType::f32, {idx::constant(8)}, Role::output});
  Stmt s;
  s.tensor = 0;
  s.index = {index};
  s.value = val::constant(1);
  Block b{{}, "test"};
  for (int v = 0; v < 3; ++v)
    b.loops.push_back(Loop{v, idx::constant(0), idx::constant(2), {}, {}});
  b.loops.back().stmts.push_back(s);
  p.blocks.push_back(b);
  p.num_vars = 3;
  return p;
}

Index two_rows_from(const Index& first) {
  return idx::add(idx::add(first, idx::mul(idx::var(1), idx::constant(2))), idx::var(2));
}

// Every thread runs the outer loop; iteration v1 of the middle one writes the tile y[2 v1 + v2]
// whatever v0 is: the thread that runs it at v0 = 0 runs it at v0 = 1 too.
TEST(Parallelism, IterationsStayWithTheirThreadsWhenTheOuterLoopsTouchNothingElse) {
  Program p = three_loops(two_rows_from(idx::constant(1)));
  ASSERT_TRUE(loop_parallelism(p, p.blocks[0])[1].exclusive) << print(p);
  EXPECT_TRUE(stays_with_threads(p.blocks[0], 1)) << print(p);
}

// y[2 v0 + 2 v1 + v2]: loop v1 is exclusive for each v0, but iteration 1 at v0 = 0 writes what
// iteration 0 at v0 = 1 writes. Threads that did not wait would race.
TEST(Parallelism, IterationsMovedByAnOuterLoopDoNotStayWithTheirThreads) {
  Program p = three_loops(two_rows_from(idx::mul(idx::var(0), idx::constant(2))));
  ASSERT_TRUE(loop_parallelism(p, p.blocks[0])[1].exclusive) << print(p);
  EXPECT_FALSE(stays_with_threads(p.blocks[0], 1)) << print(p);
}

// A statement of the outer loop would run on every thread of the team.
TEST(Parallelism, AnOuterLoopWithStatementsKeepsItsThreadsWaiting) {
  Program p = three_loops(two_rows_from(idx::constant(1)));
  Stmt s = p.blocks[0].loops[2].stmts[0];
  s.index = {idx::constant(0)};
  p.blocks[0].loops[0].stmts.push_back(s);
  EXPECT_FALSE(stays_with_threads(p.blocks[0], 1)) << print(p);
}

// for v0 in [0, 4): for v1 in [4 * v0, min(13, 4 * v0 + width)): y[v1] = 1 (tile_copies' shape):
// with tiles of 4 (the last one shorter) the tile loop v0 is exclusive; with ranges of 5 each
// iteration writes the first element of the next, and it is not.
Program tiles_of(int64_t width) {
  Program p;
  p.tensors.push_back({"y", DType::f32, {idx::constant(13)}, Role::output});
  Stmt s;
  s.tensor = 0;
  s.index = {idx::var(1)};
  s.value = val::constant(1);
  Index first = idx::mul(idx::var(0), idx::constant(4));
  Block b{{}, "test"};
  b.loops.push_back(Loop{0, idx::constant(0), idx::constant(4), {}, {}});
  b.loops.push_back(
      Loop{1, first, idx::min(idx::constant(13), idx::add(first, idx::constant(width))), {}, {}});
  b.loops.back().stmts.push_back(s);
  p.blocks.push_back(b);
  p.num_vars = 2;
  return p;
}

TEST(Parallelism, ALoopOverTilesOfAnotherIsExclusiveWhenTheTilesAreDisjoint) {
  Program tiled = tiles_of(4), overlapping = tiles_of(5);
  EXPECT_TRUE(loop_parallelism(tiled, tiled.blocks[0])[0].exclusive) << print(tiled);
  EXPECT_FALSE(loop_parallelism(overlapping, overlapping.blocks[0])[0].exclusive)
      << print(overlapping);
}

}  // namespace
}  // namespace uops
