// tile_dots (dot_tiling.h): the row reductions it splits off a contraction's scores, and those it
// must leave where they are. The random programs of differential_test.cpp check the tiling
// itself.
#include "uops/passes/dot_tiling.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <utility>
#include <vector>

#include "support/compare.h"
#include "support/example_graphs.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/passes/parallel_loops.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

// s[b, i, j] = scale * sum over d of q[b, i, d] * k[b, j, d], then a reduction of s over j
// (attention's scores and their row maximum), fused by optimize() into one block whose loop i
// carries the reduction.
Graph scores_then(ReduceOp op, bool softmax) {
  Graph g;
  Node q = g.input("q", 3, DType::f32), k = g.input("k", 3, DType::f32);
  Node s = testing::attention_scores(g, q, k);
  s = g.binary(BinaryOp::mul, s, g.fill(s, 0.125));
  Node r = g.reduce(op, {2}, s);
  g.output("r", r);
  if (softmax) {
    Node e = g.unary(
        UnaryOp::exp,
        g.binary(BinaryOp::sub, s, g.reindex(r, {"dA0", "dA1", "dA2"}, {"i0", "i1", "0"}, {s})));
    g.output("e", e);
  }
  return g;
}

int dot_tiles(const Program& p) {
  int n = 0;
  for (auto& b : p.blocks)
    for (auto& l : b.loops) n += l.carried.size() >= 4;
  return n;
}

// With the scores stored (the softmax reads them), the reduction goes to a block of its own after
// them, and they are tiled: the same bytes as before, every contribution in its order, at sizes
// that leave rows and columns over.
TEST(DotTiling, SplitsARowReductionOffTheScoresItReads) {
  for (ReduceOp op : {ReduceOp::max, ReduceOp::min, ReduceOp::sum})
    for (bool softmax : {false, true}) {
      Program p = optimize(lower(scores_then(op, softmax)));
      ASSERT_EQ(dot_tiles(p), 0) << print(p);
      Program t = tile_dots(p, 2, 3, 2);
      ASSERT_TRUE(verify(t).empty()) << print(t);
      // Without the softmax the scores are never stored: the reduction reads the dot products
      // themselves, and the block stays whole.
      if (!softmax) {
        EXPECT_EQ(print(t), print(p));
        continue;
      }
      EXPECT_GE(dot_tiles(t), 1) << print(t);
      for (auto [b, m, n, d] : std::vector<std::array<int64_t, 4>>{
               {2, 5, 7, 3}, {1, 4, 6, 2}, {3, 1, 2, 5}, {2, 3, 1, 4}}) {
        TensorMap in = testing::random_inputs(p, {{"q", {b, m, d}}, {"k", {b, n, d}}}, 7);
        TensorMap want = interpret(p, in), got = interpret(t, in);
        for (auto& [name, w] : want)
          EXPECT_EQ(w.bytes, got.at(name).bytes) << name << " " << m << "x" << n << "\n"
                                                 << print(t);
      }
    }
}

// Attention-shaped programs as users write them, drawn at random: scores of a batched q kᵀ, an
// epilogue on them (a scale, a bias over the columns, a causal mask, or none), a reduction of the
// rows (max, min, sum or mean), and what reads both (exp(s - r), s * r or s - r); f32 or f64.
// Whatever tile_dots does to each, it must verify and give the same bytes, at random sizes.
TEST(DotTiling, RandomScoresAndRowReductionsMatchExactly) {
  std::mt19937_64 rng(44);
  auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
  int split = 0;
  const int n = 60;
  for (int trial = 0; trial < n; ++trial) {
    Graph g = testing::random_attention_scores(pick);
    Program p = optimize(lower(g));
    Program t = tile_dots(p, 2, 3, 2);
    ASSERT_TRUE(verify(t).empty()) << verify(t)[0] << print(t);
    split += dot_tiles(t) > 0;
    int64_t b = 1 + pick(3), m = 1 + pick(9), nn = 1 + pick(9), d = 1 + pick(20);
    TensorMap in = testing::random_inputs(p, {{"q", {b, m, d}}, {"k", {b, nn, d}}, {"bias", {nn}}},
                                          uint64_t(trial));
    TensorMap want = interpret(p, in), got = interpret(t, in);
    for (auto& [name, w] : want)
      EXPECT_EQ(w.bytes, got.at(name).bytes) << "trial " << trial << "\n" << print(t);
  }
  EXPECT_GE(split, n / 2) << "too few of the programs had their scores tiled";
}

