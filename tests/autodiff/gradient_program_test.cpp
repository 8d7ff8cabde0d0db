// The shape of gradient programs: which inputs they take, their outputs, block order, errors.
#include <gtest/gtest.h>

#include "uops/autodiff/forward_mode.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/ir.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;

namespace {

std::vector<std::string> input_names(const Program& p) {
  std::vector<std::string> names;
  for (int t : p.inputs()) names.push_back(p.tensors[t].name);
  return names;
}

Graph matmul() {
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
                     g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  return g;
}

TEST(GradientProgram, SquareAddsBothUsesIntoOneGradient) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.binary(BinaryOp::mul, x, x));
  Program p = gradient(g, {"x"});
  verify_or_throw(p, "gradient");
  EXPECT_EQ(print(p),
            "tensor x f32 [x.0] input\n"
            "tensor dy f32 [dy.0] input\n"
            "tensor dx f32 [x.0] output\n"
            "tensor t3 f32 [x.0] temp\n"
            "tensor t4 f32 [x.0] temp\n"
            "assert dy.0 == x.0\n"
            "block 0: mul\n"
            "  for v0 in [0, x.0):\n"
            "    t3?[v0] = (dy?[v0] * x?[v0])\n"
            "block 1: mul\n"
            "  for v1 in [0, x.0):\n"
            "    t4?[v1] = (dy?[v1] * x?[v1])\n"
            "block 2: add\n"
            "  for v2 in [0, x.0):\n"
            "    dx?[v2] = (t3?[v2] + t4?[v2])\n");
  // Optimized, the sum is one statement: the contributions are substituted into it.
  Program o = optimize(p);
  EXPECT_EQ(o.blocks.size(), 1u);
  for (auto& t : o.tensors) EXPECT_NE(t.role, Role::temporary) << t.name;
}

// y = x * stop_gradient(x) has x's square for its value, but its gradient and tangent see the
// second factor as a constant: dy * x, not 2 * dy * x. Under a reindex and a reduction too.
TEST(GradientProgram, NoGradientOrTangentGoesThroughStopGradient) {
  Graph g;
  Node x = g.input("x", 2, DType::f64);
  Node stopped = g.stop_gradient(g.reduce(ReduceOp::max, {1}, x));
  Node y = g.binary(BinaryOp::mul, x, g.stop_gradient(x));
  g.output("y", g.binary(BinaryOp::add, y,
                         g.reindex(stopped, {"dA0", "dB1"}, {"i0", "0"}, {stopped, x})));
  Tensor xs(DType::f64, {2, 3}), ones(DType::f64, {2, 3});
  for (int i = 0; i < 6; ++i) {
    xs.set(i, i % 2 ? 0.5 * i : -1.5 * i);
    ones.set(i, 1.0);
  }
  TensorMap value = interpret(lower(g), {{"x", xs}});
  TensorMap grad = interpret(optimize(gradient(g, {"x"})), {{"x", xs}, {"dy", ones}});
  TensorMap tangent = interpret(optimize(lower(jvp(g, {"x"}))), {{"x", xs}, {"tx", ones}});
  const double row_max[2] = {0.5, 2.5};  // of {0, 0.5, -3} and {1.5, -6, 2.5}
  for (int i = 0; i < 6; ++i) {
    double v = xs.get(i);
    EXPECT_EQ(value.at("y").get(i), v * v + row_max[i / 3]) << i;
    EXPECT_EQ(grad.at("dx").get(i), v) << i;
    EXPECT_EQ(tangent.at("ty").get(i), v) << i;
  }
}

TEST(GradientProgram, TakesOnlyTheForwardInputsItReads) {
  Graph g;
  Node x = g.input("x", 2, DType::f32), y = g.input("y", 2, DType::f32);
  g.output("z", g.binary(BinaryOp::add, x, y));
  // add's gradient reads neither x nor y: dx and dy take their shapes from dz.
  Program add = gradient(g, {"x", "y"});
  EXPECT_EQ(input_names(add), (std::vector<std::string>{"dz"}));
  Tensor dz(DType::f32, {2, 3});
  dz.set(4, 5);
  auto out = interpret(add, {{"dz", dz}});
  EXPECT_EQ(out.at("dx").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.at("dy").get(4), 5);

  // da = dc * b^T needs b only; db = a^T * dc needs a only.
  EXPECT_EQ(input_names(gradient(matmul(), {"a"})), (std::vector<std::string>{"b", "dc"}));
  EXPECT_EQ(input_names(gradient(matmul(), {"b"})), (std::vector<std::string>{"a", "dc"}));
  EXPECT_EQ(input_names(gradient(matmul(), {"a", "b"})),
            (std::vector<std::string>{"a", "b", "dc"}));
}

TEST(GradientProgram, KeepsAnUnreadInputWhoseSizeTheGradientNeeds) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(ReduceOp::sum, {1}, x));
  // dx[i, j] = dy[i, 0]: the size of axis 1 is known only from x.
  Program p = gradient(g, {"x"});
  EXPECT_EQ(input_names(p), (std::vector<std::string>{"x", "dy"}));
}

