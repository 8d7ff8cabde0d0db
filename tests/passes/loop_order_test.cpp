// Loop ordering (uops/passes/loop_order.h): which reductions become accumulations into their
// output and get reordered, which must not, and that the result is bit for bit the original's.
#include "uops/passes/loop_order.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/random_graph.h"
#include "uops/ir.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/variable_substitution.h"

namespace uops {

using namespace ir;

namespace {

// Long sums of values of mixed sign and magnitude: any change of order shows in the last bits.
Tensor mixed(std::vector<int64_t> shape) {
  Tensor x(DType::f32, shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double((i * 7919) % 1000 - 500) / (1 + i % 7));
  return x;
}

void expect_bitwise(const Program& p, const Program& q, const TensorMap& in) {
  ASSERT_TRUE(verify(q).empty()) << print(q);
  TensorMap a = interpret(p, in), b = interpret(q, in);
  for (auto& [name, t] : a)
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.get(i), b.at(name).get(i)) << name << i;
}

// y[0, j] = sum over i of x[i, j]: the reduced loop is innermost and reads with stride x.1.
Program column_sums(ReduceOp op = ReduceOp::sum) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(op, {0}, x));
  return lower(g);
}

const TensorMap& column_input() {
  static const TensorMap in{{"x", mixed({300, 17})}};
  return in;
}

TEST(LoopOrder, ColumnSumsAccumulateRowByRow) {
  Program p = column_sums(), q = order_loops(p);
  ASSERT_EQ(q.blocks.size(), 2u) << print(q);
  EXPECT_EQ(print_block(q, q.blocks[0], 0),
            "block 0: reduce sum\n"
            "  for v2 in [0, x.1):\n"
            "    y?[0, v2] = 0\n");
  EXPECT_EQ(print_block(q, q.blocks[1], 1),
            "block 1: reduce sum\n"
            "  for v1 in [0, x.0):\n"
            "    for v0 in [0, x.1):\n"
            "      y?[0, v0] sum= x?[v1, v0]\n")
      << print(p);
  expect_bitwise(p, q, column_input());
}

TEST(LoopOrder, MatmulIsBitExact) {
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
                     g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  Program p = lower(g), q = optimize(p, {true});
  expect_bitwise(p, q, {{"a", mixed({7, 400})}, {"b", mixed({400, 9})}});
}

// Row sums already read with stride 1 in their reduced innermost loop; a backend may run it as a
// SIMD reduction, and making the row loop innermost would read x with stride x.1.
TEST(LoopOrder, StrideOneReductionStays) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(ReduceOp::sum, {1}, x));
  Program p = lower(g);
  EXPECT_EQ(print(order_loops(p)), print(p));
}

// A product has no carried form that accumulates into y: its block stays.
TEST(LoopOrder, ProductsStay) {
  Program p = column_sums(ReduceOp::prod);
  EXPECT_EQ(print(order_loops(p)), print(p));
}

// Values where the order of a max or min shows: NaN (which `v > acc` never takes), signed zeros
// (of two equal ones the first stays), infinities and ties.
TensorMap awkward_columns() {
  Tensor x(DType::f32, {300, 17});
  const double special[] = {std::nan(""), -0.0, 0.0, INFINITY, -INFINITY, 3.0, -3.0};
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, i % 5 == 0 ? special[(i / 5) % 7] : double((i * 7919) % 23 - 11));
  return {{"x", x}};
}

void expect_same_bits(const Program& p, const Program& q, const TensorMap& in) {
  ASSERT_TRUE(verify(q).empty()) << print(q);
  TensorMap a = interpret(p, in), b = interpret(q, in);
  for (auto& [name, t] : a)
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double u = t.get(i), v = b.at(name).get(i);
      ASSERT_TRUE((std::isnan(u) && std::isnan(v)) ||
                  (u == v && std::signbit(u) == std::signbit(v)))
          << name << i << ": " << u << " against " << v;
    }
}

