// One test per legality rule of docs/design.md §3.5 and §6: each builds the
// smallest program where the rule matters, checks what the pass did, and that
// results did not change.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "uops/ir.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/stats.h"
#include "uops/passes/variable_substitution.h"

namespace uops {

using namespace ir;

namespace {

Tensor ramp(DType t, std::vector<int64_t> shape, double scale = 0.25) {
  Tensor x(t, shape);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, scale * double((i * 7) % 11) - 1.0);
  return x;
}

void expect_same(const Program &p, const Program &q, const TensorMap &in) {
  TensorMap a = interpret(p, in), b = interpret(q, in);
  for (auto &[name, t] : a)
    for (int64_t i = 0; i < t.numel(); ++i)
      EXPECT_EQ(t.get(i), b.at(name).get(i)) << name << i;
}

Stmt assign(int tensor, std::vector<Index> at, Value v) {
  Stmt s;
  s.tensor = tensor;
  s.index = std::move(at);
  s.value = std::move(v);
  return s;
}

Stmt accumulate(int tensor, std::vector<Index> at, Value v) {
  Stmt s = assign(tensor, std::move(at), std::move(v));
  s.kind = StmtKind::accumulate;
  return s;
}

// A program over input x [N] with the given extra tensors (shape [x.0] each).
Program
vector_program(const std::vector<std::pair<std::string, Role>> &tensors) {
  Program p;
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  for (auto &[name, role] : tensors)
    p.tensors.push_back({name, DType::f32, {idx::dim(0, 0)}, role});
  return p;
}

// Statements are written with Var(-1) standing for the block's loop variable.
Index rewrite_var(const Index &e, const Index &v) {
  return rewrite(e, [&](const Index &leaf) -> Index {
    return leaf->kind == IndexKind::Var && leaf->value == -1 ? v : nullptr;
  });
}
std::vector<Index> rewrite_vars(std::vector<Index> ix, const Index &v) {
  for (auto &e : ix)
    e = rewrite_var(e, v);
  return ix;
}
Index V() { return idx::var(-1); }

Block vector_block(Program &p, const std::string &origin,
                   std::vector<Stmt> stmts) {
  Block b;
  Loop l;
  l.var = p.num_vars++;
  l.start = idx::constant(0);
  l.end = idx::dim(0, 0);
  Index v = idx::var(l.var);
  for (auto &s : stmts) {
    s.index = rewrite_vars(s.index, v);
    s.value = rewrite(s.value, nullptr,
                      [&](const Index &e) { return rewrite_var(e, v); });
  }
  l.stmts = std::move(stmts);
  b.loops.push_back(std::move(l));
  b.origin = origin;
  return b;
}

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

  // Accumulating straight into the tensors, the same pair fuses, j and k
  // swapped for B.
  Program acc = p;
  for (auto &b : acc.blocks) {
    std::vector<Stmt> inner;
    const Stmt store = b.loops[1].stmts.back();
    for (auto &l : b.loops) {
      for (auto &s : l.stmts)
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

// A zeroing block between A and B: B needs it, so B cannot move up; A moves
// down instead.
TEST(Fusion, MergeRightPastAZeroingBlock) {
  Program p = vector_program({{"y", Role::output}, {"acc", Role::output}});
  p.blocks.push_back(vector_block(
      p, "A",
      {assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()})))}));
  // Its range differs, so that it fuses with neither.
  p.blocks.push_back(
      vector_block(p, "zero", {assign(2, {V()}, val::constant(0))}));
  p.blocks.back().loops[0].end = idx::add(idx::dim(0, 0), idx::constant(1));
  p.blocks.push_back(
      vector_block(p, "B", {accumulate(2, {V()}, val::load(1, {V()}))}));
  ASSERT_TRUE(verify(p).empty());
  Program q = fuse_loops(p);
  ASSERT_EQ(q.blocks.size(), 2u) << print(q);
  EXPECT_EQ(q.blocks[0].origin, "zero");
  EXPECT_EQ(q.blocks[1].origin, "A + B");
  expect_same(p, q, {{"x", ramp(DType::f32, {6})}});

  // When the middle block reads what A writes, neither direction is legal.
  Program r = vector_program({{"y", Role::output}, {"acc", Role::output}});
  r.blocks.push_back(
      vector_block(r, "A", {assign(1, {V()}, val::load(0, {V()}))}));
  r.blocks.push_back(vector_block(
      r, "mid",
      {assign(2, {V()}, val::load(1, {idx::sub(idx::dim(0, 0), V())}))}));
  r.blocks.push_back(
      vector_block(r, "B", {accumulate(2, {V()}, val::load(1, {V()}))}));
  Program s = fuse_loops(r);
  EXPECT_EQ(s.blocks[0].origin, "A")
      << print(s); // mid and B may fuse; A joins neither
  expect_same(r, s, {{"x", ramp(DType::f32, {6})}});
}

