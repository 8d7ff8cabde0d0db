#include "backends/codegen/zero_fill.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/binding.h"
#include "uops/ir/printer.h"
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

// conv2d's input gradient scatters sums into dx, and matmul's accumulates db = a^T dc over a's
// rows: both start from the program's zero, which no block of theirs writes. The C kernel's entry
// writes those zeros itself, as blocks in front of their first toucher (with_own_zeros), which the
// planner runs on the kernel's team like any block (the threads wait before dx's tiles add into
// them) and trims around tiles that start from zero (fill_trimming.h: of db's 512 x 512 zeros, the
// 2 rows its tiles of 6 leave over, the rest only where its tiles do not run); run() fills nothing.
// Into outputs of NaN, at 1 and 2 threads (sizes at which the team starts), every element is
// the interpreter's.
TEST(ZeroFill, TheKernelWritesTheZerosItsProgramStartsFrom) {
  Program dx = optimize(gradient(find_op("conv2d").build(DType::f32), {"x"}));
  Program db = optimize(gradient(find_op("matmul").build(DType::f32), {"b"}));
  ASSERT_EQ(zero_fill_of(dx, {"dx"}), std::vector<bool>{true});
  ASSERT_EQ(zero_fill_of(db, {"db"}), std::vector<bool>{true});
  for (const Program* p : {&dx, &db})
    EXPECT_EQ(codegen::needs_zero_fill(codegen::with_own_zeros(*p)),
              std::vector<bool>(p->tensors.size(), false));
  CCompileOptions two;
  two.threads = 2;
  const std::string source = emit_c(dx, two);
  size_t zeros = source.find("/* block 0: zeros of dx */"), tiles = source.find("/* block 1:");
  ASSERT_NE(zeros, std::string::npos) << source;
  EXPECT_NE(source.find("#pragma omp barrier", zeros), std::string::npos) << source;
  EXPECT_LT(source.find("#pragma omp barrier", zeros), tiles) << source;

  // db's zeros at 512 x 512: what the pieces fill_trimming leaves write where the tiles run.
  Program planned = plan_cpu(codegen::with_own_zeros(db), {});
  TensorMap big =
      testing::random_inputs(db, {{"a", {512, 512}}, {"b", {512, 512}}, {"dc", {512, 512}}}, 3);
  Binding bound = bind(planned, big, {});
  IndexEnv env = bound.env();
  int64_t written = 0, pieces = 0;
  for (const Block& b : planned.blocks) {
    if (b.origin != "zeros of db") continue;
    ++pieces;
    if (b.loops[0].plan.fill_unless) continue;
    int64_t n = 1;
    for (const Loop& l : b.loops)
      n *= std::max<int64_t>(evaluate(l.end, env) - evaluate(l.start, env), 0);
    written += n;
  }
  EXPECT_GT(pieces, 1) << print(planned);
  EXPECT_EQ(written, 2 * 512) << print(planned);

  struct Case {
    const Program* p;
    std::map<std::string, std::vector<int64_t>> shapes;
    ParamMap params;
  };
  for (const Case& c : {Case{&dx,
                             {{"x", {8, 8, 8, 32}}, {"w", {32, 3, 3, 32}}, {"dy", {8, 8, 8, 32}}},
                             {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
                        Case{&db, {{"a", {67, 100}}, {"b", {100, 70}}, {"dc", {67, 70}}}, {}}}) {
    TensorMap in = testing::random_inputs(*c.p, c.shapes, 7);
    TensorMap want = interpret(*c.p, in, c.params);
    for (int threads : {1, 2}) {
      CCompileOptions o;
      o.threads = threads;
      TensorMap got = testing::nan_like(want);
      compile_c(*c.p, o)->run_into(in, got, c.params);
      EXPECT_TRUE(testing::same_outputs(want, got, 1e-4))
          << c.p->blocks[0].origin << " " << threads << "T";
    }
  }
}

// The zeros of a scalar (a block of one iteration), and of an output no block touches (a block
// after the last): into outputs of NaN, the C kernel gives the sum and zeros.
TEST(ZeroFill, TheKernelZeroesAScalarAndAnOutputNothingWrites) {
  Graph g;
  g.output("y", g.reduce(ReduceOp::sum, {0}, g.input("x", 1, DType::f32)));
  Program p = lower(g);
  for (Loop& l : p.blocks[0].loops)
    for (Stmt& s : l.stmts)
      if (s.tensor == p.find_tensor("y")) s.kind = StmtKind::accumulate;
  p.tensors.push_back({"untouched", DType::f32, {idx::constant(3)}, Role::output});
  ASSERT_EQ(zero_fill_of(p, {"y", "untouched"}), (std::vector<bool>{true, true}));
  Program own = codegen::with_own_zeros(p);
  ASSERT_EQ(own.blocks.size(), 3u) << print(own);
  EXPECT_EQ(own.blocks[0].origin, "zeros of y");
  EXPECT_EQ(own.blocks[2].origin, "zeros of untouched");
  EXPECT_EQ(codegen::needs_zero_fill(own), std::vector<bool>(p.tensors.size(), false));

  Tensor x(DType::f32, {4});
  for (int64_t i = 0; i < 4; ++i) x.set(i, double(i) + 1.0);
  TensorMap out = testing::nan_like(interpret(p, {{"x", x}}));
  compile_c(p, {})->run_into({{"x", x}}, out);
  EXPECT_EQ(out.at("y").get(0), 10.0);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(out.at("untouched").get(i), 0.0);
}

}  // namespace
}  // namespace uops
