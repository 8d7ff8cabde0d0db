// The optimization targets on forward ops: matmul becomes one block without temporaries (in i,
// k, j order, accumulating into its output, which a block before it zeroes), conv2d the same after
// packing its weights; softmax
// and layernorm take three passes over their rows. Also checks results.
#include <gtest/gtest.h>

#include <map>

#include "uops/ir.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/stats.h"

namespace uops {

using namespace ir;

namespace {

ProgramStats optimized_stats(const std::string& name, std::string* text = nullptr) {
  const OpDef& op = find_op(name);
  Program q = optimize(forward_program(op, DType::f32), {true});
  if (text) *text = print(q);
  return program_stats(q, op.example_shapes, op.example_params);
}

TEST(OpTargets, MatmulIsOneBlock) {
  std::string text;
  ProgramStats s = optimized_stats("matmul", &text);
  EXPECT_EQ(text,
            "tensor a f32 [a.0, a.1] input\n"
            "tensor b f32 [b.0, b.1] input\n"
            "tensor c f32 [a.0, b.1] output\n"
            "assert a.1 == b.0\n"
            "block 0: reindex + reindex + mul + reduce sum + reindex\n"
            "  for v14 in [0, a.0):\n"
            "    for v15 in [0, b.1):\n"
            "      c[v14, v15] = 0\n"
            "block 1: reindex + reindex + mul + reduce sum + reindex\n"
            "  for v0 in [0, a.0):\n"
            "    for v2 in [0, a.1):\n"
            "      for v1 in [0, b.1):\n"
            "        c[v0, v1] sum= (a[v0, v2] * b[v2, v1])\n");
  EXPECT_EQ(s.temporaries, 0);
}

// One block, after the block that zeroes what it accumulates into.
TEST(OpTargets, ConvolutionsAndPoolsAreOneBlock) {
  for (auto [name, blocks] : std::map<std::string, int>{{"depthwise_conv2d", 2},
                                                        {"batched_matmul", 2},
                                                        {"linear", 1},
                                                        {"gelu", 1},
                                                        {"concat", 1}}) {
    ProgramStats s = optimized_stats(name);
    EXPECT_EQ(s.blocks, blocks) << name;
    EXPECT_EQ(s.temporaries, 0) << name;
  }
}

// A sum stored with more than the sum accumulates into the output, zeroed by a block before it,
// then a block finishes it: avgpool2d's division. (linear's bias would too, but its weights are
// reused only across the batch, so it keeps its dot products: loop_order.h.)
TEST(OpTargets, AvgpoolFinishesItsSumsAfterwards) {
  std::string text;
  ProgramStats avgpool = optimized_stats("avgpool2d", &text);
  EXPECT_EQ(avgpool.blocks, 3) << text;
  EXPECT_NE(text.find("] = 0\n"), std::string::npos) << text;
  EXPECT_EQ(avgpool.temporaries, 0) << text;
  EXPECT_NE(text.find("/ idx($k * $k))"), std::string::npos) << text;
}

// maxpool2d takes its maxima in y over the channels, innermost and contiguous in NHWC, after a
// block that sets y to -inf: the window's loops run outside the channels.
TEST(OpTargets, MaxpoolTakesItsMaximaAcrossTheChannels) {
  std::string text;
  ProgramStats maxpool = optimized_stats("maxpool2d", &text);
  EXPECT_EQ(maxpool.blocks, 2) << text;
  EXPECT_EQ(maxpool.temporaries, 0) << text;
  EXPECT_NE(text.find("] = -inf"), std::string::npos) << text;
  EXPECT_NE(text.find("for v3 in [0, x.3):\n              y[v0, v1, v2, v3] max= "),
            std::string::npos)
      << text;
}

// matmul's gradient fuses da and db into one block (they share loops and loads); each is then
// computed by a block of its own: db = a^T * dc as a matmul (register tiles), da = dc * b^T as
// dot products over rows of both (dot tiles), since no order reads b with stride 1 along da's
// rows. Bit for bit.
TEST(OpTargets, MatmulGradientSplitsIntoTwoContractions) {
  const OpDef& op = find_op("matmul");
  Program p = gradient_program(op, DType::f64), q = optimize(p, {true});
  std::string text = print(q);
  EXPECT_NE(text.find("    for v2 in [0, a.1) carry c0 sum:\n"
                      "      for v1 in [0, b.1):\n"
                      "        c0 sum= (dc[v0, v1] * b[v2, v1])\n"
                      "      da[v0, v2] = c0\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("db[v26, v25] sum= (dc[v24, v25] * a[v24, v26])"), std::string::npos) << text;
  TensorMap in;
  for (auto& [name, shape] :
       std::map<std::string, std::vector<int64_t>>{{"a", {5, 7}}, {"b", {7, 3}}, {"dc", {5, 3}}}) {
    Tensor t(DType::f64, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, 0.1 * double((i * 7919) % 23) - 1.1);
    in[name] = t;
  }
  TensorMap want = interpret(p, in), got = interpret(q, in);
  for (auto& [name, t] : want) EXPECT_EQ(t.bytes, got.at(name).bytes) << name;
}

// The blocks of `p` that write tensor `name`.
std::vector<const Block*> writers(const Program& p, const std::string& name) {
  std::vector<const Block*> out;
  for (auto& b : p.blocks)
    if (tensor_sets(b, int(p.tensors.size())).writes[size_t(p.find_tensor(name))])
      out.push_back(&b);
  return out;
}

// conv2d's gradient fuses dx and dw into one block (they share loops and loads), and linear's dx,
// dw and db: no tiling takes such a block. Each sum whose innermost loop re-reads every operand
// across some loop is a contraction, which the C plan blocks in registers only on its own; so
// each tensor is computed by a block of its own, and the plan keeps dx and dw in register tiles.
// Bit for bit. layernorm's gradient sums dgamma, dbeta and a row's sum in one pass over dy and x,
// which it reads once per iteration: that block stays whole.
TEST(OpTargets, GradientsSplitIntoTiledContractions) {
  struct Case {
    const char* op;
    std::map<std::string, std::vector<int64_t>> shapes;
    ParamMap params;
  };
  for (const Case& c : {Case{"conv2d",
                             {{"x", {2, 5, 6, 3}}, {"w", {4, 3, 3, 3}}, {"dy", {2, 5, 6, 4}}},
                             {{"stride", 1}, {"pad", 1}, {"dilation", 1}}},
                        Case{"linear", {{"x", {3, 5}}, {"w", {4, 5}}, {"dy", {3, 4}}}, {}}}) {
    Program p = gradient_program(find_op(c.op), DType::f64), q = optimize(p, {true});
    Program planned = plan_cpu(q, CpuTarget{});
    for (const char* name : {"dx", "dw"}) {
      bool tiled = false;
      for (const Block* b : writers(planned, name))
        for (auto& l : b->loops) tiled |= l.plan.tile > 0;
      EXPECT_TRUE(tiled) << c.op << ": " << name << " is in no register tile\n" << print(planned);
    }
    for (const Block* b : writers(planned, "dx"))
      for (const Block* d : writers(planned, "dw")) EXPECT_NE(b, d) << print(q);
    TensorMap in;
    for (auto& [name, shape] : c.shapes) {
      Tensor t(DType::f64, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, 0.1 * double((i * 7919) % 23) - 1.1);
      in[name] = t;
    }
    TensorMap want = interpret(p, in, c.params), got = interpret(q, in, c.params);
    for (auto& [name, t] : want) EXPECT_EQ(t.bytes, got.at(name).bytes) << c.op << ": " << name;
  }
  Program layernorm = optimize(gradient_program(find_op("layernorm"), DType::f32));
  auto dgamma = writers(layernorm, "dgamma"), dbeta = writers(layernorm, "dbeta");
  ASSERT_EQ(dgamma.size(), 1u);
  EXPECT_EQ(dgamma, dbeta) << print(layernorm);
}

// depthwise conv2d's weight gradient, dw[kh, kw, c] sum= dy[n, oh, ow, c] * x[n, oh + kh, ow +
// kw, c], has no rows that share a load in contraction order (x sees kh and kw only through the
// window): kh and kw first, untiled, would read all of x and dy again at each of their steps.
// Its tiles slide kw over a row's pixels instead (reduction_tiling.cpp, contraction_order and
// tile_block): rows of kw share each load of dy, and the images (with their rows, where a row is
// long) run outside the tiles and the window's loops, so each image's slices of x and dy come
// from memory once. What the tiles leave over keeps the window's loops inside the pixels'.
TEST(OpTargets, DepthwiseWeightGradientReadsEachImageOnce) {
  Program q = optimize(gradient(find_op("depthwise_conv2d").build(DType::f32), {"w"}));
  Program planned = plan_cpu(q, CpuTarget{});
  const int dw = planned.find_tensor("dw");
  int sums = 0, tiles = 0, kw_rows = 0, images_outside = 0;
  for (auto& b : planned.blocks)
    for (auto& s : b.loops.back().stmts) {
      if (s.tensor != dw || s.kind != StmtKind::accumulate) continue;
      ++sums;
      const bool tile = std::any_of(b.loops.begin(), b.loops.end(),
                                    [](const Loop& l) { return l.plan.tile > 0; });
      if (tile) {
        ++tiles;
        kw_rows += uses_var(s.index[1], b.loops[b.loops.size() - 2].var);  // the tile's rows
        images_outside += !uses_var(s.index, b.loops[0].var);
        continue;
      }
      bool indexed = false;  // a loop whose variable indexes dw has come
      for (auto& l : b.loops) {
        EXPECT_TRUE(!indexed || uses_var(s.index, l.var)) << print(planned);
        indexed |= uses_var(s.index, l.var);
      }
    }
  EXPECT_GT(sums, tiles) << print(planned);
  EXPECT_GT(kw_rows, 0) << print(planned);
  EXPECT_GE(images_outside, 2) << print(planned);  // with their rows, and alone
}

// conv2d's OHWI weights are copied to [kh][kw][ic][oc] so that the output channels, innermost,
// read them with stride 1 and the tiling passes can block it like a matmul.
TEST(OpTargets, Conv2dPacksItsWeights) {
  std::string text;
  ProgramStats s = optimized_stats("conv2d", &text);
  EXPECT_EQ(s.blocks, 3);  // the packing, the zeros, the convolution
  EXPECT_EQ(s.temporaries, 1);
  EXPECT_NE(text.find("tensor w_packed f32 [w.1, w.2, w.3, w.0] temp"), std::string::npos) << text;
  EXPECT_NE(text.find("w_packed[v4, v5, v6, v3])\n"), std::string::npos) << text;
}

TEST(OpTargets, SoftmaxAndLayernormPasses) {
  ProgramStats softmax = optimized_stats("softmax");
  EXPECT_EQ(softmax.blocks, 3);
  ProgramStats layernorm = optimized_stats("layernorm");
  EXPECT_EQ(layernorm.blocks, 3);
  EXPECT_EQ(softmax.temporary_bytes, 2 * 128 * 4);    // only the per-row max and sum
  EXPECT_EQ(layernorm.temporary_bytes, 2 * 128 * 4);  // per-row mean and variance
}

TEST(OpTargets, EveryOpKeepsItsResults) {
  for (const OpDef& op : all_ops()) {
    Program p = forward_program(op, DType::f64), q = optimize(p, {true});
    TensorMap in;
    for (auto& input : op.inputs) {
      Tensor t(input.is_index ? DType::i32 : DType::f64, op.example_shapes.at(input.name));
      std::vector<int64_t> small = t.shape;
      for (auto& d : small) d = std::min<int64_t>(d, 3);
      t = Tensor(t.dtype, small);
      for (int64_t i = 0; i < t.numel(); ++i)
        t.set(i, input.is_index ? i % 3 : 0.1 * ((i * 5) % 13) + 0.05);
      in[input.name] = t;
    }
    TensorMap a, b;
    try {
      a = interpret(p, in, op.example_params);
    } catch (const Error&) {
      continue;  // the small shapes break one of the op's assertions
    }
    b = interpret(q, in, op.example_params);
    for (auto& [name, t] : a)
      for (int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), b.at(name).get(i)) << op.name;
  }
}

}  // namespace
}  // namespace uops