// Section 5: the reference substitution ignored statement order.
TEST(Substitution, RespectsStatementOrder) {
  Program p = vector_program({{"t", Role::temporary},
                              {"before", Role::output},
                              {"after", Role::output}});
  p.blocks.push_back(vector_block(
      p, "order",
      {assign(2, {V()}, val::load(1, {V()})),
       assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()}))),
       assign(3, {V()}, val::load(1, {V()}))}));
  ASSERT_TRUE(verify(p).empty());
  Program q = eliminate_dead_code(substitute_variables(p));
  EXPECT_EQ(print(q), print(p)); // the read before the write sees the old t
  TensorMap in{{"x", ramp(DType::f32, {4})}};
  expect_same(p, optimize(p, {true}), in);

  // A statement between the write and the read changes what the expression
  // reads.
  Program r = vector_program(
      {{"t", Role::temporary}, {"s", Role::output}, {"out", Role::output}});
  r.blocks.push_back(vector_block(r, "clobber",
                                  {assign(1, {V()}, val::load(2, {V()})),
                                   assign(2, {V()}, val::constant(3)),
                                   assign(3, {V()}, val::load(1, {V()}))}));
  EXPECT_EQ(print(substitute_variables(r)), print(r));
  expect_same(r, optimize(r, {true}), in);

  // The plain case substitutes and the temporary leaves the table.
  Program s = vector_program({{"t", Role::temporary}, {"out", Role::output}});
  s.blocks.push_back(vector_block(
      s, "plain",
      {assign(1, {V()}, val::unary(UnaryOp::exp, val::load(0, {V()}))),
       assign(2, {V()},
              val::binary(BinaryOp::mul, val::load(1, {V()}),
                          val::load(1, {V()})))}));
  Program t = eliminate_dead_code(substitute_variables(s));
  EXPECT_EQ(t.tensors.size(), 2u);
  EXPECT_EQ(t.find_tensor("t"), -1);
  expect_same(s, t, in);
}

TEST(DeadCode, DropsDeadBlocksAndRenumbersTensors) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  Node dead = g.unary(UnaryOp::exp, x);
  g.unary(UnaryOp::sin, dead);
  Node k = g.input("k", 2, DType::i32);
  g.output("y", g.select(1, g.unary(UnaryOp::neg, x), k));
  Program p = lower(g);
  Program q = eliminate_dead_code(p);
  EXPECT_EQ(q.blocks.size(), 2u);
  EXPECT_EQ(q.tensors.size(), 4u); // x, k, the negation, y
  EXPECT_TRUE(verify(q).empty()) << print(q);
  Tensor kt(DType::i32, {2, 3});
  for (int i = 0; i < 6; ++i)
    kt.set(i, i % 4 - 1);
  expect_same(p, q, {{"x", ramp(DType::f32, {2, 3})}, {"k", kt}});
}

TEST(Bounds, ProvesShiftsAndFoldsFillReads) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  Node pad = g.reindex(x, {"dA0 + 2"}, {"i0 - 1"}, {x}, 7);
  Node inner = g.reindex(pad, {"dA0"}, {"i0 + 1"}, {x});
  g.output("y", g.binary(BinaryOp::add, inner, g.fill(x, 3)));
  g.output("padded", pad);
  Program p = lower(g);
  Program q = optimize(p, {true});
  std::string text = print(q);
  EXPECT_NE(text.find("x?[v"), std::string::npos)
      << text; // the padded read stays checked
  EXPECT_EQ(text.find("fill 3"), std::string::npos)
      << text; // the fill read became 3
  EXPECT_NE(text.find("padded[v1 + 1] + 3"), std::string::npos) << text;
  EXPECT_EQ(text.find("y?"), std::string::npos) << text;
  expect_same(p, q, {{"x", ramp(DType::f32, {5})}});
}

TEST(Pipeline, DumpsAndNamesPasses) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, g.unary(UnaryOp::neg, x)));
  std::ostringstream out;
  PipelineOptions o;
  o.dump_after = "all";
  o.dump = &out;
  optimize(lower(g), o);
  for (auto &name : pass_names())
    EXPECT_NE(out.str().find("// after " + name + "\n"), std::string::npos)
        << name;
  // Every pass optimize() runs is one that dump_after accepts by name
  // (storage_reuse was not).
  std::istringstream lines(out.str());
  auto names = pass_names();
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// after ", 0) != 0)
      continue;
    std::string name = line.substr(9);
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    std::ostringstream one;
    PipelineOptions only{false, name, &one};
    EXPECT_NO_THROW(optimize(lower(g), only)) << name;
    EXPECT_NE(one.str().find("// after " + name + "\n"), std::string::npos)
        << name;
  }
  o.dump_after = "fusion";
  EXPECT_THROW(optimize(lower(g), o), Error);
}

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

} // namespace
} // namespace uops