// A max or min accumulates into y as well, after a block that sets y to the scalar's identity:
// each element sees the identity, then its values in their order, as the scalar did.
TEST(LoopOrder, ColumnMaximaAccumulateAfterTheIdentity) {
  for (ReduceOp op : {ReduceOp::max, ReduceOp::min}) {
    Program p = column_sums(op), q = order_loops(p);
    const std::string name = op_name(op), identity = op == ReduceOp::max ? "-inf" : "inf";
    EXPECT_EQ(print_block(q, q.blocks[0], 0) + print_block(q, q.blocks[1], 1),
              "block 0: reduce " + name + "\n  for v2 in [0, x.1):\n    y?[0, v2] = " + identity +
                  "\n"
                  "block 1: reduce " +
                  name +
                  "\n"
                  "  for v1 in [0, x.0):\n"
                  "    for v0 in [0, x.1):\n"
                  "      y?[0, v0] " +
                  name + "= x?[v1, v0]\n")
        << print(q);
    expect_same_bits(p, q, awkward_columns());
    expect_same_bits(p, q, column_input());
  }
}

// y written before the block does not matter to a max (the identity overwrites it, as the
// original store did): both copies convert, and the result is the original's.
TEST(LoopOrder, MaximumIntoAnOutputWrittenBeforeConverts) {
  Program p = column_sums(ReduceOp::max);
  p.blocks.push_back(p.blocks[0]);
  Program q = order_loops(p);
  EXPECT_EQ(q.blocks.size(), 4u) << print(q);
  expect_same_bits(p, q, awkward_columns());
}

// A mean stores more than its sum (y = c / n): y, zeroed by a block before it, accumulates the
// sum row by row, and a block after it divides, the same operations on the same values.
TEST(LoopOrder, StoreOfMoreThanTheSumDividesAfterwards) {
  Program p = column_sums(ReduceOp::mean), q = order_loops(p);
  EXPECT_EQ(print(q),
            "tensor x f32 [x.0, x.1] input\n"
            "tensor y f32 [1, x.1] output\n"
            "block 0: reduce mean\n"
            "  for v2 in [0, x.1):\n"
            "    y?[0, v2] = 0\n"
            "block 1: reduce mean\n"
            "  for v1 in [0, x.0):\n"
            "    for v0 in [0, x.1):\n"
            "      y?[0, v0] sum= x?[v1, v0]\n"
            "block 2: reduce mean\n"
            "  for v3 in [0, x.1):\n"
            "    y?[0, v3] = (y?[0, v3] / idx(x.0))\n");
  expect_bitwise(p, q, column_input());
}

// A second copy of the block finds y already written: its zeros overwrite it (as the original
// store did) before it adds into y, so both copies convert and the sums do not double.
TEST(LoopOrder, SumIntoAnOutputWrittenBeforeConverts) {
  Program p = column_sums();
  p.blocks.push_back(p.blocks[0]);
  Program q = order_loops(p);
  EXPECT_EQ(q.blocks.size(), 4u) << print(q);
  for (const Block& b : q.blocks) EXPECT_TRUE(b.loops[0].carried.empty()) << print(q);
  expect_bitwise(p, q, column_input());
}

// y[0, 0] = c for every column keeps the last column's sum; accumulating would add them all.
TEST(LoopOrder, StoreThatDoesNotTellIterationsApartStays) {
  Program p = column_sums();
  for (auto& l : p.blocks[0].loops)
    for (auto& s : l.stmts)
      if (s.kind == StmtKind::assign) s.index = {idx::constant(0), idx::constant(0)};
  ASSERT_TRUE(verify(p).empty()) << print(p);
  Program q = order_loops(p);
  EXPECT_EQ(print(q), print(p));
  expect_bitwise(p, q, column_input());
}

// The reduction reads y itself: accumulating would change what it reads.
TEST(LoopOrder, OutputReadInTheBlockStays) {
  Program p = column_sums();
  Block& b = p.blocks[0];
  const Stmt store = b.loops[0].stmts.back();
  Stmt& reduce = b.loops.back().stmts.back();
  reduce.value = val::binary(BinaryOp::add, reduce.value, val::load(store.tensor, store.index));
  ASSERT_TRUE(verify(p).empty()) << print(p);
  EXPECT_EQ(print(order_loops(p)), print(p));
}

