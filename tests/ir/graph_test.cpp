// Graph construction (docs/design.md §3.1, §3.3): every mistake a caller can make while describing
// an op is a uops::Error when the graph is built, with a message naming the culprit.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

std::string error_of(const std::function<void()>& build) {
  try {
    build();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Graph, InfersShapes) {
  Graph g;
  g.param("pad");
  Node x = g.input("x", 2, DType::f32);
  Node padded = g.reindex(x, {"dA0 + 2 * $pad", "dA1"}, {"i0 - $pad", "i1"});
  EXPECT_EQ(g.shape_text(padded), "[x.0 + 2 * $pad, x.1]");
  Node r = g.reduce(ReduceOp::argmax, {1}, padded);
  EXPECT_EQ(g.shape_text(r), "[x.0 + 2 * $pad, 1]");
  EXPECT_EQ(g.node(r).dtype, DType::i32);
  Node s = g.select(1, x, g.reindex(r, {"dA0", "3"}, {"i0", "0"}, {x}));
  EXPECT_EQ(g.shape_text(s), "[x.0, 3]");
  EXPECT_EQ(g.node(s).dtype, DType::f32);
}

TEST(Graph, UnknownParameter) {
  Graph g;
  g.param("pad");
  Node x = g.input("x", 1, DType::f32);
  EXPECT_EQ(error_of([&] { g.reindex(x, {"dA0 + $k"}, {"i0"}); }),
            "\"dA0 + $k\": column 7: unknown parameter '$k'");
  EXPECT_EQ(error_of([&] { g.reindex(x, {"dA0"}, {"i0 - $stride"}); }),
            "\"i0 - $stride\": column 6: unknown parameter '$stride'");
}

TEST(Graph, ShapeSourceOutOfRange) {
  Graph g;
  Node x = g.input("x", 2, DType::f32), y = g.input("y", 1, DType::f32);
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dB0", "dA1"}, {"i0", "i1"});
            }),
            "\"dB0\": column 1: shape source B is out of range: the sources are A");
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0", "dC0"}, {"i0", "i1"}, {x, y});
            }),
            "\"dC0\": column 1: shape source C is out of range: the sources are A-B");
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0", "dB1"}, {"i0", "i1"}, {x, y});
            }),
            "\"dB1\": shape source B has rank 1, so it has no axis 1");
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0", "dA1"}, {"i0", "dA2"});
            }),
            "\"dA2\": shape source A has rank 2, so it has no axis 2");
}

TEST(Graph, LoopIndexInShapeOrBeyondRank) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0 + i0", "dA1"}, {"i0", "i1"});
            }),
            "\"dA0 + i0\": column 7: loop index 'i0' is not allowed in a shape expression");
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0"}, {"i0", "i1"});
            }),
            "\"i1\": column 1: loop index 'i1' is out of range: the output has rank 1");
}

TEST(Graph, RankMismatch) {
  Graph g;
  Node x = g.input("x", 2, DType::f32), v = g.input("v", 1, DType::f32);
  EXPECT_EQ(error_of([&] { g.reindex(x, {"dA0"}, {"i0"}); }),
            "reindex: 1 index expressions given for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { g.binary(BinaryOp::add, x, v); }),
            "binary add: shapes [x.0, x.1] and [v.0] differ in rank (no implicit broadcast; "
            "broadcast is a reindex)");
  EXPECT_EQ(error_of([&] { g.ternary(v, x, x); }),
            "ternary: shapes [v.0], [x.0, x.1] and [x.0, x.1] differ in rank");
  EXPECT_EQ(error_of([&] { g.input("big", 9, DType::f32); }),
            "input 'big': rank 9 is outside 0..8");
  EXPECT_EQ(error_of([&] {
              g.reindex(v, {"1", "1", "1", "1", "1", "1", "1", "1", "1"}, {"0"});
            }),
            "reindex: rank 9 is above 8");
}