// A linear layer's dot tiles: the loop over blocks of column tiles runs outside the row tiles,
// each block's column tiles inside them, and the kernel keeps its bytes at sizes that leave a
// partial block, rows and columns over, or no whole tile.
TEST(DotTiling, BlocksOfColumnTilesRunOutsideTheRowTiles) {
  Program p = optimize(forward_program(find_op("linear"), DType::f32));
  Program t = tile_dots(p, 2, 3, 2);
  ASSERT_TRUE(verify(t).empty()) << print(t);
  const Block* tiled = nullptr;
  for (auto& b : t.blocks)
    for (auto& l : b.loops)
      if (l.carried.size() >= 4) tiled = &b;
  ASSERT_NE(tiled, nullptr) << print(t);
  ASSERT_EQ(tiled->loops.size(), 4u) << print(t);
  const Loop &blocks = tiled->loops[0], &rows = tiled->loops[1], &cols = tiled->loops[2];
  EXPECT_FALSE(uses_var(rows.start, blocks.var) || uses_var(rows.end, blocks.var)) << print(t);
  EXPECT_TRUE(uses_var(cols.start, blocks.var) && uses_var(cols.end, blocks.var)) << print(t);
  // The blocks are exclusive (a column tile inside a block is an element of the block's tile,
  // ir/parallelism.h): the team takes them collapsed with the row tiles, not the row tiles
  // inside each block, whose work it would judge from one block.
  Program planned = plan_parallel_loops(t, false, true);
  size_t at = size_t(tiled - t.blocks.data());
  EXPECT_EQ(planned.blocks[at].loops[0].plan.collapse, 2) << print(planned);
  EXPECT_NE(planned.blocks[at].loops[0].plan.threads, LoopPlan::Threads::none) << print(planned);
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {4, 12, 5}, {5, 14, 3}, {7, 13, 6}, {2, 3, 4}, {1, 20, 2}, {6, 2, 3}, {3, 19, 1}}) {
    TensorMap in = testing::random_inputs(p, {{"x", {m, k}}, {"w", {n, k}}, {"b", {n}}}, 5);
    EXPECT_EQ(interpret(p, in).at("y").bytes, interpret(t, in).at("y").bytes)
        << m << "x" << n << "x" << k << "\n"
        << print(t);
  }
}

// How the max of overlapping_scores reads the scores.
enum class Overlap {
  none,       // t[o, i, j], where j stored it
  next,       // t[o, i, j + 1], which j + 1 stores: not stored yet when the max reads it
  per_row,    // j stores t[o, i, 0], which every later j stores again
  per_outer,  // t[0, i, j] = score + o, stored again by each iteration of the outer loop o
};

// [o, i, j, k] (o over [0, 2), r[o, i] = the max): j stores the score, then i's max reads it.
// Split off, the max would read the scores after every iteration stored them, where in the
// block it reads each as the iteration leaves it; tile_dots must split only Overlap::none.
Program overlapping_scores(Overlap overlap) {
  Program p;
  Index m = idx::dim(0, 0), n = idx::dim(1, 0), d = idx::dim(0, 1);
  p.tensors.push_back({"a", DType::f32, {m, d}, Role::input});
  p.tensors.push_back({"b", DType::f32, {n, idx::dim(1, 1)}, Role::input});
  p.tensors.push_back(
      {"t", DType::f32, {idx::constant(2), m, idx::add(n, idx::constant(1))}, Role::output});
  p.tensors.push_back({"r", DType::f32, {idx::constant(2), m}, Role::output});
  p.equalities.push_back({idx::dim(1, 1), d});
  Loop o, i, j, k;
  o.var = p.num_vars++, i.var = p.num_vars++, j.var = p.num_vars++, k.var = p.num_vars++;
  o.start = i.start = j.start = k.start = idx::constant(0);
  o.end = idx::constant(2), i.end = m, j.end = n, k.end = d;
  i.carried.push_back({p.num_carried++, ReduceOp::max});
  j.carried.push_back({p.num_carried++, ReduceOp::sum});
  Index vo = idx::var(o.var), vi = idx::var(i.var), vj = idx::var(j.var), vk = idx::var(k.var);
  Stmt dot;
  dot.kind = StmtKind::reduce;
  dot.carried = 1;
  dot.value = val::binary(BinaryOp::mul, val::load(0, {vi, vk}, 0.0, false),
                          val::load(1, {vj, vk}, 0.0, false));
  k.stmts = {dot};
  Stmt store;
  store.tensor = 2;
  store.index = {overlap == Overlap::per_outer ? idx::constant(0) : vo, vi,
                 overlap == Overlap::per_row ? idx::constant(0) : vj};
  store.checked = false;
  store.value = val::carried(1);
  if (overlap == Overlap::per_outer)
    store.value = val::binary(BinaryOp::add, store.value, val::index(vo));
  Stmt row_max;
  row_max.kind = StmtKind::reduce;
  row_max.op = ReduceOp::max;
  row_max.carried = 0;
  Index col = overlap == Overlap::next ? idx::add(vj, idx::constant(1)) : store.index[2];
  row_max.value = val::load(2, {store.index[0], vi, col}, 0.0, false);
  j.stmts = {store, row_max};
  Stmt out;
  out.tensor = 3;
  out.index = {vo, vi};
  out.checked = false;
  out.value = val::carried(0);
  i.stmts = {out};
  p.blocks.push_back({{o, i, j, k}, "scores and a row max"});
  return p;
}

TEST(DotTiling, LeavesARowReductionThatReadsAnotherIterationsScore) {
  for (Overlap overlap : {Overlap::none, Overlap::next, Overlap::per_row, Overlap::per_outer}) {
    Program p = overlapping_scores(overlap);
    ASSERT_TRUE(verify(p).empty()) << print(p);
    Program t = tile_dots(p, 2, 3);
    if (overlap != Overlap::none) {
      EXPECT_EQ(print(t), print(p));
      continue;
    }
    EXPECT_GE(dot_tiles(t), 1) << print(t);
    TensorMap in = testing::random_inputs(p, {{"a", {5, 3}}, {"b", {7, 3}}}, 9);
    TensorMap want = interpret(p, in), got = interpret(t, in);
    for (auto& [name, w] : want) EXPECT_EQ(w.bytes, got.at(name).bytes) << name;
  }
}

}  // namespace
}  // namespace uops