// Accumulations already in place reorder only when every written tensor is accessed at one
// index: here z reads y at the previous row, which reordering would make see other values.
TEST(LoopOrder, ReadOfAnotherElementBlocksReordering) {
  Program p = column_sums();
  Program q = order_loops(p);
  Block unordered = q.blocks[1];  // after the zeros
  std::swap(unordered.loops[0], unordered.loops[1]);
  std::swap(unordered.loops[0].stmts, unordered.loops[1].stmts);
  p.blocks = {unordered};
  ASSERT_TRUE(verify(p).empty()) << print(p);
  ASSERT_NE(print(order_loops(p)), print(p));  // alone, it would move back
  Stmt read = p.blocks[0].loops.back().stmts[0];
  int z = int(p.tensors.size());
  p.tensors.push_back({"z", DType::f32, p.tensors[read.tensor].shape, Role::output});
  read.value = val::load(read.tensor, {read.index[0], idx::sub(read.index[1], idx::constant(1))});
  read.tensor = z;
  p.blocks[0].loops.back().stmts.push_back(read);
  ASSERT_TRUE(verify(p).empty()) << print(p);
  EXPECT_EQ(print(order_loops(p)), print(p));
}

// y[n, p, o] = sum over i of x[n, p, i] * w[o, i] (conv2d's shape: batch, pixels, channels).
// The output loop o can only go innermost if w is read with stride 1 along it: w is read once per
// n and p, so a copy laid out [i][o] pays, and the block runs n, p, i, o on the copy, bit for bit.
TEST(LoopOrder, StridedOperandReadManyTimesIsPacked) {
  Graph g;
  Node x = g.input("x", 3, DType::f32), w = g.input("w", 2, DType::f32);
  std::vector<Node> from = {x, w};
  Node xw = g.binary(BinaryOp::mul,
                     g.reindex(x, {"dA0", "dA1", "dB0", "dA2[=dB1]"}, {"i0", "i1", "i3"}, from),
                     g.reindex(w, {"dA0", "dA1", "dB0", "dA2"}, {"i2", "i3"}, from));
  g.output("y", g.reindex(g.reduce(ReduceOp::sum, {3}, xw), {"dA0", "dA1", "dA2"},
                          {"i0", "i1", "i2", "0"}));
  Program p = lower(g), q = optimize(p, {true});
  ASSERT_EQ(q.blocks.size(), 3u) << print(q);  // the packing, y's zeros, the product
  EXPECT_EQ(print_block(q, q.blocks[0], 0).substr(0, 17), "block 0: pack w\n ") << print(q);
  int packed = q.find_tensor("w_packed");
  ASSERT_GE(packed, 0) << print(q);
  EXPECT_EQ(q.tensors[packed].role, Role::temporary);
  const Block& b = q.blocks[2];
  EXPECT_EQ(b.loops.back().stmts[0].kind, StmtKind::accumulate) << print(q);
  bool read = false;
  for_each_load(b.loops.back().stmts[0].value, [&](const ValueNode& n) {
    if (n.tensor != packed) return;
    read = true;
    EXPECT_EQ(n.index.back()->var, b.loops.back().var) << print(q);
  });
  EXPECT_TRUE(read) << print(q);
  expect_bitwise(p, q, {{"x", mixed({3, 5, 200})}, {"w", mixed({9, 200})}});
}