TEST(Graph, UnequalConstantShapes) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  Node three = g.reindex(x, {"3"}, {"i0"}), four = g.reindex(x, {"4"}, {"i0"});
  EXPECT_EQ(error_of([&] { g.binary(BinaryOp::mul, three, four); }),
            "binary mul: shapes [3] and [4] on axis 0: sizes 3 and 4 differ");
  EXPECT_EQ(error_of([&] { g.ternary(three, three, four); }),
            "ternary: shapes [3], [3] and [4] on axis 0: sizes 3 and 4 differ");
  EXPECT_EQ(error_of([&] {
              g.reindex(x, {"dA0[=dB0]"}, {"i0"}, {three, four});
            }),
            "reindex: asserted equal 3 and 4: sizes 3 and 4 differ");
  // Symbolic sizes that may differ become run-time assertions instead.
  Node y = g.input("y", 1, DType::f32);
  g.binary(BinaryOp::add, x, y);
  ASSERT_EQ(g.equalities().size(), 1u);
  EXPECT_EQ(g.index_text(g.equalities()[0].first), "x.0");
  EXPECT_EQ(g.index_text(g.equalities()[0].second), "y.0");
}

TEST(Graph, WrongDtypes) {
  Graph g;
  Node x = g.input("x", 1, DType::f32), d = g.input("d", 1, DType::f64);
  Node k = g.input("k", 1, DType::i32);
  EXPECT_EQ(error_of([&] { g.binary(BinaryOp::add, x, d); }),
            "binary add: dtypes f32 and f64 differ");
  EXPECT_EQ(error_of([&] { g.ternary(k, x, d); }), "ternary: dtypes f32 and f64 differ");
  EXPECT_EQ(error_of([&] { g.select(0, x, x); }), "select: the index tensor must be i32, not f32");
  EXPECT_EQ(error_of([&] { g.select(0, x, d); }), "select: the index tensor must be i32, not f64");
  EXPECT_EQ(error_of([&] { g.reduce(ReduceOp::argmax, {0}, k); }),
            "reduce argmax: needs a float input, not i32 (cast it)");
}

TEST(Graph, SelectAndReduceArguments) {
  Graph g;
  Node x = g.input("x", 2, DType::f32), k = g.input("k", 2, DType::i32);
  Node k1 = g.input("k1", 1, DType::i32);
  EXPECT_EQ(error_of([&] { g.select(2, x, k); }), "select: axis 2 is out of range for rank 2");
  EXPECT_EQ(error_of([&] { g.select(1, x, k1); }),
            "select: the index [k1.0] and the tensor [x.0, x.1] differ in rank");
  EXPECT_EQ(error_of([&] { g.reduce(ReduceOp::sum, {2}, x); }),
            "reduce sum: axis 2 is out of range for rank 2");
  EXPECT_EQ(error_of([&] {
              g.reduce(ReduceOp::max, {1, 1}, x);
            }),
            "reduce max: axis 1 is given twice");
  EXPECT_EQ(error_of([&] { g.reduce(ReduceOp::min, {-1}, x); }),
            "reduce min: axis -1 is out of range for rank 2");
}

TEST(Graph, NamesAndNodes) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  EXPECT_EQ(error_of([&] { g.input("x", 1, DType::f32); }), "input: 'x' is declared twice");
  EXPECT_EQ(error_of([&] { g.input("2x", 1, DType::f32); }),
            "input: '2x' is not a valid tensor name");
  EXPECT_EQ(error_of([&] { g.param("a b"); }), "param: 'a b' is not a valid parameter name");
  g.param("k");
  EXPECT_EQ(error_of([&] { g.param("k"); }), "param: '$k' is declared twice");
  g.output("y", x);
  EXPECT_EQ(error_of([&] { g.output("y", x); }), "output: 'y' is declared twice");
  EXPECT_EQ(error_of([&] { g.output("x", x); }), "output: 'x' is already the name of an input");
  EXPECT_EQ(error_of([&] { g.unary(UnaryOp::exp, Node{7}); }),
            "unary: node 7 is not in this graph");
  EXPECT_EQ(error_of([&] { g.output("z", Node{-1}); }), "output: node -1 is not in this graph");
}

TEST(Graph, ParseErrorsSurfaceAtConstruction) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  EXPECT_EQ(error_of([&] { g.reindex(x, {"dA0 +"}, {"i0"}); }),
            "\"dA0 +\": column 6: expected a term, found end of input");
  EXPECT_EQ(error_of([&] { g.reindex(x, {"dA0"}, {"i0 + * 2"}); }),
            "\"i0 + * 2\": column 6: expected a term, found '*'");
}

}  // namespace
}  // namespace uops
