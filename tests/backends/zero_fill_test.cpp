#include "backends/codegen/zero_fill.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

std::vector<bool> zero_fill_of(const Program& p, const std::vector<std::string>& names) {
  std::vector<bool> all = codegen::needs_zero_fill(p), out;
  for (auto& n : names) out.push_back(all[p.find_tensor(n)]);
  return out;
}

TEST(ZeroFill, ElementwiseOutputIsWrittenInFull) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, x));
  EXPECT_EQ(zero_fill_of(lower(g), {"x", "y"}), (std::vector<bool>{false, false}));
}

TEST(ZeroFill, PaddedAndReducedOutputsKeepTheirZero) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  // A shifted write does not cover the tensor; an accumulation reads what is there.
  g.output("sum", g.reduce(ReduceOp::sum, {1}, x));
  Program p = lower(g);
  EXPECT_EQ(zero_fill_of(p, {"sum"}), std::vector<bool>{false});
  p.blocks[0].loops[0].stmts[0].index[0] =
      idx::add(p.blocks[0].loops[0].stmts[0].index[0], idx::constant(1));
  EXPECT_EQ(zero_fill_of(p, {"sum"}), std::vector<bool>{true});
  p = lower(g);
  p.blocks[0].loops[0].stmts[0].kind = StmtKind::accumulate;
  EXPECT_EQ(zero_fill_of(p, {"sum"}), std::vector<bool>{true});
}

// Sums accumulated into their outputs (matmul, conv2d, the pools) start from zeros a block of the
// program writes (loop_order.h), so no backend fills them again.
TEST(ZeroFill, AccumulationsStartFromTheirOwnZeros) {
  for (const char* name : {"matmul", "conv2d", "avgpool2d", "depthwise_conv2d", "maxpool2d"}) {
    const OpDef& op = find_op(name);
    Program p = optimize(forward_program(op, DType::f32));
    std::vector<bool> zero = codegen::needs_zero_fill(p);
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      if (p.tensors[t].role != Role::output) continue;
      EXPECT_FALSE(zero[t]) << name << " " << p.tensors[t].name;
    }
  }
}

TEST(ZeroFill, ALoopOverAnotherExtentKeepsTheZero) {
  // y[i] = x[i, j] for every j: if the j range is empty, y is never written and must read 0.
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  g.output("y", g.reindex(x, {"dA0"}, {"i0", "0"}));
  Program p = lower(g);
  EXPECT_EQ(zero_fill_of(p, {"y"}), std::vector<bool>{false});
  Loop extra;
  extra.var = p.num_vars++;
  extra.start = idx::constant(0);
  extra.end = idx::dim(p.find_tensor("x"), 1);
  std::swap(extra.stmts, p.blocks[0].loops.back().stmts);
  p.blocks[0].loops.push_back(extra);
  EXPECT_EQ(zero_fill_of(p, {"y"}), std::vector<bool>{true});

  Tensor in(DType::f64, {2, 0});
  auto out = make_backend("c", p)->run({{"x", in}});
  for (int64_t i = 0; i < 2; ++i) EXPECT_EQ(out.at("y").get(i), 0.0);
}

// y = -x over [0, n - 1): y[n - 1] is never written and keeps its zero, so y is zero-filled; the
// C backend's caller-owned output starts as NaN, so a skipped fill would show.
TEST(ZeroFill, ALoopShorterThanItsAxisKeepsTheZero) {
  Graph g;
  g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
  Program p = lower(g);
  p.blocks[0].loops[0].end = idx::sub(p.blocks[0].loops[0].end, idx::constant(1));
  EXPECT_EQ(zero_fill_of(p, {"y"}), std::vector<bool>{true});
  Tensor x(DType::f32, {5});
  for (int64_t i = 0; i < 5; ++i) x.set(i, double(i) + 1.0);
  TensorMap out{{"y", Tensor(DType::f32, {5})}};
  std::fill(out["y"].bytes.begin(), out["y"].bytes.end(), 0xff);
  make_backend("c", p)->run_into({{"x", x}}, out);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(out.at("y").get(i), -double(i) - 1.0);
  EXPECT_EQ(out.at("y").get(4), 0.0);
}