// A scatter through a window (the input gradients of depthwise conv2d and avgpool2d: dx?[n, oh *
// s - p + kh, ow * s - p + kw, c] sum= ...) pins only n and c, the variables its index holds
// alone on an axis. The channels' loop still moves innermost, where the stores walk with stride
// 1: two iterations that add into one element share n and c, and the loops they differ in keep
// their order. Bit for bit. (Before, any index variable the store did not pin kept the order:
// depthwise conv2d's dx ran 64 ms at 8 x 56 x 56 x 128, 2.3 ms reordered.)
TEST(LoopOrder, AWindowsScatterRunsItsChannelsInnermost) {
  struct Case {
    const char* op;
    TensorMap in;
    ParamMap params;
  };
  for (const Case& c :
       {Case{"depthwise_conv2d",
             {{"x", mixed({2, 7, 6, 3})}, {"w", mixed({3, 3, 3})}, {"dy", mixed({2, 4, 3, 3})}},
             {{"stride", 2}, {"pad", 1}}},
        Case{"avgpool2d",
             {{"x", mixed({2, 7, 6, 3})}, {"dy", mixed({2, 3, 3, 3})}},
             {{"k", 2}, {"stride", 2}}}}) {
    Program p = gradient(find_op(c.op).build(DType::f32), {"x"}), q = optimize(p, {true});
    const int dx = q.find_tensor("dx");
    int scatters = 0;
    for (auto& b : q.blocks)
      for (auto& s : b.loops.back().stmts)
        if (s.tensor == dx && s.kind == StmtKind::accumulate) {
          ++scatters;
          EXPECT_EQ(s.index.back()->var, b.loops.back().var) << c.op << "\n" << print(q);
        }
    EXPECT_EQ(scatters, 1) << c.op << "\n" << print(q);
    TensorMap want = interpret(p, c.in, c.params), got = interpret(q, c.in, c.params);
    EXPECT_EQ(want.at("dx").bytes, got.at("dx").bytes) << c.op;
  }
}

