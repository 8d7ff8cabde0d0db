// Loop fusion (passes/loop_fusion): which blocks fuse, which must not, and that fused programs
// compute what the unfused ones did.
#include "uops/passes/loop_fusion.h"

#include <gtest/gtest.h>

#include "support/loop_programs.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;
using namespace testing;

namespace {

TEST(Fusion, ShiftedReadIsNotFused) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  Node e = g.unary(UnaryOp::exp, x);
  g.output("y", g.reindex(e, {"dA0"}, {"i0 + 1"}, {e}, 0.5));
  Program p = lower(g);
  Program q = fuse_loops(p);
  EXPECT_EQ(q.blocks.size(), 2u);
  // The same index does fuse.
  Graph h;
  Node hx = h.input("x", 1, DType::f32);
  Node he = h.unary(UnaryOp::exp, hx);
  h.output("y", h.reindex(he, {"dA0"}, {"i0"}, {he}));
  EXPECT_EQ(fuse_loops(lower(h)).blocks.size(), 1u);
  expect_same(p, optimize(p, {true}), {{"x", ramp(DType::f32, {5})}});
}

// t[0] = x[i] for i in [0, 2), then y[i] = t[0]: y is x[1] twice. Fused, y[0] would read t
// before the second store. Only a loop of one iteration orders nothing; this one has two.
TEST(Fusion, AStoreThatPinsNoLoopOfTwoIterationsStaysApart) {
  Program p;
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"t", DType::f32, {idx::constant(1)}, Role::temporary});
  p.tensors.push_back({"y", DType::f32, {idx::constant(2)}, Role::output});
  for (int b = 0; b < 2; ++b) {
    Loop l;
    l.var = p.num_vars++;
    l.start = idx::constant(0);
    l.end = idx::constant(2);
    Index i = idx::var(l.var);
    l.stmts.push_back(b == 0 ? assign(1, {idx::constant(0)}, val::load(0, {i}))
                             : assign(2, {i}, val::load(1, {idx::constant(0)})));
    p.blocks.push_back({{l}, b == 0 ? "last x" : "broadcast"});
  }
  ASSERT_TRUE(verify(p).empty()) << verify(p).front() << print(p);
  EXPECT_EQ(fuse_loops(p).blocks.size(), 2u) << print(fuse_loops(p));
  TensorMap in{{"x", ramp(DType::f32, {2})}};
  expect_same(p, fuse_loops(p), in);
  expect_same(p, optimize(p, {true}), in);
}

// docs/design.md §3.5: two reductions of x[i,j,k], one over k and one over j.
TEST(Fusion, PivotsKeepTheirDepth) {
  Graph g;
  Node x = g.input("x", 3, DType::f64);
  g.output("y", g.reduce(ReduceOp::sum, {2}, x));
  g.output("z", g.reduce(ReduceOp::sum, {1}, x));
  Program p = lower(g);
  EXPECT_EQ(fuse_loops(p).blocks.size(), 2u) << print(fuse_loops(p));
  TensorMap in{{"x", ramp(DType::f64, {2, 3, 4})}};
  expect_same(p, optimize(p, {true}), in);

  // Accumulating straight into the tensors, the same pair fuses, j and k swapped for B.
  Program acc = p;
  for (auto& b : acc.blocks) {
    std::vector<Stmt> inner;
    const Stmt store = b.loops[1].stmts.back();
    for (auto& l : b.loops) {
      for (auto& s : l.stmts)
        if (s.kind == StmtKind::reduce)
          inner.push_back(accumulate(store.tensor, store.index, s.value));
      l.stmts.clear();
      l.carried.clear();
    }
    b.loops.back().stmts = inner;
  }
  ASSERT_TRUE(verify(acc).empty()) << print(acc);
  Program fused = fuse_loops(acc);
  ASSERT_EQ(fused.blocks.size(), 1u) << print(fused);
  EXPECT_TRUE(verify(fused).empty());
  expect_same(acc, fused, in);
  expect_same(p, fused, in);
}

// A zeroing block between A and B: B needs it, so B cannot move up; A moves down instead.
TEST(Fusion, MergeRightPastAZeroingBlock) {
  Program p = vector_program({{"y", Role::output}, {"acc", Role::output}});
  p.blocks.push_back(
      vector_block(p, "A", {assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()})))}));
  // Its range differs, so that it fuses with neither.
  p.blocks.push_back(vector_block(p, "zero", {assign(2, {V()}, val::constant(0))}));
  p.blocks.back().loops[0].end = idx::add(idx::dim(0, 0), idx::constant(1));
  p.blocks.push_back(vector_block(p, "B", {accumulate(2, {V()}, val::load(1, {V()}))}));
  ASSERT_TRUE(verify(p).empty());
  Program q = fuse_loops(p);
  ASSERT_EQ(q.blocks.size(), 2u) << print(q);
  EXPECT_EQ(q.blocks[0].origin, "zero");
  EXPECT_EQ(q.blocks[1].origin, "A + B");
  expect_same(p, q, {{"x", ramp(DType::f32, {6})}});

  // When the middle block reads what A writes, neither direction is legal.
  Program r = vector_program({{"y", Role::output}, {"acc", Role::output}});
  r.blocks.push_back(vector_block(r, "A", {assign(1, {V()}, val::load(0, {V()}))}));
  r.blocks.push_back(
      vector_block(r, "mid", {assign(2, {V()}, val::load(1, {idx::sub(idx::dim(0, 0), V())}))}));
  r.blocks.push_back(vector_block(r, "B", {accumulate(2, {V()}, val::load(1, {V()}))}));
  Program s = fuse_loops(r);
  EXPECT_EQ(s.blocks[0].origin, "A") << print(s);  // mid and B may fuse; A joins neither
  expect_same(r, s, {{"x", ramp(DType::f32, {6})}});
}

}  // namespace
}  // namespace uops