// softmax's second block stores y[i, j] = exp(x[i, j] - max[i]) and then reads that element into
// the row's sum: the read sees the store, so y is not zeroed (it was, on every run: issue 30).
// Read before the store, or at another element, it would see the zero.
TEST(ZeroFill, AReadOfWhatTheSameIterationStoredNeedsNoZero) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f32));
  ASSERT_EQ(zero_fill_of(p, {"y"}), std::vector<bool>{false});

  Tensor x(DType::f32, {3, 4});
  for (int64_t i = 0; i < 12; ++i) x.set(i, double(i % 5) - 2.0);
  TensorMap out{{"y", Tensor(DType::f32, {3, 4})}};
  std::fill(out["y"].bytes.begin(), out["y"].bytes.end(), 0xff);  // NaN: a missed store shows
  make_backend("c", p)->run_into({{"x", x}}, out);
  TensorMap want = interpret(p, {{"x", x}});
  for (int64_t i = 0; i < 12; ++i) EXPECT_NEAR(out.at("y").get(i), want.at("y").get(i), 1e-6);

  // The loop whose statements store y and then read it into the row's sum.
  int y = p.find_tensor("y");
  auto stores_then_sums = [y](const Loop& l) {
    return l.stmts.size() == 2 && l.stmts[0].kind == StmtKind::assign && l.stmts[0].tensor == y &&
           l.stmts[1].kind == StmtKind::reduce && l.stmts[1].value->kind == ValueKind::Load &&
           l.stmts[1].value->tensor == y;
  };
  Program swapped = p, shifted = p;
  int found = 0;
  for (Block& b : swapped.blocks)
    for (Loop& l : b.loops)
      if (stores_then_sums(l)) std::swap(l.stmts[0], l.stmts[1]), ++found;
  ASSERT_EQ(found, 1);
  EXPECT_EQ(zero_fill_of(swapped, {"y"}), std::vector<bool>{true});
  for (Block& b : shifted.blocks)
    for (Loop& l : b.loops)
      if (stores_then_sums(l)) {
        std::vector<Index> i = l.stmts[1].value->index;
        i.back() = idx::add(i.back(), idx::constant(1));
        l.stmts[1].value = val::load(y, i);
      }
  EXPECT_EQ(zero_fill_of(shifted, {"y"}), std::vector<bool>{true});
}

// conv2d's input gradient scatters sums into dx, which starts from the program's zero. The C
// kernel writes those zeros itself, in front of its first block, in a share of its one team (an
// `omp for` that waits at its end); run() fills nothing. Into an output of NaN, at 1 and 2
// threads (sizes at which the team starts), every element is the interpreter's.
TEST(ZeroFill, TheKernelWritesTheZerosItsProgramStartsFrom) {
  Program p = optimize(gradient(find_op("conv2d").build(DType::f32), {"x"}));
  ASSERT_EQ(zero_fill_of(p, {"dx"}), std::vector<bool>{true});
  // No `nowait`: the threads wait for the zeros before the tiles of block 0 add into them.
  const std::string fill =
      "/* the zeros dx starts from */\n#ifdef _OPENMP\n#pragma omp for schedule(static)\n#endif\n";
  CCompileOptions two;
  two.threads = 2;
  std::string entry = emit_c(p, two);
  size_t at = entry.find(fill);
  ASSERT_NE(at, std::string::npos) << entry;
  EXPECT_LT(at, entry.find("/* block 0")) << entry;

  ParamMap params = {{"stride", 1}, {"pad", 1}, {"dilation", 1}};
  TensorMap in = testing::random_inputs(
      p, {{"x", {8, 8, 8, 32}}, {"w", {32, 3, 3, 32}}, {"dy", {8, 8, 8, 32}}}, 7);
  TensorMap want = interpret(p, in, params);
  for (int threads : {1, 2}) {
    CCompileOptions o;
    o.threads = threads;
    TensorMap got = testing::nan_like(want);
    compile_c(p, o)->run_into(in, got, params);
    EXPECT_TRUE(testing::same_outputs(want, got, 1e-4)) << threads << "T";
  }
}

}  // namespace
}  // namespace uops