TEST(GradientProgram, ChecksTheShapeOfEachOutputGradient) {
  Program p = gradient(matmul(), {"a", "b"});
  Tensor a(DType::f32, {2, 3}), b(DType::f32, {3, 4}), dc(DType::f32, {2, 5});
  EXPECT_THROW(interpret(p, {{"a", a}, {"b", b}, {"dc", dc}}), Error);
  auto out = interpret(p, {{"a", a}, {"b", b}, {"dc", Tensor(DType::f32, {2, 4})}});
  EXPECT_EQ(out.at("da").shape, a.shape);
  EXPECT_EQ(out.at("db").shape, b.shape);
}

TEST(GradientProgram, TakesAGradientForEveryOutputEvenOneItDoesNotRead) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), y = g.input("y", 1, DType::f32);
  g.output("sx", g.unary(UnaryOp::sin, x));
  g.output("sy", g.unary(UnaryOp::sin, y));
  g.output("ix", g.reduce(ReduceOp::argmax, {0}, x));
  Program p = gradient(g, {"x"});
  EXPECT_EQ(input_names(p), (std::vector<std::string>{"x", "dsx", "dsy", "dix"}));
  EXPECT_EQ(p.tensors[p.find_tensor("dix")].dtype, DType::i32);
}

TEST(GradientProgram, AnInputNoOutputDependsOnGetsZeros) {
  Graph g;
  Node x = g.input("x", 1, DType::f64);
  g.input("unused", 2, DType::f64);
  g.output("y", g.binary(BinaryOp::lt, x, x));
  Program p = gradient(g, {"x", "unused"});
  verify_or_throw(p, "gradient");
  Tensor x_in(DType::f64, {3}), unused(DType::f64, {2, 2});
  auto out = interpret(p, {{"unused", unused}, {"dy", Tensor(DType::f64, {3})}});
  EXPECT_EQ(out.at("dx").numel(), 3);
  EXPECT_EQ(out.at("dunused").shape, unused.shape);
  for (auto& [name, t] : out)
    for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), 0) << name;
}

TEST(GradientProgram, ForwardBlocksComeFirstThenGradientsInReverseOrderScattersIntoZeros) {
  Program p = gradient(matmul(), {"a", "b"});
  verify_or_throw(p, "gradient");
  std::vector<std::string> origins;
  for (auto& b : p.blocks) origins.push_back(b.origin);
  // c's reindex only drops the reduced axis of size 1: its gradient gathers dc back (a reindex);
  // the sum's gradient is a broadcast (a reindex), the product's two are products, and a and b's
  // reindexes, which broadcast, scatter.
  EXPECT_EQ(origins, (std::vector<std::string>{"reindex", "reindex", "reindex", "reindex", "mul",
                                               "mul", "scatter", "scatter"}));
  // A scatter accumulates into a tensor nothing wrote before: tensors start at zero, so no block
  // zeroes it.
  for (size_t k = 0; k < p.blocks.size(); ++k)
    for (auto& s : p.blocks[k].loops.back().stmts) {
      if (s.kind != StmtKind::accumulate) continue;
      for (size_t j = 0; j < k; ++j)
        for (auto& w : p.blocks[j].loops.back().stmts)
          EXPECT_NE(w.tensor, s.tensor)
              << p.tensors[s.tensor].name << " written before block " << k;
    }
}

// A reindex that only permutes axes is a bijection: its gradient is the inverse permutation,
// assigned in the gradient's own order, not a strided scatter into zeros.
TEST(GradientProgram, ATransposeGradientIsATranspose) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reindex(x, {"dA1", "dA0"}, {"i1", "i0"}));
  Program p = optimize(gradient(g, {"x"}));
  ASSERT_EQ(p.blocks.size(), 1u);
  const Stmt& s = p.blocks[0].loops.back().stmts.at(0);
  EXPECT_EQ(s.kind, StmtKind::assign) << print(p);
  EXPECT_EQ(print(p).find("sum="), std::string::npos) << print(p);
}

TEST(GradientProgram, RejectsWhatHasNoGradient) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), i = g.input("i", 1, DType::i32);
  g.output("y", g.select(0, x, i));
  EXPECT_THROW(gradient(g, {"z"}), Error);
  EXPECT_THROW(gradient(g, {"i"}), Error);
  EXPECT_THROW(gradient(g, {"x", "x"}), Error);
  try {
    gradient(g, {"i"});
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "gradient: input 'i' is i32 and has no gradient");
  }
}

TEST(GradientProgram, RejectsAGradientNameTheGraphAlreadyUses) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), dy = g.input("dy", 1, DType::f32);
  g.output("y", g.binary(BinaryOp::mul, x, dy));
  try {
    gradient(g, {"x"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "gradient: the gradient of output 'y' would be named 'dy', which is already a "
                 "tensor of the graph");
  }
}

}  // namespace
}  // namespace uops