// y[n, o] = sum over i of x[n, i] * w[o, i] (a linear layer without bias): w is reused only
// across the batch, often of 1, where a copy of w would cost more than the product. The
// reduction stays innermost, where it reads both with stride 1.
TEST(LoopOrder, OperandReusedAcrossOneLoopIsNotPacked) {
  Graph g;
  Node x = g.input("x", 2, DType::f32), w = g.input("w", 2, DType::f32);
  Node xw = g.binary(BinaryOp::mul, g.reindex(x, {"dA0", "dB0", "dA1[=dB1]"}, {"i0", "i2"}, {x, w}),
                     g.reindex(w, {"dA0", "dB0", "dA1"}, {"i1", "i2"}, {x, w}));
  g.output("y", g.reindex(g.reduce(ReduceOp::sum, {2}, xw), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  Program p = lower(g), q = optimize(p);
  EXPECT_LT(q.find_tensor("w_packed"), 0) << print(q);
  ASSERT_EQ(q.blocks.size(), 1u) << print(q);
  EXPECT_EQ(q.blocks[0].loops[1].carried.size(), 1u) << print(q);
  expect_bitwise(p, q, {{"x", mixed({7, 300})}, {"w", mixed({9, 300})}});
}

// y[i, j] = sum over k of a[i, j, k] * b[j, k]: j innermost would read a with stride a.2, and a
// is read once in all, so no copy of it pays: the reduction stays innermost.
TEST(LoopOrder, StridedOperandReadOnceIsNotPacked) {
  Graph g;
  Node a = g.input("a", 3, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab =
      g.binary(BinaryOp::mul, a, g.reindex(b, {"dA0", "dA1", "dA2[=dB1]"}, {"i1", "i2"}, {a, b}));
  g.output("y", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  Program p = lower(g), q = optimize(p);
  EXPECT_LT(q.find_tensor("a_packed"), 0) << print(q);
  EXPECT_LT(q.find_tensor("b_packed"), 0) << print(q);
  expect_bitwise(p, q, {{"a", mixed({3, 5, 40})}, {"b", mixed({5, 40})}});
}

// y[b, a] = x[a] for a in [0, x.0), b in [0, w.0 / $p): stride 1 wants a innermost, but b's
// bound may raise (§3.4). With x empty and $p = 0 the original evaluates it nowhere; moved
// outside the empty loop it would raise. So the order stays.
TEST(LoopOrder, ABoundThatMayRaiseStaysUnderTheLoopsAboveIt) {
  Program p;
  p.params = {"p"};
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"w", DType::f32, {idx::dim(1, 0)}, Role::input});
  p.tensors.push_back({"y", DType::f32, {idx::dim(1, 0), idx::dim(0, 0)}, Role::output});
  Loop a, b;
  a.var = p.num_vars++;
  a.start = idx::constant(0);
  a.end = idx::dim(0, 0);
  b.var = p.num_vars++;
  b.start = idx::constant(0);
  b.end = idx::floordiv(idx::dim(1, 0), idx::param("p"));
  Stmt store;
  store.tensor = 2;
  store.index = {idx::var(b.var), idx::var(a.var)};
  store.value = val::load(0, {idx::var(a.var)});
  b.stmts.push_back(store);
  p.blocks.push_back({{a, b}, "raising bound"});
  ASSERT_TRUE(verify(p).empty()) << print(p);
  Program q = order_loops(p);
  EXPECT_EQ(print(q), print(p));
  TensorMap empty{{"x", Tensor(DType::f32, {0})}, {"w", Tensor(DType::f32, {3})}};
  EXPECT_NO_THROW(interpret(q, empty, {{"p", 0}}));
  TensorMap full{{"x", mixed({4})}, {"w", Tensor(DType::f32, {3})}};
  TensorMap want = interpret(p, full, {{"p", 1}}), got = interpret(q, full, {{"p", 1}});
  EXPECT_EQ(want.at("y").bytes, got.at("y").bytes);
}

// matmul's da = dc b^T, fused into one block that sums into da, becomes dot products that store
// their sums: only where da is zero where the block starts. A block just before it that sets da
// to 1 keeps the sums adding to that 1 (the dot products would drop it).
TEST(LoopOrder, DotProductsOnlyIntoZeros) {
  Program p = gradient(find_op("matmul").build(DType::f32), {"a"});
  for (Program before; !equal(before, p);) {
    before = p;
    p = eliminate_dead_code(substitute_variables(fuse_loops(p)));
  }
  ASSERT_EQ(p.blocks.size(), 1u) << print(p);
  const int da = p.find_tensor("da");
  {
    Program plain = order_loops(p);  // the form the test guards: dot products into da
    ASSERT_EQ(plain.blocks.size(), 1u) << print(plain);
    EXPECT_FALSE(plain.blocks[0].loops[1].carried.empty()) << print(plain);
  }
  Block ones;
  ones.origin = "ones";
  for (int a = 0; a < 2; ++a)
    ones.loops.push_back(Loop{p.num_vars++, idx::constant(0), p.tensors[da].shape[size_t(a)]});
  Stmt s;
  s.tensor = da;
  s.index = {idx::var(ones.loops[0].var), idx::var(ones.loops[1].var)};
  s.value = val::constant(1.0);
  ones.loops[1].stmts.push_back(s);
  p.blocks.insert(p.blocks.begin(), ones);
  ASSERT_TRUE(verify(p).empty()) << print(p);
  Program q = order_loops(p);
  for (auto& l : q.blocks.back().loops) EXPECT_TRUE(l.carried.empty()) << print(q);
  expect_bitwise(p, q, {{"dc", mixed({5, 40})}, {"b", mixed({7, 40})}});
}

// The random-program differential test (differential_test.cpp) only judges this pass if some of
// its programs are reordered.
TEST(LoopOrder, RandomProgramsExerciseIt) {
  int changed = 0, packed = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    RandomGraphOptions o;
    o.max_nodes = 6 + int(seed % 11);
    o.contractions = seed % 2 == 1;
    Program p = lower(random_case(seed, o).graph), q = order_loops(p);
    changed += print(q) != print(p);
    // Operands worth packing appear once fusion has put a contraction in one block.
    if (o.contractions)
      for (auto& b : optimize(p).blocks) packed += b.origin.rfind("pack ", 0) == 0;
  }
  EXPECT_GT(changed, 20);  // 2000 seeds reorder about 50 programs
  EXPECT_GT(packed, 20);
}

}  // namespace
}  // namespace uops
