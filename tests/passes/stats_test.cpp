// Program size figures (passes/stats), as `uopc stats` reports them.
#include "uops/passes/stats.h"

#include <gtest/gtest.h>

#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

namespace {

TEST(Stats, CountsBlocksLoopsAndTemporaryBytes) {
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  g.output("y", g.unary(UnaryOp::exp, g.unary(UnaryOp::neg, x)));
  Program p = lower(g);
  ProgramStats s = program_stats(p, {{"x", {3, 5}}}, {});
  EXPECT_EQ(s.blocks, 2);
  EXPECT_EQ(s.loops, 4);
  EXPECT_EQ(s.temporaries, 1);
  EXPECT_EQ(s.temporary_bytes, 3 * 5 * 8);
  ProgramStats t = program_stats(optimize(p), {{"x", {3, 5}}}, {});
  EXPECT_EQ(t.blocks, 1);
  EXPECT_EQ(t.temporaries, 0);
  EXPECT_THROW(program_stats(p, {}, {}), Error);
}

}  // namespace
}  // namespace uops
