#include "uops/backends/c/c_backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <regex>
#include <set>

#include "backends/c/c_compiler.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/codegen/names.h"
#include "backends/codegen/zero_fill.h"
#include "support/compare.h"
#include "support/example_graphs.h"
#include "support/programs.h"
#include "support/random_graph.h"
#include "uops/ir/binding.h"
#include "uops/ir/memory_budget.h"
#include "uops/ir/printer.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/packed_variant.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/reduction_tiling.h"
#include "uops/passes/register_tiles.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

// The host, and on an x86-64 host the narrower targets it also runs: the helpers whose body
// depends on the vector width (uops_load_lanes, stream_rowf) run each form.
std::vector<std::string> vector_width_targets() {
  std::vector<std::string> targets = {"native"};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    targets.push_back("x86-64-v3");
  targets.push_back("x86-64");
#endif
  return targets;
}

// Runs p at every vector width the host runs and at 1 and 2 threads, unreassociated, and checks
// each run's outputs against `want` bit for bit; `emitted` must be in each kernel's source.
// Outputs from `tile_stream_bytes` on stream (CCompileOptions::tile_stream_bytes), the same on
// every host.
void same_at_every_width(const Program& p, const TensorMap& in, const ParamMap& params,
                         const TensorMap& want, const std::string& emitted, const std::string& what,
                         int64_t tile_stream_bytes = kStreamBytes) {
  for (const std::string& target : vector_width_targets())
    for (int threads : {1, 2}) {
      CCompileOptions exact;
      exact.reassociate = false;
      exact.threads = threads;
      exact.target = target;
      exact.tile_stream_bytes = tile_stream_bytes;
      EXPECT_NE(emit_c(p, exact).find(emitted), std::string::npos) << what << " " << target;
      TensorMap got = testing::nan_like(want);
      compile_c(p, exact)->run_into(in, got, params);
      EXPECT_TRUE(testing::same_outputs(want, got)) << what << " " << target << " " << threads;
    }
}

Graph matmul_graph() {
  Graph g;
  Node a = g.input("a", 2, DType::f32), b = g.input("b", 2, DType::f32);
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, {"dA0", "dB1", "dA1[=dB0]"}, {"i0", "i2"}, {a, b}),
                     g.reindex(b, {"dA0", "dB1", "dA1"}, {"i2", "i1"}, {a, b}));
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {2}, ab), {"dA0", "dA1"}, {"i0", "i1", "0"}));
  return g;
}

// Without reassociation bit for bit; with it (the default) the sums run as SIMD reductions.
// The optimized matmul runs in register tiles of 12 x 32 with rows and columns left over (33 x
// 65; 29 x 56, columns in tiles of 32 and 16, then 8 plain), reduction tiles (300) and, from
// 2^18 elements, the tiles in parallel (264 x 1000), on one team across 3 reduction tiles
// (100 x 260 x 120).
TEST(CBackend, MatmulMatchesInterpreter) {
  for (Program p : {lower(matmul_graph()), optimize(lower(matmul_graph()))}) {
    CCompileOptions exact, reassociating;
    exact.reassociate = false;
    exact.threads = reassociating.threads = 2;
    auto bitwise = compile_c(p, exact), fast = compile_c(p, reassociating);
    EXPECT_EQ(fast->backend(), "c");
    for (auto [m, k, n] : {std::tuple{2, 3, 2},
                           {5, 7, 3},
                           {0, 4, 2},
                           {33, 1, 65},
                           {29, 5, 56},
                           {9, 300, 17},
                           {264, 20, 1000},
                           {100, 260, 120}}) {
      TensorMap in = testing::random_inputs(p, {{"a", {m, k}}, {"b", {k, n}}}, m * 100 + n);
      TensorMap want = interpret(p, in);
      EXPECT_TRUE(testing::same_outputs(want, bitwise->run(in)));
      EXPECT_TRUE(testing::same_outputs(want, fast->run(in), 1e-4));
    }
  }
}

// conv2d runs in register tiles of 8 output pixels x 32 output channels (weights packed). Its
// input loads check their bounds (padding): the tile's loops run unchecked under a guard where the
// whole tile is in range and checked elsewhere. Sizes leave pixels and channels over, and the
// parameters put tiles across the border, wholly in the padding, and strided or dilated.
TEST(CBackend, Conv2dTilesCheckTheirBoundsOnce) {
  Program p = optimize(forward_program(find_op("conv2d"), DType::f32));
  std::string src = emit_c(p);
  EXPECT_NE(src.find("float tile_v"), std::string::npos) << src;
  EXPECT_NE(src.find("if (in_range("), std::string::npos) << src;
  CCompileOptions exact;
  exact.reassociate = false;
  auto bitwise = compile_c(p, exact), fast = compile_c(p);
  for (auto [stride, pad, dilation] : {std::tuple{1, 1, 1}, {2, 2, 1}, {1, 0, 2}, {1, 9, 1}}) {
    ParamMap params = {{"stride", stride}, {"pad", pad}, {"dilation", dilation}};
    TensorMap in = testing::random_inputs(p, {{"x", {2, 6, 19, 5}}, {"w", {56, 3, 3, 5}}},
                                          stride * 100 + pad * 10 + dilation);
    TensorMap want = interpret(p, in, params);
    EXPECT_TRUE(testing::same_outputs(want, bitwise->run(in, params))) << pad;
    EXPECT_TRUE(testing::same_outputs(want, fast->run(in, params), 1e-4)) << pad;
  }
}

// conv2d's gradients. dx scatters each product through the window (scatter_tiling.h): with
// reassociation its output channels run innermost but for the input channels, over tiles of 8
// images x 32 input channels held in registers, and the images left over in tiles of 64 input
// channels, tested at their corners (a border row runs per element); without, the scatter keeps
// its order. dw contracts over the pixels in 8 x 32 tiles of output channels x input channels,
// the output channels left over in tiles of 4 rows (reduction_tiling.h), bit for bit either way:
// 29 output channels run three tiles of 8, one of 4 and one row left over. 2 and 9 images (no
// tile of images; one and one left over); channels of 5, 64, 70 and 130 leave no tile, whole
// tiles, and columns over (9 images take 5 and 70 only: the interpreter's reference is most of the
// test's time, ten minutes under ASan with every pair); the parameters put rows across the border
// and in the padding, strided and dilated; 1 and 2 threads.
TEST(CBackend, Conv2dGradientsHoldTheirRowsInRegisters) {
  Program dx = optimize(gradient(find_op("conv2d").build(DType::f32), {"x"}));
  Program dw = optimize(gradient(find_op("conv2d").build(DType::f32), {"w"}));
  CCompileOptions exact, two, avx512;
  exact.reassociate = false;
  two.threads = 2;
  avx512.target = "x86-64-v4";  // the tiles of 32 vector registers (TilesFitTheTargets...)
  EXPECT_NE(emit_c(dx, avx512).find("[64];"), std::string::npos) << emit_c(dx, avx512);
  EXPECT_NE(emit_c(dx, avx512).find("[8][32];"), std::string::npos) << emit_c(dx, avx512);
  EXPECT_EQ(emit_c(dx, exact).find("float tile_v"), std::string::npos) << emit_c(dx, exact);
  // dw's tiles are 8 x 32, the images outside the tiles and the window where the pixels are 32
  // or more, their rows too where a row has 48 or more (reduction_tiling.h): 7 x 6 and 17 x 16
  // pixels below, inside at 5 x 4 and 3 x 2; 5 x 50 and 15 x 60, rows outside, at 1 x 46 and
  // 4 x 26 not.
  EXPECT_NE(emit_c(dw).find("[8][32];"), std::string::npos) << emit_c(dw);
  // dx's border tiles test their row and column once (LoopPlan::tile_skip).
  EXPECT_NE(print(plan_cpu(dx, {})).find("else only where in range dx.1["), std::string::npos)
      << print(plan_cpu(dx, {}));
  EXPECT_NE(emit_c(dw).find("[4][32];"), std::string::npos) << emit_c(dw);
  // dw's border tiles take each row of x once for all the tile's output channels: in front of
  // their unrolled loop (LoopPlan::tile_rows_at), not in each of its copies.
  int bound = 0;
  for (auto& b : plan_cpu(dw, {}).blocks)
    for (auto& l : b.loops)
      if (!l.plan.tile_rows.empty() && b.loops[b.loops.size() - 2].plan.unroll) {
        ++bound;
        EXPECT_EQ(l.plan.tile_rows_at, int(b.loops.size() - 2)) << print(plan_cpu(dw, {}));
      }
  // 8 output channels: rows and images outside the window, images, neither; 4 channels
  EXPECT_EQ(bound, 4);
  // The images and rows outside the tiles sum into thread copies where a team runs; a kernel
  // compiled for one thread has no copy of those blocks (CpuTarget::one_thread).
  CCompileOptions one;
  one.threads = 1;
  EXPECT_NE(emit_c(dw, two).find("reduction(+:dw["), std::string::npos) << emit_c(dw, two);
  EXPECT_EQ(emit_c(dw, one).find("reduction(+:"), std::string::npos) << emit_c(dw, one);
  std::vector<std::unique_ptr<Executable>> dxs, dws;
  for (auto* o : {&exact, &two}) {
    dxs.push_back(compile_c(dx, *o));
    dws.push_back(compile_c(dw, *o));
  }
  dxs.push_back(compile_c(dx));
  for (auto [h, w] : {std::pair<int64_t, int64_t>{7, 6}, {5, 50}})
    for (int64_t images : {2, 9})
      for (int c : {5, 64, 70, 130})
        for (auto [stride, pad, dilation] :
             {std::tuple{1, 1, 1}, {2, 2, 1}, {1, 0, 2}, {1, 6, 1}}) {
          if ((images == 9 || w == 50) && (c == 64 || c == 130)) continue;
          // Sanitized, the cases that cost the interpreter most are left to the release build
          // (903 s under ASan with them, a twentieth of that without).
          if (testing::kSanitized && (images == 9 || c == 130 || (w == 50 && c != 5))) continue;
          ParamMap params = {{"stride", stride}, {"pad", pad}, {"dilation", dilation}};
          int64_t o = 29, k = 3;
          int64_t oh = (h + 2 * pad - dilation * (k - 1) - 1) / stride + 1,
                  ow = (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
          std::map<std::string, std::vector<int64_t>> shapes = {
              {"x", {images, h, w, c}}, {"w", {o, k, k, c}}, {"dy", {images, oh, ow, o}}};
          TensorMap in_dx = testing::random_inputs(dx, shapes, uint64_t(c + pad)),
                    in_dw = testing::random_inputs(dw, shapes, uint64_t(c + pad));
          TensorMap want_dx = interpret(dx, in_dx, params), want_dw = interpret(dw, in_dw, params);
          std::string at = std::to_string(images) + " images of " + std::to_string(h) + " x " +
                           std::to_string(w) + ", " + std::to_string(c) + " channels, pad " +
                           std::to_string(pad);
          EXPECT_TRUE(testing::same_outputs(want_dx, dxs[0]->run(in_dx, params))) << at;
          for (size_t i = 1; i < dxs.size(); ++i)
            EXPECT_TRUE(testing::same_outputs(want_dx, dxs[i]->run(in_dx, params), 1e-4)) << at;
          EXPECT_TRUE(testing::same_outputs(want_dw, dws[0]->run(in_dw, params))) << at;
          EXPECT_TRUE(testing::same_outputs(want_dw, dws[1]->run(in_dw, params), 1e-4)) << at;
        }
}

// A tile that loads its elements at each visit (no LoopPlan::tile_start) has its copies
// unrolled (LoopPlan::tile_unrolled): its load's and its store's loops over rows run under
// "#pragma GCC unroll" and the row count; a tile that starts from a value runs them looped. So
// all of conv2d's data gradient's tiles (dx's 8 x 32) and none of matmul's or conv2d's main
// 6 x 64 tiles, which start from zero. A tile of one loop has no rows to unroll.
TEST(CBackend, TilesThatLoadTheirElementsCopyThemInUnrolledRows) {
  CCompileOptions avx512;
  avx512.target = "x86-64-v4";
  int unrolled = 0, looped = 0;
  for (const Program& p : {optimize(gradient(find_op("conv2d").build(DType::f32), {"x"})),
                           optimize(forward_program(find_op("matmul"), DType::f32)),
                           optimize(forward_program(find_op("conv2d"), DType::f32))}) {
    for (const Block& b : plan_cpu(p, cgen::cpu_target(avx512)).blocks)
      for (const Loop& l : b.loops)
        EXPECT_TRUE(!l.plan.tile || l.plan.tile_unrolled == !l.plan.tile_start)
            << print_block(p, b, 0);
    const std::string src = emit_c(p, avx512);
    std::vector<std::string> lines;
    for (size_t at = 0, end; at < src.size(); at = end + 1) {
      end = std::min(src.find('\n', at), src.size());
      const size_t text = std::min(src.find_first_not_of(' ', at), end);
      lines.push_back(src.substr(text, end - text));
    }
    for (size_t d = 0; d < lines.size(); ++d) {
      if (lines[d].rfind("float tile_v", 0) != 0 || lines[d].find("][") == std::string::npos)
        continue;  // float tile_vN[R][C];
      const std::string name = lines[d].substr(6, lines[d].find('[') - 6);
      const std::string rows =
          lines[d].substr(name.size() + 7, lines[d].find(']') - name.size() - 7);
      // The copies: loops over the tile's rows that do not accumulate (a streamed store, after
      // "else", keeps loops of its own). The first is the load, from a value where the tile
      // starts from one (in the first iteration of loops outside alone: "? 0.0f :").
      std::vector<size_t> copies;
      for (size_t c = d + 1; c < lines.size() && lines[c].rfind("float tile_v", 0) != 0; ++c)
        if (lines[c].rfind("for (", 0) == 0 && lines[c].find(name + "[") != std::string::npos &&
            lines[c].find("+=") == std::string::npos && lines[c - 1] != "else")
          copies.push_back(c);
      ASSERT_GE(copies.size(), 1u) << name;
      const std::string load = lines[copies[0]].substr(lines[copies[0]].rfind(" = "));
      const bool loads =
          load.find('[') != std::string::npos && load.find(" ? ") == std::string::npos;
      for (size_t c : copies) {
        ASSERT_GE(c, 2u);
        EXPECT_EQ(lines[c - 1].rfind("for (", 0), 0u) << lines[c];
        EXPECT_EQ(lines[c - 2] == "#pragma GCC unroll " + rows, loads) << lines[c];
      }
      (loads ? unrolled : looped) += int(copies.size());
    }
  }
  EXPECT_GE(unrolled, 2);
  EXPECT_GE(looped, 1);
}

// maxpool2d and avgpool2d take their window into 8 x 32 tiles of y (pixels x channels). Every
// window loop changes the corners, so the test of the tile's corners sits in front of the tile,
// each branch with a tile of its own (one both shared lived on the stack), where conv2d's sits
// inside the window (its input channels run between the test and the tile). A tile whose corners
// fall outside reads each pixel's row of channels through a pointer, x's row or a row of the
// fill (register_tiles.h), where its channels are in range. Tiles across the
// border, wholly in the padding, pixels and channels left over: bit for bit (max exactly; a mean
// without reassociation). conv2d has five tiles: 6 pixels x 64 channels, 2 x 64 for the pixels
// left over, and a run of 64 channels for the last pixel left over; 7 x 64 where a row's pixels
// are a multiple of 7, and its run of 64 (which then runs no pixel).
TEST(CBackend, PoolingTestsItsTilesOutsideTheWindow) {
  auto tiles = [](const std::string& src) {
    size_t n = 0;
    for (size_t at = src.find("float tile_v"); at != std::string::npos;
         at = src.find("float tile_v", at + 1))
      ++n;
    return n;
  };
  // The tiles of AVX-512 (on a host without it, the printed text alone).
  CCompileOptions v4;
  v4.target = "x86-64-v4";
  EXPECT_EQ(tiles(emit_c(optimize(forward_program(find_op("conv2d"), DType::f32)), v4)), 5u);
  for (const char* name : {"maxpool2d", "avgpool2d"}) {
    Program p = optimize(forward_program(find_op(name), DType::f32));
    std::string src = emit_c(p);
    // Tested corners, else rows through pointers where the channels are in range, else checked.
    EXPECT_EQ(tiles(src), 3u) << src;
    EXPECT_NE(src.find("const float *row_"), std::string::npos) << src;
    CCompileOptions exact;
    exact.reassociate = false;
    auto bitwise = compile_c(p, exact);
    for (auto [k, stride, pad] : {std::tuple{3, 2, 1}, {2, 1, 1}, {3, 1, 0}, {4, 3, 3}}) {
      ParamMap params = {{"k", k}, {"stride", stride}};
      if (std::string(name) == "maxpool2d") params["pad"] = pad;
      TensorMap in =
          testing::random_inputs(p, {{"x", {2, 11, 37, 70}}}, k * 100 + stride * 10 + pad);
      TensorMap want = interpret(p, in, params);
      EXPECT_TRUE(testing::same_outputs(want, bitwise->run(in, params))) << name << k << stride;
    }
  }
}

// conv2d's border tiles read each pixel's row of input channels through a pointer and a step
// bound per row of the tile in front of the channels' loop (LoopPlan::tile_steps): the row, or
// the fill with a step of 0 where the pixel lies in the padding. Tiles wholly in the padding,
// half in it, with a stride and a dilation, against the interpreter bit for bit, f32 and f64.
TEST(CBackend, Conv2dBorderTilesReadRowsBySteps) {
  for (DType dtype : {DType::f32, DType::f64}) {
    Program p = optimize(forward_program(find_op("conv2d"), dtype));
    Program planned = plan_cpu(p, {});
    int steps = 0;
    for (auto& b : planned.blocks)
      for (auto& l : b.loops)
        if (!l.plan.tile_steps.empty()) {
          ++steps;
          const Loop& channels = b.loops[size_t(l.plan.tile_steps_at)];
          EXPECT_EQ(l.plan.tile_steps[0].second.back()->var, channels.var) << print(planned);
        }
    EXPECT_GE(steps, 2) << print(planned);  // the tiles of 6 pixels and of 2
    std::string src = emit_c(p);
    EXPECT_NE(src.find("_step["), std::string::npos) << src;
    CCompileOptions exact;
    exact.reassociate = false;
    auto bitwise = compile_c(p, exact);
    uint64_t seed = 3;
    for (auto [stride, pad, dilation] : {std::tuple{1, 1, 1}, {2, 2, 2}, {1, 3, 1}, {3, 4, 1}}) {
      ParamMap params = {{"stride", stride}, {"pad", pad}, {"dilation", dilation}};
      TensorMap in =
          testing::random_inputs(p, {{"x", {2, 5, 13, 3}}, {"w", {70, 3, 3, 3}}}, seed++);
      TensorMap want = interpret(p, in, params), got = testing::nan_like(want);
      bitwise->run_into(in, got, params);
      EXPECT_TRUE(testing::same_outputs(want, got))
          << dtype_name(dtype) << " " << stride << " " << pad << " " << dilation;
    }
  }
}

// A pool's window reads nothing that all of a tile's rows share: its tiles are runs of 64
// channels of one pixel, vectorized rather than unrolled (LoopPlan::unroll), where conv2d's
// (whose weights every row of the tile reads) keep 6 rows, and its pixels left over run such
// runs.
TEST(CBackend, PoolTilesAreRunsOfChannels) {
  Program pool = plan_cpu(optimize(forward_program(find_op("maxpool2d"), DType::f32)), {});
  Program conv = plan_cpu(optimize(forward_program(find_op("conv2d"), DType::f32)), {});
  auto tile_loops = [](const Program& p) {
    std::set<int> sizes;
    for (auto& b : p.blocks)
      for (auto& l : b.loops)
        if (l.plan.tile) sizes.insert(l.plan.tile);
    return sizes;
  };
  EXPECT_EQ(tile_loops(pool), std::set<int>{1}) << print(pool);
  EXPECT_EQ(tile_loops(conv), (std::set<int>{1, 2})) << print(conv);
  EXPECT_EQ(emit_c(optimize(forward_program(find_op("maxpool2d"), DType::f32))).find("unroll"),
            std::string::npos);
}

// Where every load that moves with a tile's rows moves with its columns too (depthwise conv2d's
// pixels and channels), the loop over column tiles runs inside the loop over row tiles, so each
// tile reads whole pixels; where some operand has rows alone (matmul's a[i, k], conv2d's x over
// input channels) the column tiles stay outside, one panel of the other operand kept in cache
// across the row tiles (uops/passes/reduction_tiling.h).
TEST(CBackend, ColumnTilesRunInsideRowTilesOnlyWhereNoOperandHasRowsAlone) {
  // In every register tile of `p` (a block ending in unrolled rows r and columns c): whether the
  // loop that moves the written element's axis along with c runs inside the one that moves the
  // axis along with r; nullopt where the blocks disagree or there is no tile.
  auto columns_inside = [](const Program& p) -> std::optional<bool> {
    std::optional<bool> inside;
    for (auto& b : p.blocks) {
      const size_t n = b.loops.size();
      if (n < 4 || !b.loops[n - 2].plan.unroll || b.loops.back().stmts.empty()) continue;
      const Stmt& s = b.loops.back().stmts[0];
      size_t tj = n, ti = n;
      for (size_t x = 0; x + 2 < n; ++x)
        for (auto& e : s.index) {
          if (!uses_var(e, b.loops[x].var)) continue;
          if (uses_var(e, b.loops[n - 1].var)) tj = x;
          if (uses_var(e, b.loops[n - 2].var)) ti = x;
        }
      if (tj == n || ti == n) continue;
      if (inside && *inside != (tj > ti)) return std::nullopt;
      inside = tj > ti;
    }
    return inside;
  };
  for (int vector_bytes : {16, 32, 64}) {
    CpuTarget t;
    t.vector_bytes = vector_bytes;
    auto planned = [&](const std::string& op) {
      return plan_cpu(optimize(forward_program(find_op(op), DType::f32)), t);
    };
    Program depthwise = planned("depthwise_conv2d"), conv = planned("conv2d"),
            matmul = planned("matmul");
    EXPECT_EQ(columns_inside(depthwise), std::optional<bool>(true)) << vector_bytes << "\n"
                                                                    << print(depthwise);
    EXPECT_EQ(columns_inside(conv), std::optional<bool>(false)) << vector_bytes << "\n"
                                                                << print(conv);
    EXPECT_EQ(columns_inside(matmul), std::optional<bool>(false)) << vector_bytes << "\n"
                                                                  << print(matmul);
  }
}

// A tile starts from a constant without loading its elements only where they hold it: the
// initial zero of depthwise conv2d's, conv2d's and avgpool's outputs (their first and only
// writers, over exclusive loops), maxpool's -inf (one block fills the output first), and
// matmul's zeros in the first of its reduction tiles alone (they revisit the tile's elements:
// LoopPlan::tile_start_first). So do the tiles of the rows and columns left over, after a tile
// of the same output: they are parts of one block (Block::partition), whose other parts store
// other elements (ir::value_at_start). The tests above and
// MatmulTilesStartFromZeroInTheFirstReductionTile check the values.
TEST(CBackend, TilesStartFromWhatTheirElementsHold) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* op;
    std::optional<double> start;
    size_t first;  // loops in whose first iteration alone the tile starts there
  };
  for (auto [name, start, first] : {Case{"depthwise_conv2d", 0.0, 0},
                                    {"avgpool2d", 0.0, 0},
                                    {"conv2d", 0.0, 0},
                                    {"maxpool2d", -inf, 0},
                                    {"matmul", 0.0, 1}}) {
    Program p = plan_cpu(optimize(forward_program(find_op(name), DType::f32)), {});
    int tiles = 0;
    for (auto& b : p.blocks)
      for (auto& l : b.loops)
        if (l.plan.tile) {
          if (tiles++ == 0 || l.plan.tile_start) {
            EXPECT_EQ(l.plan.tile_start, start) << name << "\n" << print(p);
            EXPECT_EQ(l.plan.tile_start_first.size(), first) << name << "\n" << print(p);
          }
        }
    EXPECT_GT(tiles, 0) << name;
  }
  // The loop over reduction tiles is printed as the test of the start.
  std::string src = emit_c(optimize(forward_program(find_op("matmul"), DType::f32)));
  EXPECT_NE(src.find(" == 0) ? 0.0f : c_["), std::string::npos) << src;
}

// matmul's tiles start from zero in the first reduction tile and load what the tiles before
// left in the others: over reductions of one tile, of several and of a part of one, outputs
// small enough for thread copies (each thread's own tiles start from its zeroed copy) and too
// large for them, at 1 and 2 threads, every element is the interpreter's (bit for bit without
// reassociation; with it within 1e-3: 600 products summed in another order, the threads' copies
// added in the order they finish, differ by 1e-5 here, and a wrong start by whole products).
TEST(CBackend, MatmulTilesStartFromZeroInTheFirstReductionTile) {
  Program p = optimize(forward_program(find_op("matmul"), DType::f32));
  // Each thread count's bitwise and reassociating kernels; the interpreter once per shape.
  std::vector<std::pair<std::unique_ptr<Executable>, std::unique_ptr<Executable>>> kernels;
  for (int threads : {1, 2}) {
    CCompileOptions exact, fast;
    exact.reassociate = false;
    exact.threads = fast.threads = threads;
    kernels.emplace_back(compile_c(p, exact), compile_c(p, fast));
  }
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{13, 600, 70},
                         {12, 256, 64},
                         {7, 3, 130},
                         {520, 300, 512}}) {
    TensorMap in = testing::random_inputs(p, {{"a", {m, k}}, {"b", {k, n}}}, uint64_t(k));
    TensorMap want = interpret(p, in);
    for (size_t t = 0; t < kernels.size(); ++t) {
      TensorMap got = testing::nan_like(want), quick = testing::nan_like(want);
      kernels[t].first->run_into(in, got);
      kernels[t].second->run_into(in, quick);
      std::string at = std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n) +
                       ", " + std::to_string(t + 1) + "T";
      EXPECT_TRUE(testing::same_outputs(want, got)) << at;
      EXPECT_TRUE(testing::same_outputs(want, quick, 1e-3)) << at;
    }
  }
}

// matmul's and batched matmul's tiles store their box in the first reduction tile: the zeros of
// the box are written only where that round does not run (a reduction of no elements) or the
// block sums into thread copies (a small output), LoopPlan::fill_unless. Into outputs of NaN,
// over reductions of none, part of a tile and several tiles, outputs small enough for the copies
// and too large, 1 and 2 threads: every element is the interpreter's.
TEST(CBackend, ZerosBeforeTilesThatStartFromThemRunOnlyWhereTheTilesDoNot) {
  using Shapes = std::map<std::string, std::vector<int64_t>>;
  struct Case {
    const char* op;
    std::vector<Shapes> runs;
  };
  auto mm = [](int64_t m, int64_t k, int64_t n) { return Shapes{{"a", {m, k}}, {"b", {k, n}}}; };
  auto bmm = [](int64_t m, int64_t k, int64_t n) {
    return Shapes{{"a", {3, m, k}}, {"b", {3, k, n}}};
  };
  const std::vector<Case> cases = {
      // 12 x 12000 x 64: an output small enough for thread copies and a reduction long enough
      // for their team at 2 threads (at 13 x 600 x 70 the copies' team would not start).
      {"matmul",
       {mm(520, 0, 512), mm(12, 0, 64), mm(13, 600, 70), mm(12, 12000, 64), mm(520, 300, 512)}},
      {"batched_matmul", {bmm(260, 0, 256), bmm(12, 0, 64), bmm(7, 300, 130), bmm(260, 40, 256)}}};
  for (const Case& c : cases) {
    Program p = optimize(forward_program(find_op(c.op), DType::f32));
    Program planned = plan_cpu(p, {});
    int guarded = 0;
    for (size_t bi = 0; bi < planned.blocks.size(); ++bi)
      if (int n = planned.blocks[bi].loops[0].plan.fill_unless) {
        ++guarded;
        bool first_round = false;
        for (auto& l : planned.blocks[bi + size_t(n)].loops)
          first_round |= !l.plan.tile_start_first.empty();
        EXPECT_TRUE(first_round) << c.op << " block " << bi << "\n" << print(planned);
      }
    EXPECT_EQ(guarded, 1) << c.op << "\n" << print(planned);
    std::vector<std::pair<std::unique_ptr<Executable>, std::unique_ptr<Executable>>> kernels;
    for (int threads : {1, 2}) {
      CCompileOptions exact, fast;
      exact.reassociate = false;
      exact.threads = fast.threads = threads;
      kernels.emplace_back(compile_c(p, exact), compile_c(p, fast));
    }
    for (const Shapes& shapes : c.runs) {
      TensorMap in = testing::random_inputs(p, shapes, uint64_t(shapes.at("b")[1]));
      TensorMap want = interpret(p, in);  // once per shape: the sanitized builds' largest cost
      for (size_t t = 0; t < kernels.size(); ++t) {
        TensorMap got = testing::nan_like(want), quick = testing::nan_like(want);
        kernels[t].first->run_into(in, got);
        kernels[t].second->run_into(in, quick);
        std::string at = std::string(c.op) + " " + std::to_string(shapes.at("a").back()) + " " +
                         std::to_string(t + 1) + "T";
        EXPECT_TRUE(testing::same_outputs(want, got)) << at;
        EXPECT_TRUE(testing::same_outputs(want, quick, 1e-3)) << at;
      }
    }
  }
}

// Where a tile starts from the constant a fill wrote and stores its box, the fill of the box is
// dead: the output's fill keeps only the rows and columns the tiles leave over
// (fill_trimming.h). Into outputs of NaN, at sizes that leave both over, one of them or neither,
// with the window across the border, every element is the interpreter's.
TEST(CBackend, FillsKeepOnlyWhatNoTileStores) {
  using Shapes = std::map<std::string, std::vector<int64_t>>;
  struct Case {
    const char* op;
    std::vector<std::pair<Shapes, ParamMap>> runs;
  };
  const std::vector<Case> cases = {
      {"depthwise_conv2d",
       {{{{"x", {1, 5, 19, 37}}, {"w", {3, 3, 37}}}, {{"stride", 1}, {"pad", 1}}},
        {{{"x", {2, 4, 16, 64}}, {"w", {3, 3, 64}}}, {{"stride", 1}, {"pad", 1}}},
        {{{"x", {1, 9, 35, 32}}, {"w", {3, 3, 32}}}, {{"stride", 2}, {"pad", 0}}}}},
      {"avgpool2d",
       {{{{"x", {2, 7, 9, 70}}}, {{"k", 2}, {"stride", 2}}},
        {{{"x", {1, 4, 4, 128}}}, {{"k", 3}, {"stride", 1}}}}},
      {"maxpool2d",
       {{{{"x", {2, 7, 9, 70}}}, {{"k", 3}, {"stride", 2}, {"pad", 1}}},
        {{{"x", {1, 6, 6, 64}}}, {{"k", 2}, {"stride", 2}, {"pad", 0}}}}},
  };
  for (const Case& c : cases) {
    Program p = optimize(forward_program(find_op(c.op), DType::f32));
    Program planned = plan_cpu(p, {});
    const int y = planned.find_tensor("y");
    int fills = 0, whole = 0;
    for (auto& b : planned.blocks) {
      const auto& stmts = b.loops.back().stmts;
      if (stmts.size() == 1 && stmts[0].kind == StmtKind::assign && stmts[0].tensor == y &&
          stmts[0].value->kind == ValueKind::Const) {
        ++fills;
        whole += fills_whole(planned, b, y);
      }
    }
    EXPECT_GE(fills, 1) << c.op << "\n" << print(planned);
    EXPECT_EQ(whole, 0) << c.op << "\n" << print(planned);
    CCompileOptions exact, fast;
    exact.reassociate = false;
    exact.threads = 2;
    auto bitwise = compile_c(p, exact), reassociating = compile_c(p, fast);
    for (auto& [shapes, params] : c.runs) {
      TensorMap in = testing::random_inputs(p, shapes, uint64_t(shapes.at("x")[2]));
      TensorMap want = interpret(p, in, params);
      TensorMap got = testing::nan_like(want), quick = testing::nan_like(want);
      bitwise->run_into(in, got, params);
      reassociating->run_into(in, quick, params);
      EXPECT_TRUE(testing::same_outputs(want, got)) << c.op << " " << shapes.at("x")[2];
      EXPECT_TRUE(testing::same_outputs(want, quick, 1e-5)) << c.op << " " << shapes.at("x")[2];
    }
  }
}

// A scatter that adds each of its values into its own element (avgpool2d's gradient at a stride
// equal to its window, the stride and window fixed) stores c + value there, and the fill in front
// of it keeps only what it leaves over (fill_trimming.h): at sizes that leave rows and columns
// over and that leave none, at 1 and 2 threads, into outputs of NaN, every element is the
// interpreter's. Windows that overlap (k 3, stride 2), leave gaps (k 2, stride 3) or are not
// fixed keep the whole fill and the sum.
TEST(CBackend, AScatterThatStoresEachElementOnceTakesItsFillsPlace) {
  struct Case {
    ParamMap fixed;
    bool trimmed;
  };
  const std::vector<Case> cases = {{{{"k", 2}, {"stride", 2}}, true},
                                   {{{"k", 3}, {"stride", 2}}, false},
                                   {{{"k", 2}, {"stride", 3}}, false},
                                   {{}, false}};
  const Program grad = optimize(gradient(find_op("avgpool2d").build(DType::f32), {"x"}));
  for (const Case& c : cases) {
    const Program p = fix_params(grad, c.fixed);
    const std::string at = c.fixed.empty() ? "k, stride not fixed"
                                           : "k " + std::to_string(c.fixed.at("k")) + " stride " +
                                                 std::to_string(c.fixed.at("stride"));
    Program planned = plan_cpu(codegen::with_own_zeros(p), {});
    const int dx = planned.find_tensor("dx");
    int whole = 0, stores = 0, sums = 0;
    for (auto& b : planned.blocks)
      for (auto& s : b.loops.back().stmts) {
        if (s.tensor != dx) continue;
        bool fill = s.kind == StmtKind::assign && s.value->kind == ValueKind::Const;
        whole += fill && fills_whole(planned, b, dx);
        stores += !fill && s.kind == StmtKind::assign;
        sums += s.kind == StmtKind::accumulate;
      }
    EXPECT_EQ(whole, c.trimmed ? 0 : 1) << at << "\n" << print(planned);
    EXPECT_EQ(stores, c.trimmed ? 1 : 0) << at << "\n" << print(planned);
    EXPECT_EQ(sums, c.trimmed ? 0 : 1) << at << "\n" << print(planned);
    const int64_t k = c.fixed.empty() ? 2 : c.fixed.at("k"),
                  stride = c.fixed.empty() ? 2 : c.fixed.at("stride");
    for (int threads : {1, 2}) {
      CCompileOptions exact, fast;
      exact.reassociate = false;
      exact.threads = fast.threads = threads;
      auto bitwise = compile_c(p, exact), reassociating = compile_c(p, fast);
      for (std::array<int64_t, 3> x : {std::array<int64_t, 3>{8, 12, 64}, {7, 9, 37}, {5, 3, 16}}) {
        const int64_t oh = (x[0] - k) / stride + 1, ow = (x[1] - k) / stride + 1;
        TensorMap in = testing::random_inputs(
            p, {{"x", {2, x[0], x[1], x[2]}}, {"dy", {2, oh, ow, x[2]}}}, uint64_t(x[0]));
        const ParamMap params = {{"k", k}, {"stride", stride}};
        TensorMap want = interpret(p, in, params);
        TensorMap got = testing::nan_like(want), quick = testing::nan_like(want);
        bitwise->run_into(in, got, params);
        reassociating->run_into(in, quick, params);
        std::string shape = at + ", x " + std::to_string(x[0]) + " x " + std::to_string(x[1]) +
                            " x " + std::to_string(x[2]) + ", " + std::to_string(threads) + "T";
        EXPECT_TRUE(testing::same_outputs(want, got)) << shape;
        EXPECT_TRUE(testing::same_outputs(want, quick, 1e-5)) << shape;
      }
    }
  }
}

// Each row tile of a planned program (LoopPlan::tile of 2 or more loops: rows, then columns):
// the loop over its rows, and its rows x columns where both are constants.
struct RowTile {
  const Loop* rows;
  std::optional<std::pair<int64_t, int64_t>> size;
};
std::vector<RowTile> row_tiles(const Program& p) {
  std::vector<RowTile> out;
  for (auto& b : p.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k) {
      if (b.loops[k].plan.tile < 2) continue;
      const Loop& r = b.loops[b.loops.size() - 2];
      int64_t rows = 0, cols = 0;
      out.push_back({&r, std::nullopt});
      if (is_const(r.end, &rows) && is_const(b.loops.back().end, &cols))
        out.back().size = {rows, cols};
    }
  return out;
}

// conv2d's pixels run in tiles of 7 where a row's count is a multiple of 7 and of 6 elsewhere:
// two parts of one block over the same pixels, one of them empty at run time, in one partition
// (Block::partition), so both tiles start from zero and the output's zeros are written nowhere
// either part stores (fill_trimming adds the two boxes). Tiles of 7 only for a contraction's
// rows along a range that divides: not depthwise conv2d's pixels (no operand without its
// channels), not matmul's rows. Into outputs of NaN, at widths that are multiples of 7 and not,
// strided, dilated and with channels left over, at 1 and 2 threads, every element is the
// interpreter's; at 56 and 30 pixels a row with 64 output channels, the zeros cover nothing.
TEST(CBackend, Conv2dPixelTilesOfSevenWhereARowIsAMultipleOfSeven) {
  auto heights = [](const Program& p) {
    std::multiset<int64_t> rows;
    for (const RowTile& t : row_tiles(p))
      if (t.size) rows.insert(t.size->first);
    return rows;
  };
  for (const char* name : {"depthwise_conv2d", "matmul"})
    EXPECT_EQ(heights(plan_cpu(optimize(forward_program(find_op(name), DType::f32)), {})).count(7),
              0u)
        << name;
  Program p = optimize(forward_program(find_op("conv2d"), DType::f32));
  Program planned = plan_cpu(p, {});
  std::multiset<int64_t> rows = heights(planned);
  EXPECT_EQ(rows.count(7), 1u) << print(planned);
  EXPECT_EQ(rows.count(6), 1u) << print(planned);
  std::set<int> partitions;
  for (auto& b : planned.blocks)
    for (auto& l : b.loops)
      if (l.plan.tile) {
        partitions.insert(b.partition);
        EXPECT_EQ(l.plan.tile_start, 0.0) << print(planned);
      }
  EXPECT_EQ(partitions.size(), 1u) << print(planned);
  EXPECT_NE(*partitions.begin(), 0) << print(planned);
  // The elements the output's zeros still write at a width (bounds free of loop variables).
  const int y = planned.find_tensor("y");
  auto zeros = [&](int64_t width) {
    TensorMap in = testing::random_inputs(p, {{"x", {1, 3, width, 8}}, {"w", {64, 3, 3, 8}}}, 1);
    Binding bound = bind(planned, in, {{"stride", 1}, {"pad", 1}, {"dilation", 1}});
    IndexEnv env = bound.env();  // refers to `bound`
    int64_t n = 0;
    for (auto& b : planned.blocks) {
      const auto& stmts = b.loops.back().stmts;
      if (stmts.size() != 1 || stmts[0].kind != StmtKind::assign || stmts[0].tensor != y) continue;
      int64_t elements = 1;
      for (auto& l : b.loops)
        elements *= std::max<int64_t>(evaluate(l.end, env) - evaluate(l.start, env), 0);
      n += elements;
    }
    return n;
  };
  // 3 rows of 64 channels: 56 pixels in tiles of 7 (the box of the first tile, of 6, is empty),
  // 30 in tiles of 6, 32 in 5 tiles of 6 and the 2 pixels the tile of 2 starts from zeros.
  EXPECT_EQ(zeros(56), 0) << print(planned);
  EXPECT_EQ(zeros(30), 0) << print(planned);
  EXPECT_EQ(zeros(32), 2 * 64 * 3) << print(planned);
  std::vector<std::unique_ptr<Executable>> kernels;
  for (int threads : {1, 2}) {
    CCompileOptions exact;
    exact.reassociate = false;
    exact.threads = threads;
    kernels.push_back(compile_c(p, exact));
  }
  struct Run {
    int64_t width, channels, stride, pad, dilation;
  };
  for (auto [width, channels, stride, pad, dilation] : {Run{7, 64, 1, 1, 1},
                                                        {14, 64, 1, 1, 1},
                                                        {28, 70, 1, 1, 1},
                                                        {56, 64, 1, 1, 1},
                                                        {13, 64, 1, 1, 1},
                                                        {30, 64, 1, 1, 1},
                                                        {32, 70, 1, 1, 1},
                                                        {29, 64, 2, 1, 1},
                                                        {27, 64, 2, 0, 1},
                                                        {18, 64, 1, 1, 2}}) {
    ParamMap params = {{"stride", stride}, {"pad", pad}, {"dilation", dilation}};
    TensorMap in = testing::random_inputs(p, {{"x", {2, 3, width, 5}}, {"w", {channels, 3, 3, 5}}},
                                          uint64_t(width));
    TensorMap want = interpret(p, in, params);
    for (size_t t = 0; t < kernels.size(); ++t) {
      TensorMap got = testing::nan_like(want);
      kernels[t]->run_into(in, got, params);
      EXPECT_TRUE(testing::same_outputs(want, got))
          << width << " pixels, stride " << stride << ", " << t + 1 << "T";
    }
  }
}

// avgpool2d's division by k · k, a map of the whole output after the tiles, moves into the
// tile's store and keeps only the columns the tiles leave over (epilogue_folding.h); the outputs
// of FillsKeepOnlyWhatNoTileStores above check it element by element. Without reassociation it
// divides, with it multiplies by the reciprocal, in the tile as in the map.
TEST(CBackend, AMapAfterATileMovesIntoItsStore) {
  for (bool reassociate : {false, true}) {
    Program p = optimize(forward_program(find_op("avgpool2d"), DType::f32));
    Program planned = plan_cpu(p, {reassociate, false});
    const int y = planned.find_tensor("y");
    int stores = 0, whole_maps = 0;
    for (auto& b : planned.blocks) {
      for (auto& l : b.loops) stores += l.plan.tile_store != nullptr;
      const Stmt& s = b.loops.back().stmts[0];
      bool reads_y = false;
      for_each_load(s.value, [&](const ValueNode& n) { reads_y |= n.tensor == y; });
      int64_t start = -1;
      whole_maps +=
          s.tensor == y && reads_y && is_const(b.loops.back().start, &start) && start == 0;
    }
    EXPECT_EQ(stores, 1) << print(planned);
    EXPECT_EQ(whole_maps, 0) << print(planned);
    CCompileOptions options;
    options.reassociate = reassociate;
    std::string src = emit_c(p, options);
    EXPECT_NE(src.find(reassociate ? "= tile_v4[v25] * (1.0f / " : "= tile_v4[v25] / "),
              std::string::npos)
        << src;
  }
}

// A tile that starts from a known value and stores an output no later block loads streams its
// rows around the cache when the output holds at least kStreamBytes (register_tiles.h):
// depthwise conv2d's and maxpool2d's; not avgpool2d's, whose division then reads the output, nor
// matmul's, which loads it. At 8 MiB and more, with rows that start a cache line and rows that do
// not (520 channels: a pixel is 65 lines), at 1 and 2 threads, the output is the interpreter's;
// the same below CCompileOptions::tile_stream_bytes, where each tile stores plainly and fetches the
// next tile's rows for writing, the last tile's past the output's end.
TEST(CBackend, LargeWriteOnceTilesStreamTheirStores) {
  auto streamed = [](const char* name) {
    Program p = plan_cpu(optimize(forward_program(find_op(name), DType::f32)), {});
    for (auto& b : p.blocks)
      for (auto& l : b.loops)
        if (l.plan.tile_stream) return true;
    return false;
  };
  EXPECT_TRUE(streamed("depthwise_conv2d"));
  EXPECT_TRUE(streamed("maxpool2d"));
  EXPECT_FALSE(streamed("avgpool2d"));
  EXPECT_FALSE(streamed("matmul"));

  // f32 rows and f64 rows (stream_rowf, stream_row: each as wide as the target's vectors).
  for (DType dtype : {DType::f64, DType::f32}) {
    Program p = optimize(forward_program(find_op("depthwise_conv2d"), dtype));
    EXPECT_NE(emit_c(p).find(dtype == DType::f32 ? "stream_rowf(" : "stream_row("),
              std::string::npos);
    ParamMap params = {{"stride", 1}, {"pad", 1}};
    int64_t rows = dtype == DType::f32 ? 64 : 32;
    TensorMap in = testing::random_inputs(p, {{"x", {1, rows, 64, 520}}, {"w", {3, 3, 520}}}, 7);
    TensorMap want = interpret(p, in, params);
    ASSERT_GE(want.at("y").bytes.size(), size_t(kStreamBytes));
    // The stores are as wide as the target's vectors: each width on an x86-64 host.
    same_at_every_width(p, in, params, want, "stream_row", dtype_name(dtype));
    same_at_every_width(p, in, params, want, "uops_prefetchw(",
                        std::string(dtype_name(dtype)) + " plain", int64_t(1) << 62);
  }
}

// A block whose one statement assigns a row of an output that neither it nor a later block reads
// streams the row around the cache where the output holds at least kStreamBytes, through a local
// array (LoopPlan::stream): layernorm's y and log_softmax's in their row-local runs; not
// softmax's, whose last block scales y in place. Outside a row-local run, a block on a team of
// its own whose row calls no math function: add's and relu's, not gelu's. Rows of every length
// left over (lines of 16 f32 or 8 f64, rows that start mid-line, rows under a line), with the
// loads that do not move along the row read once before it (layernorm's mean and variance), at 1
// and 2 threads and every vector width, give the interpreter's bits.
TEST(CBackend, LargeWriteOnceRowsStreamTheirStores) {
  auto streamed = [](const Program& p) {
    int n = 0;
    for (auto& b : plan_cpu(p, {}).blocks) n += b.loops.back().plan.stream;
    return n;
  };
  auto forward = [](const char* name, DType dtype = DType::f32) {
    return optimize(forward_program(find_op(name), dtype));
  };
  EXPECT_EQ(streamed(forward("layernorm")), 1);
  EXPECT_EQ(streamed(forward("log_softmax")), 1);
  EXPECT_EQ(streamed(forward("softmax")), 0);
  EXPECT_EQ(streamed(forward("relu")), 1);
  EXPECT_EQ(streamed(forward("add")), 1);
  EXPECT_EQ(streamed(forward("gelu")), 0);  // tanh

  for (DType dtype : {DType::f32, DType::f64}) {
    Program p = forward("layernorm", dtype);
    EXPECT_NE(emit_c(p).find("_read1 = "), std::string::npos);  // the mean and the variance
    const int64_t element = dtype == DType::f32 ? 4 : 8;
    // Rows of 1027 (each but the first starts mid-line), of 7 (under a line), of 1024 (whole
    // lines).
    for (int64_t n : {int64_t(1027), int64_t(7), int64_t(1024)}) {
      const int64_t m = kStreamBytes / (n * element) + 1;
      TensorMap in = testing::random_inputs(p, {{"x", {m, n}}, {"gamma", {n}}, {"beta", {n}}}, 5);
      TensorMap want = interpret(p, in, {});
      ASSERT_GE(want.at("y").bytes.size(), size_t(kStreamBytes));
      same_at_every_width(p, in, {}, want, "_row);",
                          std::string(dtype_name(dtype)) + " " + std::to_string(n));
    }
    Program add = forward("add", dtype);
    for (int64_t n : {int64_t(1027), int64_t(7)}) {
      const int64_t m = kStreamBytes / (n * element) + 1;
      TensorMap in = testing::random_inputs(add, {{"x", {m, n}}, {"y", {m, n}}}, 6);
      same_at_every_width(add, in, {}, interpret(add, in, {}), "_row);",
                          "add " + std::string(dtype_name(dtype)) + " " + std::to_string(n));
    }
  }
}

// matmul's rows, whose range cannot raise, run in tiles of 6, the rows left over in tiles of 4,
// then (AVX-512) of 2; every count of rows left over, 0 to 5, with columns left over, at 1 and 2
// threads: bit for bit;
// conv2d's output pixels, whose range divides by the stride, in tiles of 6, the pixels left over
// in tiles of 2 counted on from them (and in tiles of 7 where a row is a multiple of 7:
// Conv2dPixelTilesOfSevenWhereARowIsAMultipleOfSeven). matmul's columns left over run in tiles of
// 16; conv2d's, whose loads are checked, do not. Every tile's rows are unrolled (a 12 x 32 tile GCC
// otherwise kept on the stack). Every count of pixels left over, across the border and with a
// stride, and a depthwise convolution's: bit for bit.
TEST(CBackend, RowTilesShrinkOverTheRowsAndColumnsLeftOver) {
  auto tiles = [](const char* name) {
    Program p = plan_cpu(optimize(forward_program(find_op(name), DType::f32)), {});
    std::vector<std::pair<int64_t, int64_t>> sizes;
    for (const RowTile& t : row_tiles(p)) {
      EXPECT_TRUE(t.rows->plan.unroll) << name << "\n" << print(p);
      if (t.size) sizes.push_back(*t.size);
    }
    return sizes;
  };
  using Tiles = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(tiles("matmul"), (Tiles{{6, 64}, {6, 16}, {4, 64}, {4, 16}, {2, 64}, {2, 16}}));
  EXPECT_EQ(tiles("conv2d"), (Tiles{{6, 64}, {2, 64}, {7, 64}}));
  {
    Program p = optimize(forward_program(find_op("matmul"), DType::f32));
    for (int threads : {1, 2}) {
      CCompileOptions exact;
      exact.reassociate = false;
      exact.threads = threads;
      auto kernel = compile_c(p, exact);
      for (int64_t m = 12; m < 18; ++m) {  // 2 tiles of 6, then 0 to 5 rows left over
        TensorMap in = testing::random_inputs(p, {{"a", {m, 40}}, {"b", {40, 150}}}, uint64_t(m));
        TensorMap want = interpret(p, in), got = testing::nan_like(want);
        kernel->run_into(in, got);
        EXPECT_TRUE(testing::same_outputs(want, got)) << m << " rows, " << threads << " threads";
      }
    }
  }
  for (const char* name : {"conv2d", "depthwise_conv2d"}) {
    Program p = optimize(forward_program(find_op(name), DType::f32));
    CCompileOptions exact;
    exact.reassociate = false;
    auto kernel = compile_c(p, exact);
    uint64_t seed = 1;
    for (int64_t width = 5; width <= 14; ++width)
      for (int64_t stride : {1, 2}) {
        // 70 channels out: a tile of 64 and 6 left over.
        const bool depthwise = std::string(name) == "depthwise_conv2d";
        ParamMap params = {{"stride", stride}, {"pad", 1}};
        std::map<std::string, std::vector<int64_t>> shapes = {{"x", {2, 3, width, 70}},
                                                              {"w", {3, 3, 70}}};
        if (!depthwise) {
          params["dilation"] = 1;
          shapes = {{"x", {2, 3, width, 8}}, {"w", {70, 3, 3, 8}}};
        }
        TensorMap in = testing::random_inputs(p, shapes, seed++);
        TensorMap want = interpret(p, in, params), got = testing::nan_like(want);
        kernel->run_into(in, got, params);
        EXPECT_TRUE(testing::same_outputs(want, got)) << name << " " << width << " " << stride;
      }
  }
}

// depthwise conv2d's weight gradient slides kw over a row's pixels in register tiles of 3 rows,
// then 1 (reduction_tiling.cpp, contraction_order's slide), by 64 channels, with the images (and
// their rows, from 48 pixels a row) outside the tiles and the window's loops, and the channels the
// tiles leave over in loop order. Windows of 3 x 3, 5 x 5 and 2 x 4 (rows left over, and no whole
// tile of 3), 130 and 64 channels, rows long and short, images under kWindowReduction pixels,
// strides 1 and 2, at 1 and 2 threads, into outputs of NaN: every element of dx and dw is the
// interpreter's, bit for bit.
TEST(CBackend, ADepthwiseWeightGradientSlidesItsWindowBitForBit) {
  Program p = optimize(gradient_program(find_op("depthwise_conv2d"), DType::f32));
  struct Run {
    std::vector<int64_t> x, w;
    int64_t stride, pad;
  };
  const std::vector<Run> runs = {{{2, 4, 50, 130}, {3, 3, 130}, 1, 1},
                                 {{1, 6, 9, 64}, {5, 5, 64}, 1, 2},
                                 {{2, 3, 5, 130}, {2, 4, 130}, 2, 1},
                                 {{1, 7, 52, 64}, {3, 3, 64}, 2, 0}};
  for (int threads : {1, 2}) {
    CCompileOptions exact;
    exact.reassociate = false;
    exact.threads = threads;
    auto kernel = compile_c(p, exact);
    uint64_t seed = 7;
    for (const Run& r : runs) {
      auto out = [&](int a) {
        return (r.x[size_t(a)] + 2 * r.pad - r.w[size_t(a) - 1]) / r.stride + 1;
      };
      std::map<std::string, std::vector<int64_t>> shapes = {
          {"x", r.x}, {"w", r.w}, {"dy", {r.x[0], out(1), out(2), r.x[3]}}};
      ParamMap params = {{"stride", r.stride}, {"pad", r.pad}};
      TensorMap in = testing::random_inputs(p, shapes, seed++);
      TensorMap want = interpret(p, in, params), got = testing::nan_like(want);
      kernel->run_into(in, got, params);
      EXPECT_TRUE(testing::same_outputs(want, got))
          << r.w[0] << " x " << r.w[1] << ", " << r.x[3] << " channels, " << threads << " threads";
    }
  }
}

// matmul's reduction tiles run inside its row tiles' team, each thread keeping its rows in every
// tile (no waiting), rather than a team, and a sleeping worker's wake-up, per reduction tile; and
// its blocks (tiles, the rows and columns they leave over) share one team per kernel
// (c_team_plan.h), whose threads wait only where a block touches what the ones before wrote.
TEST(CBackend, ReductionTilesShareOneTeam) {
  Program p = optimize(forward_program(find_op("matmul"), DType::f32));
  Program planned = plan_cpu(p, {});
  int inside = 0;
  for (auto& b : planned.blocks)
    for (size_t k = 0; k < b.loops.size(); ++k) {
      if (!b.loops[k].plan.nowait) continue;
      ++inside;
      EXPECT_GT(k, 0u) << print(planned);
      EXPECT_EQ(b.loops[k].plan.threads, LoopPlan::Threads::team_if) << print(planned);
    }
  EXPECT_GE(inside, 2) << print(planned);
  std::string src = emit_c(p);
  auto count = [&](const std::string& pattern) {
    std::regex re(pattern);
    return std::distance(std::sregex_iterator(src.begin(), src.end(), re), {});
  };
  EXPECT_EQ(count("#pragma omp parallel"), count("\nint uops_kernel")) << src;
  EXPECT_EQ(count("#pragma omp parallel for"), 0) << src;
  EXPECT_NE(src.find("#pragma omp for collapse(2) schedule(static) nowait"), std::string::npos);
}

// The C printer declares names of its own (tile_v4, row_1, v17_end for an end that
// may raise): a tensor named like one of them is renamed, and the kernel still compiles and
// agrees with the interpreter.
TEST(CBackend, TensorsNamedLikeGeneratedCodeKeepTheirOwnStorage) {
  auto pool = [](const std::string& in, const std::string& out) {
    Graph g;
    g.param("s");
    Node x = g.input(in, 4, DType::f32);
    Node win = g.reindex(x, {"dA0", "(dA1 - 1) / $s + 1", "(dA2 - 1) / $s + 1", "dA3", "3", "3"},
                         {"i0", "i1 * $s - 1 + i4", "i2 * $s - 1 + i5", "i3"}, {x},
                         -std::numeric_limits<double>::infinity());
    g.output(out, g.squeeze(g.reduce(ReduceOp::max, {4, 5}, win), {4, 5}));
    return optimize(lower(g));
  };
  std::string src = emit_c(pool("x", "y"));
  std::set<std::string> generated;
  std::regex names(R"(\b(tile_v\d+|row_\d+|v\d+_end)\b)");
  for (auto it = std::sregex_iterator(src.begin(), src.end(), names); it != std::sregex_iterator();
       ++it)
    generated.insert(it->str());
  for (const char* expected : {"tile_v", "row_", "_end"})
    EXPECT_TRUE(std::any_of(generated.begin(), generated.end(),
                            [&](auto& n) { return n.find(expected) != std::string::npos; }))
        << expected << "\n"
        << src;
  for (const std::string& name : generated) {
    for (bool input : {true, false}) {
      Program p = input ? pool(name, "y") : pool("x", name);
      TensorMap in = testing::random_inputs(p, {{input ? name : "x", {2, 9, 21, 70}}}, 7);
      ParamMap params = {{"s", 2}};
      EXPECT_TRUE(testing::same_outputs(interpret(p, in, params), compile_c(p)->run(in, params)))
          << name;
    }
  }
}

// A tensor never takes a name the kernel needs for something else: a helper it may call (every
// name helper_definitions defines), a macro of the headers it includes (names in capitals alone),
// a name C reserves (a leading underscore). make_names renames each; ops whose kernels call the
// helper or include the header, with a tensor named so, compile and compute as the interpreter.
TEST(CBackend, TensorsNamedLikeWhatTheKernelUsesAreRenamed) {
  std::vector<std::string> names(codegen::helper_names().begin(), codegen::helper_names().end());
  for (const char* n : {"INT64_MAX", "INT32_MIN", "HUGE_VALF", "NAN", "FLT_MAX", "_OPENMP",
                        "__SSE2__", "_CMP_GT_OQ", "__builtin_memcpy", "_mm_stream_ps"})
    names.push_back(n);
  Program p = forward_program(find_op("matmul"), DType::f32);
  for (const std::string& n : names) {
    p.tensors[0].name = n;
    std::string got = codegen::make_names(p).tensors[0];
    EXPECT_NE(got, n);
    EXPECT_EQ(codegen::helper_names().count(got), 0u) << n;
    EXPECT_NE(got[0], '_') << n;
  }
  struct Case {
    const char* op;
    const char* name;
  };
  std::vector<Program> programs;
  std::vector<TensorMap> inputs;
  std::vector<ParamMap> params;
  for (Case c : std::vector<Case>{{"softmax", "reduce_maxf"},
                                  {"log_softmax", "vector_expf"},
                                  {"maxpool2d", "_OPENMP"},
                                  {"depthwise_conv2d", "stream_rowf"},
                                  {"matmul", "uops_load_lanes"},
                                  {"matmul", "INT64_MAX"},
                                  {"gelu", "HUGE_VALF"},
                                  {"argmax", "choosef"},
                                  {"conv2d", "__builtin_memcpy"}}) {
    const OpDef& op = find_op(c.op);
    Program q = optimize(forward_program(op, DType::f32));
    auto shapes = op.example_shapes;
    shapes[c.name] = shapes.at(q.tensors[0].name);
    shapes.erase(q.tensors[0].name);
    q.tensors[0].name = c.name;
    inputs.push_back(testing::random_inputs(q, shapes, 5));
    params.push_back(op.example_params);
    programs.push_back(std::move(q));
  }
  auto exes = compile_c_batch(programs);
  for (size_t i = 0; i < programs.size(); ++i)
    EXPECT_TRUE(testing::same_outputs(interpret(programs[i], inputs[i], params[i]),
                                      exes[i]->run(inputs[i], params[i]), 1e-4))
        << programs[i].tensors[0].name;
}

// The helpers, types and macros the printer defines are named uops_* or UOPS_* (and the
// vectors of a tile's rows of lanes tile_*): matmul's tensors named after them, with columns
// left over that run in rows of lanes, are renamed and compute as the interpreter does.
TEST(CBackend, TensorsNamedLikeTheHelpersAreRenamed) {
  for (auto names : std::vector<std::array<const char*, 3>>{
           {"UOPS_F32_LANES", "uops_f32_lanes", "tile_part"},
           {"UOPS_SIMD", "uops_load_lanes", "UOPS_VECTOR_MATH"}}) {
    Program p = optimize(forward_program(find_op("matmul"), DType::f32));
    for (size_t t = 0; t < p.tensors.size(); ++t) p.tensors[t].name = names[t];
    std::string src = emit_c(p);
    EXPECT_NE(src.find("uops_load_lanes("), std::string::npos);
    TensorMap in = testing::random_inputs(p, {{names[0], {13, 40}}, {names[1], {40, 10}}}, 3);
    CCompileOptions exact;
    exact.reassociate = false;
    EXPECT_TRUE(testing::same_outputs(interpret(p, in, {}), compile_c(p, exact)->run(in, {})))
        << names[0];
  }
}

// linear keeps its dot products (its weights are reused only across the batch): 4 x 4 of them
// share each pass over the input features, 16 SIMD accumulators, and the tiles run in parallel.
// Sizes leave rows and columns over; bit for bit without reassociation.
// A window read shifted along the channels too, y[n, o, c] = max over w of x?[n, o - 2 + w, c + 1]
// with -inf outside: a tile's rows of channels run past x's end in the last tile, so its else
// must test them per element (LoopPlan::tile_rows' own test), where the other border tiles read
// rows through pointers. Bit for bit against the interpreter.
TEST(CBackend, RowsThatRunPastTheTensorAreTestedPerElement) {
  Graph g;
  Node x = g.input("x", 3, DType::f32);
  Node window = g.reindex(x, {"dA0", "dA1 + 2", "3", "dA2"}, {"i0", "i1 - 2 + i2", "i3 + 1"}, {x},
                          -std::numeric_limits<double>::infinity());
  Node y = g.reduce(ReduceOp::max, {2}, window);
  g.output("y", g.reindex(y, {"dA0", "dA1", "dA3"}, {"i0", "i1", "0", "i2"}, {y}));
  Program p = optimize(lower(g));
  std::string src = emit_c(p);
  EXPECT_NE(src.find("const float *row_"), std::string::npos) << src;
  auto fast = compile_c(p);
  for (int64_t c : {32, 64, 70}) {
    TensorMap in = testing::random_inputs(p, {{"x", {2, 19, c}}}, uint64_t(c));
    EXPECT_TRUE(testing::same_outputs(interpret(p, in), fast->run(in))) << c;
  }
}

TEST(CBackend, LinearRunsDotProductsInTiles) {
  Program p = optimize(forward_program(find_op("linear"), DType::f32));
  std::string src = emit_c(p);
  EXPECT_NE(src.find("#pragma omp simd reduction(+:c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, "
                     "c12, c13, c14, c15, c16)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("#pragma omp for collapse(2)"), std::string::npos) << src;
  CCompileOptions exact;
  exact.reassociate = false;
  exact.threads = 2;
  auto bitwise = compile_c(p, exact), fast = compile_c(p);
  for (auto [batch, in, out] : {std::tuple{1, 5, 3}, {9, 37, 6}, {70, 300, 45}}) {
    TensorMap inputs = testing::random_inputs(
        p, {{"x", {batch, in}}, {"w", {out, in}}, {"b", {out}}}, batch * 1000 + out);
    TensorMap want = interpret(p, inputs);
    EXPECT_TRUE(testing::same_outputs(want, bitwise->run(inputs))) << batch;
    EXPECT_TRUE(testing::same_outputs(want, fast->run(inputs), 1e-4)) << batch;
  }
}

// softmax sums exponentials: with reassociation the sum runs as a SIMD reduction and exp may
// be a vector variant (a few ulps); without it, bit for bit.
TEST(CBackend, SoftmaxWithAndWithoutReassociation) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  Node e = g.unary(UnaryOp::exp, x);
  g.output("y", g.binary(BinaryOp::div, e,
                         g.reindex(g.reduce(ReduceOp::sum, {1}, e), {"dA0", "dA1"}, {"i0", "0"},
                                   {x, x})));
  Program p = optimize(lower(g));
  CCompileOptions exact;
  exact.reassociate = false;
  TensorMap in = testing::random_inputs(p, {{"x", {7, 1000}}}, 5);
  TensorMap want = interpret(p, in);
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p, exact)->run(in)));
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p)->run(in), 1e-5));
}

// An argmax or argmin (which no `omp simd` clause reduces) and a sum in one loop run in 16 lanes
// the printer writes out (KernelWriter::lanes): the same position as a sequential pass on rows
// whose best value repeats within a lane and across lanes, ±0 ties, NaN first, everywhere or at
// the best value's place, rows of -inf, and lengths around the lane count.
TEST(CBackend, ArgmaxRunsInLanesAndFindsTheSequentialPosition) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("first_max", g.reduce(ReduceOp::argmax, {1}, x));
  g.output("first_min", g.reduce(ReduceOp::argmin, {1}, x));
  g.output("sum", g.reduce(ReduceOp::sum, {1}, x));
  Program p = optimize(lower(g));
  std::string src = emit_c(p);
  EXPECT_NE(src.find("_lanes[16]"), std::string::npos) << src;
  auto fast = compile_c(p);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = INFINITY;
  for (int64_t n : {1, 2, 15, 16, 17, 31, 33, 64, 100}) {
    const int64_t rows = 12;
    Tensor in(DType::f32, {rows, n});
    std::mt19937 rng{uint32_t(n)};
    auto at = [&](int64_t r, int64_t j) { return r * n + (j % n); };
    for (int64_t i = 0; i < rows * n; ++i)
      in.set(i, std::uniform_int_distribution<int>(-3, 3)(rng));  // ties everywhere
    for (int64_t j = 0; j < n; ++j) {
      in.set(1 * n + j, 1.0);   // all equal
      in.set(4 * n + j, -inf);  // nothing beats the start
      in.set(5 * n + j, nan);   // NaN only
      in.set(7 * n + j, j % 2 ? -1.0 : -2.0);
      in.set(10 * n + j, -double(j));  // decreasing
      in.set(11 * n + j, double(j));   // increasing
    }
    in.set(at(2, 3), 9), in.set(at(2, 19), 9), in.set(at(2, n - 1), 9);
    in.set(at(3, 37), 9), in.set(at(3, 50), 9);  // lane 5 of group 2 before lane 2 of group 3
    in.set(at(6, 0), nan);
    in.set(at(7, 2), -0.0), in.set(at(7, 9), 0.0), in.set(at(7, 20), -0.0);
    in.set(at(8, 4), inf), in.set(at(8, 21), inf), in.set(at(8, 22), -inf);
    in.set(at(9, 13), nan), in.set(at(9, 14), 5), in.set(at(9, 30), 5);
    TensorMap inputs{{"x", in}};
    TensorMap want = interpret(p, inputs), got = fast->run(inputs);
    for (const char* out : {"first_max", "first_min"})
      EXPECT_TRUE(testing::same_outputs({{out, want.at(out)}}, {{out, got.at(out)}})) << n;
    EXPECT_TRUE(testing::same_outputs({{"sum", want.at("sum")}}, {{"sum", got.at("sum")}}, 1e-5));
  }
}

// A sum over rows (a bias's gradient) and layernorm's gamma and beta gradients collide across
// their outer loops: each thread sums into a copy of the output (an OpenMP array reduction),
// where the outputs are small enough for the copies to live on the threads' stacks and not
// empty; larger or empty ones run as before. Both branches against the interpreter, on 2
// threads.
TEST(CBackend, SumsThatCollideAcrossTheOuterLoopRunOnThreadCopies) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("y", g.reduce(ReduceOp::sum, {0}, x));
  Program columns = optimize(lower(g));
  Program affine = optimize(gradient(find_op("layernorm").build(DType::f32), {"gamma", "beta"}));
  for (const Program* p : {&columns, &affine}) {
    std::string src = emit_c(*p);
    EXPECT_NE(src.find("reduction(+:"), std::string::npos) << src;
    CCompileOptions exact;
    exact.reassociate = false;
    EXPECT_EQ(emit_c(*p, exact).find("reduction(+:"), std::string::npos);
  }
  CCompileOptions two;
  two.threads = 2;
  auto sums = compile_c(columns, two), ln_grad = compile_c(affine, two);
  for (auto [rows, cols] : {std::pair{3000, 100}, {9, 70000}, {5, 0}, {0, 5}, {1, 1}, {300, 1}}) {
    TensorMap in = testing::random_inputs(columns, {{"x", {rows, cols}}}, uint64_t(rows + cols));
    EXPECT_TRUE(testing::same_outputs(interpret(columns, in), sums->run(in), 1e-4)) << rows;
    TensorMap ln = testing::random_inputs(
        affine, {{"x", {rows, cols}}, {"gamma", {cols}}, {"dy", {rows, cols}}},
        uint64_t(rows * cols));
    EXPECT_TRUE(testing::same_outputs(interpret(affine, ln), ln_grad->run(ln), 1e-4))
        << rows << " " << cols;
  }
}

// A kernel of one thread enters no OpenMP region (each costs a microsecond or more, its team
// started or not): it compiles with OpenMP's SIMD part alone and computes as two threads do,
// its SIMD reductions and vector math kept.
TEST(CBackend, OneThreadKernelsCompileWithoutOpenMPRegions) {
  cgen::CompilerInfo cc = cgen::compiler_info("");
  if (!cc.openmp) GTEST_SKIP() << "the compiler takes no -fopenmp";
  CCompileOptions one, two;
  one.threads = 1;
  two.threads = 2;
  auto has = [](const std::vector<std::string>& flags, const char* f) {
    return std::count(flags.begin(), flags.end(), f) > 0;
  };
  EXPECT_TRUE(has(cgen::compile_flags(cc, one), "-fopenmp-simd"));
  EXPECT_FALSE(has(cgen::compile_flags(cc, one), "-fopenmp"));
  EXPECT_TRUE(has(cgen::compile_flags(cc, two), "-fopenmp"));
  for (const char* op : {"softmax", "gelu", "matmul"}) {
    Program p = optimize(forward_program(find_op(op), DType::f32));
    std::map<std::string, std::vector<int64_t>> shapes = {{"x", {300, 1000}}};
    if (std::string(op) == "matmul") shapes = {{"a", {70, 300}}, {"b", {300, 90}}};
    TensorMap in = testing::random_inputs(p, shapes, 7);
    TensorMap want = interpret(p, in);
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p, two)->run(in), 1e-4)) << op;
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p, one)->run(in), 1e-4)) << op;
  }
}

// A row-local run's blocks after its first reduce the rows the run brought to L1 in lanes by
// hand, four vectors' worth (row_local_runs.h): layernorm's variance but not its mean, which
// reads from memory, nor softmax's sum of exponentials, which calls a math function; 64 f32
// lanes or 32 f64 with AVX-512, half and a quarter as many with AVX and SSE. Each kernel with
// such lanes over rows shorter than the lanes, of whole groups, and of groups and a remainder,
// at every vector width the host runs, matches the interpreter (the sums regrouped: within
// 1e-4).
TEST(CBackend, ReductionsOfRowsInL1RunInLanesByHand) {
  for (DType dtype : {DType::f32, DType::f64})
    for (int bytes : {16, 32, 64}) {
      CpuTarget target;
      target.vector_bytes = bytes;
      Program p = plan_cpu(optimize(forward_program(find_op("layernorm"), dtype)), target);
      std::vector<int> lanes;
      for (auto& b : p.blocks) lanes.push_back(b.loops.back().plan.lanes);
      EXPECT_EQ(lanes, (std::vector<int>{0, 4 * bytes / int(dtype_size(dtype)), 0})) << print(p);
    }
  std::string softmax = emit_c(optimize(forward_program(find_op("softmax"), DType::f32)));
  EXPECT_EQ(softmax.find("_lanes["), std::string::npos) << softmax;
  for (auto [name, grad] :
       {std::pair{"layernorm", false}, {"layernorm", true}, {"softmax", true}}) {
    const OpDef& op = find_op(name);
    Program p = optimize(grad ? gradient_program(op, DType::f32) : forward_program(op, DType::f32));
    std::string what = std::string(name) + (grad ? " gradient" : "");
    CCompileOptions v4;  // AVX-512's 64 lanes, whatever the host runs
    v4.target = "x86-64-v4";
    EXPECT_NE(emit_c(p, v4).find("_lanes[64]"), std::string::npos) << what;
    for (const std::string& target : vector_width_targets()) {
      CCompileOptions options;
      options.target = target;
      auto exe = compile_c(p, options);
      for (int64_t cols : {1, 63, 64, 65, 200, 1000}) {
        std::map<std::string, std::vector<int64_t>> shapes;
        for (const TensorInfo& t : p.tensors)
          if (t.role == Role::input)
            shapes[t.name] =
                t.shape.size() == 2 ? std::vector<int64_t>{3, cols} : std::vector<int64_t>{cols};
        TensorMap in = testing::random_inputs(p, shapes, uint64_t(cols));
        EXPECT_TRUE(testing::same_outputs(interpret(p, in), exe->run(in), 1e-4))
            << what << ", " << cols << " columns, " << target;
      }
    }
  }
}

// A row-local run's first block in lanes after its first prefetches, at each step of its lanes,
// the step's elements of every row that first block reads from memory at the shared loop's next
// iteration (row_local_runs.h): layernorm's variance loop prefetches x, and the gradients' first
// loops in lanes their rows. Every element named lies within its tensor at every row (the last
// names its own) and in every step, rows of whole steps and of a remainder; softmax's forward
// run, which has no loop in lanes, prefetches nothing.
TEST(CBackend, RowLocalRunsPrefetchTheNextRows) {
  for (auto [name, grad] : {std::pair{"layernorm", false},
                            {"layernorm", true},
                            {"softmax", true},
                            {"softmax", false}}) {
    const OpDef& op = find_op(name);
    const Program opt =
        optimize(grad ? gradient_program(op, DType::f32) : forward_program(op, DType::f32));
    const Program p = plan_cpu(opt, CpuTarget{});
    std::string what = std::string(name) + (grad ? " gradient" : "");
    int prefetching = 0;
    for (const Block& b : p.blocks) {
      const Loop& l = b.loops.back();
      if (l.plan.prefetch.empty()) continue;
      ++prefetching;
      for (int64_t rows : {1, 3})
        for (int64_t cols : {64, 100, 1000}) {
          std::map<std::string, std::vector<int64_t>> shapes;
          for (const TensorInfo& t : p.tensors)
            if (t.role == Role::input)
              shapes[t.name] = t.shape.size() == 2 ? std::vector<int64_t>{rows, cols}
                                                   : std::vector<int64_t>{cols};
          const Binding bound = bind(p, testing::random_inputs(p, shapes, 1), {});
          IndexEnv env = bound.env();
          int64_t row = 0, col = 0;  // each element of each step the prefetch reads
          env.var = [&](int v) { return v == b.loops[0].var ? row : col; };
          for (row = 0; row < rows; ++row)
            for (col = 0; col < cols / l.plan.lanes * l.plan.lanes; ++col)
              for (auto& [t, index] : l.plan.prefetch)
                for (size_t a = 0; a < index.size(); ++a) {
                  const int64_t at = evaluate(index[a], env);
                  EXPECT_TRUE(at >= 0 && at < bound.shapes[size_t(t)][a])
                      << what << ": " << p.tensors[size_t(t)].name << " axis " << a << " at " << at
                      << ", row " << row << " of " << rows << ", column " << col;
                  if (a == 0 && rows > 1) {
                    EXPECT_EQ(at, std::min(row + 1, rows - 1)) << what;
                  }
                }
        }
    }
    EXPECT_EQ(prefetching, name == std::string("softmax") && !grad ? 0 : 1) << print(p);
    EXPECT_EQ(emit_c(opt).find("uops_prefetch(&") != std::string::npos, prefetching > 0) << what;
  }
}

// The columns a contraction's tiles of 16 leave over (a classifier's 10 outputs) run in a
// register tile of rows of 16 lanes, storing only the columns there are (reduction_tiling.h):
// left plain they accumulated into memory at every step of the reduction, 3-11x slower. Each
// op's plan keeps such a tile; the same bits as the interpreter without reassociation. The
// shapes put rows of b at its end, where fewer than 16 elements remain to read.
TEST(CBackend, ColumnsLeftOverRunInRowsOfLanes) {
  struct Case {
    const char* op;
    std::vector<std::map<std::string, std::vector<int64_t>>> shapes;
    ParamMap params;
  };
  std::vector<Case> cases = {
      {"matmul",
       {{{"a", {70, 300}}, {"b", {300, 10}}},
        {{"a", {13, 40}}, {"b", {40, 1}}},
        {{"a", {64, 33}}, {"b", {33, 95}}},
        {{"a", {6, 8}}, {"b", {8, 15}}}},
       {}},
      {"batched_matmul", {{{"a", {3, 25, 30}}, {"b", {3, 30, 21}}}}, {}},
  };
  for (const Case& c : cases) {
    Program p = optimize(forward_program(find_op(c.op), DType::f32));
    Program planned = plan_cpu(p, {});
    int lanes = 0;
    for (auto& b : planned.blocks) {
      bool tiled = false;
      for (auto& l : b.loops) tiled |= l.plan.tile > 0;
      lanes += tiled && b.loops.back().plan.tile_width == 16;
    }
    EXPECT_GE(lanes, 1) << c.op << "\n" << print(planned);
    EXPECT_NE(emit_c(p).find("uops_load_lanes("), std::string::npos) << c.op;
    // The rows' vectors are as wide as the target's: 16 lanes with AVX-512, 8 with AVX, 4
    // elsewhere, each width with its own load.
    for (const std::string& target : vector_width_targets()) {
      CCompileOptions exact, one;
      exact.reassociate = false;
      exact.threads = 2;
      exact.target = one.target = target;
      one.threads = 1;
      auto bitwise = compile_c(p, exact), fast = compile_c(p, one);
      uint64_t seed = 11;
      for (auto& shapes : c.shapes) {
        TensorMap in = testing::random_inputs(p, shapes, seed++);
        TensorMap want = interpret(p, in, c.params);
        TensorMap got = testing::nan_like(want), quick = testing::nan_like(want);
        bitwise->run_into(in, got, c.params);
        fast->run_into(in, quick, c.params);
        EXPECT_TRUE(testing::same_outputs(want, got)) << c.op << " " << target;
        EXPECT_TRUE(testing::same_outputs(want, quick, 1e-4)) << c.op << " " << target;
      }
    }
  }
}

// A target whose vectors are narrower than AVX-512's has 16 vector registers, not 32: a
// contraction's tiles there are 16 columns in rows of lanes (LoopPlan::tile_width over the whole
// tile), 6 rows with AVX and 3 with SSE, 12 vectors either way (a tile of 6 x 64 needs 48 and
// lived on the stack); with AVX-512 the plain 6 x 64, and the 16 columns left over in lanes.
// cpu_target reads the width from the compile target. Each contraction (forward and gradients),
// compiled for each width the host runs, on sizes with whole tiles and rows and columns left over,
// matches the interpreter bit for bit without reassociation, and within 1e-4 with it (where
// conv2d's input gradient is tiled).
TEST(CBackend, TilesFitTheTargetsVectorRegisters) {
  auto whole_tiles = [](const Program& p, int bytes) {
    std::vector<std::pair<int64_t, int64_t>> sizes;  // rows x columns of the tiles in lanes
    for (auto& b : plan_cpu(p, {true, false, bytes}).blocks) {
      const Loop& c = b.loops.back();
      int64_t rows = 0, cols = 0;
      if (b.loops.size() > 1 && c.plan.tile_width && is_const(c.end, &cols) &&
          is_const(b.loops[b.loops.size() - 2].end, &rows))
        sizes.push_back({rows, cols});
    }
    return sizes;
  };
  using Tiles = std::vector<std::pair<int64_t, int64_t>>;
  Program matmul = optimize(forward_program(find_op("matmul"), DType::f32));
  EXPECT_EQ(whole_tiles(matmul, 32), (Tiles{{6, 16}, {4, 16}})) << print(plan_cpu(matmul, {}));
  EXPECT_EQ(whole_tiles(matmul, 16), (Tiles{{3, 16}, {2, 16}}));
  // With AVX-512 the tiles of 64 columns are plain, those of the 16 left over in lanes.
  EXPECT_EQ(whole_tiles(matmul, 64), (Tiles{{6, 16}, {4, 16}, {2, 16}}));
  EXPECT_EQ(whole_tiles(optimize(forward_program(find_op("matmul"), DType::f64)), 32), Tiles{});
  CCompileOptions v3, v1, native;
  v3.target = "x86-64-v3";
  v1.target = "";
  EXPECT_EQ(cgen::cpu_target(v3).vector_bytes, 32);
  EXPECT_EQ(cgen::cpu_target(v1).vector_bytes, 16);
  // Streamed stores from kStreamBytes for a named target, from the option where it is set, and
  // natively from a quarter of the host's last-level cache where that is larger.
  EXPECT_EQ(cgen::cpu_target(v3).tile_stream_bytes, kStreamBytes);
  EXPECT_GE(cgen::cpu_target(native).tile_stream_bytes, kStreamBytes);
  native.tile_stream_bytes = 1 << 20;
  EXPECT_EQ(cgen::cpu_target(native).tile_stream_bytes, 1 << 20);
#if defined(__x86_64__)
  // Other names as the compiler defines them; one it rejects gets the widest plan.
  for (auto [name, bytes] : std::vector<std::pair<std::string, int>>{
           {"haswell", 32}, {"skylake-avx512", 64}, {"nehalem", 16}, {"no-such-cpu", 64}}) {
    CCompileOptions named;
    named.target = name;
    EXPECT_EQ(cgen::cpu_target(named).vector_bytes, bytes) << name;
  }
#endif
  EXPECT_EQ(emit_c(matmul, v3).find("float tile_v2[6][64]"), std::string::npos);
  CCompileOptions v4;
  v4.target = "x86-64-v4";
  EXPECT_NE(emit_c(matmul, v4).find("float tile_v2[6][64]"), std::string::npos);

  struct Case {
    Program p;
    std::vector<std::map<std::string, std::vector<int64_t>>> shapes;
    std::vector<ParamMap> params = {{}};
  };
  auto grad = [](const char* op, std::vector<std::string> wrt) {
    return optimize(gradient(find_op(op).build(DType::f32), wrt));
  };
  std::vector<Case> cases = {
      {matmul, {{{"a", {70, 40}}, {"b", {40, 37}}}, {{"a", {13, 300}}, {"b", {300, 64}}}}},
      {optimize(forward_program(find_op("batched_matmul"), DType::f32)),
       {{{"a", {2, 25, 30}}, {"b", {2, 30, 40}}}}},
      {grad("matmul", {"a", "b"}), {{{"a", {29, 18}}, {"b", {18, 35}}, {"dc", {29, 35}}}}},
      // Its input checked (the padding): a scalar for every lane, the tile tested at its corners.
      {optimize(forward_program(find_op("conv2d"), DType::f32)),
       {{{"x", {2, 9, 11, 5}}, {"w", {37, 3, 3, 5}}}},
       {{{"stride", 1}, {"pad", 1}, {"dilation", 1}},
        {{"stride", 2}, {"pad", 2}, {"dilation", 1}}}},
      // Scattered through the window, with reassociation (scatter_tiling.h): images x channels.
      {grad("conv2d", {"x"}),
       {{{"x", {8, 6, 7, 37}}, {"w", {5, 3, 3, 37}}, {"dy", {8, 6, 7, 5}}}},
       {{{"stride", 1}, {"pad", 1}, {"dilation", 1}}}},
      {grad("conv2d", {"x"}),
       {{{"x", {7, 6, 7, 20}}, {"w", {5, 3, 3, 20}}, {"dy", {7, 4, 5, 5}}}},
       {{{"stride", 2}, {"pad", 2}, {"dilation", 1}}}},
  };
  std::vector<std::string> targets = vector_width_targets();
#if defined(__x86_64__)
  targets.push_back("x86-64-v2");
#endif
  for (const Case& c : cases) {
    EXPECT_FALSE(whole_tiles(c.p, 32).empty()) << print(plan_cpu(c.p, {true, false, 32}));
    for (const std::string& target : targets) {
      CCompileOptions exact, fast;
      exact.reassociate = false;
      exact.threads = 2;
      exact.target = fast.target = target;
      auto bitwise = compile_c(c.p, exact), quick = compile_c(c.p, fast);
      uint64_t seed = 5;
      for (auto& shapes : c.shapes)
        for (auto& params : c.params) {
          TensorMap in = testing::random_inputs(c.p, shapes, seed++);
          TensorMap want = interpret(c.p, in, params), got = testing::nan_like(want);
          bitwise->run_into(in, got, params);
          EXPECT_TRUE(testing::same_outputs(want, got)) << target << "\n" << print(c.p);
          EXPECT_TRUE(testing::same_outputs(want, quick->run(in, params), 1e-4)) << target;
        }
    }
  }
}

TEST(CBackend, ReassociationIsAnOption) {
  Program p = lower(matmul_graph());
  CCompileOptions exact;
  exact.reassociate = false;
  EXPECT_NE(emit_c(p).find("#pragma omp simd reduction(+:c0)"), std::string::npos) << emit_c(p);
  EXPECT_EQ(emit_c(p, exact).find("omp simd"), std::string::npos);
}

TEST(CBackend, EmitsReadableSource) {
  std::string src = emit_c(lower(matmul_graph()));
  EXPECT_NE(src.find("#include <math.h>"), std::string::npos);
  EXPECT_NE(src.find("int uops_kernel(void *const *tensors, const int64_t *sizes"),
            std::string::npos);
  EXPECT_NE(src.find("for (int64_t v0 = 0; v0 < a_n0; ++v0)"), std::string::npos) << src;
  EXPECT_EQ(src.find("#include <stdio.h>"), std::string::npos);
}

// softmax's three row passes share one loop over rows, each row re-read from L1; bit for bit
// without reassociation. A block reading another's output transposed does not join it.
TEST(CBackend, RowLocalBlocksShareTheirOuterLoop) {
  const std::string shared = "share their outer loop";
  Program softmax = optimize(forward_program(find_op("softmax"), DType::f32));
  CCompileOptions exact;
  exact.reassociate = false;
  EXPECT_NE(emit_c(softmax).find("blocks 0 to 2 " + shared), std::string::npos) << emit_c(softmax);
  TensorMap in = testing::random_inputs(softmax, {{"x", {37, 300}}}, 4);
  TensorMap want = interpret(softmax, in);
  EXPECT_TRUE(testing::same_outputs(want, compile_c(softmax, exact)->run(in)));
  EXPECT_TRUE(testing::same_outputs(want, compile_c(softmax)->run(in), 1e-5));

  Graph g;
  Node x = g.input("x", 2, DType::f32);
  Node e = g.unary(UnaryOp::exp, x);
  g.output("z", g.binary(BinaryOp::add, g.reindex(e, {"dA1", "dA0"}, {"i1", "i0"}, {x}), e));
  Program p = lower(g);
  EXPECT_EQ(emit_c(p).find("blocks 0 to"), std::string::npos) << emit_c(p);
  in = testing::random_inputs(p, {{"x", {9, 9}}}, 5);
  EXPECT_TRUE(testing::same_outputs(interpret(p, in), compile_c(p, exact)->run(in)));
}

// A block whose parallel loop sits inside a register tile with a guard prints that loop twice
// (under the guard and in its else): both carry the loop's pragma. The emitter used to plant a
// marker and replace only the first, leaving "@@PRAGMA@@" in the source (random program 958 of
// the C fuzzer's options), which did not compile.
TEST(CBackend, ParallelLoopInsideAGuardedTileCompiles) {
  RandomGraphOptions o;
  o.max_nodes = 4 + 958 % 12;
  o.empty_raising = true;
  RandomCase c = random_case(958, o);
  Program p = optimize(lower(c.graph));
  EXPECT_EQ(emit_c(p).find("@@"), std::string::npos) << emit_c(p);
  EXPECT_TRUE(testing::same_outputs(interpret(p, c.inputs, c.params),
                                    compile_c(p)->run(c.inputs, c.params), 1e-5));
}

// Floor division prints as plain `/` where the range analysis proves the numerator
// non-negative: a reversed index (n - 1 - i) / 2 once went through floordiv_pos, since the
// printer kept its own weaker analysis, which knew no subtraction.
TEST(CBackend, DivisionOfAProvenNonNegativeIndexIsPlain) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.reindex(x, {"dA0"}, {"(dA0 - 1 - i0) / 2"}, {x}));
  Program p = lower(g);
  std::string src = emit_c(p);
  EXPECT_NE(src.find(" - v0) / 2"), std::string::npos) << src;
  EXPECT_EQ(src.find("floordiv_pos"), std::string::npos) << src;
  TensorMap in = testing::random_inputs(p, {{"x", {9}}}, 3);
  EXPECT_TRUE(testing::same_outputs(interpret(p, in), compile_c(p)->run(in), 0));
}

// Contractions and their gradients with tiled reductions (tiles of 2, so several per loop) and
// register tiles of 2 x 3 (kept in local arrays, with rows and columns left over): bit for bit
// without reassociation.
TEST(CBackend, TiledContractionsAndGradientsMatchExactly) {
  std::vector<testing::OpCase> cases = testing::op_cases();
  std::vector<const testing::OpCase*> chosen;
  std::vector<Program> programs;
  int registers = 0, grads = 0;
  for (auto& c : cases) {
    std::string op = c.label.substr(0, c.label.find(' '));
    if (c.label.find("optimized") == std::string::npos ||
        !std::set<std::string>{"matmul", "batched_matmul", "linear", "conv2d", "depthwise_conv2d"}
             .count(op))
      continue;
    Program t = tile_registers(tile_reductions(tile_dots(c.program, 2, 3, 2), 2), 6, 2, 3, 4);
    if (print(t) == print(c.program)) continue;
    registers += emit_c(t).find("tile_v") != std::string::npos;
    grads += c.label.find("grad") != std::string::npos;
    chosen.push_back(&c);
    programs.push_back(std::move(t));
  }
  EXPECT_GE(chosen.size(), 4u);
  EXPECT_GE(registers, 4);
  EXPECT_GE(grads, 2);
  CCompileOptions exact;
  exact.reassociate = false;
  exact.extra_flags = {"-O1"};
  auto exes = compile_c_batch(programs, exact);
  for (size_t i = 0; i < chosen.size(); ++i)
    EXPECT_TRUE(
        testing::same_outputs(interpret(chosen[i]->program, chosen[i]->inputs, chosen[i]->params),
                              exes[i]->run(chosen[i]->inputs, chosen[i]->params)))
        << chosen[i]->label << "\n"
        << print(programs[i]);
}

// softmax(q k^T / 8) v over a batch: loop fusion puts the scores and their row maximum in one
// block; tile_dots splits the maximum off and tiles the scores (dot_tiling.h). The kernel, exact
// and reassociating, gives what the interpreter gives at sizes that leave rows and columns of
// the tiles over, and its plan holds a dot tile, whose loop over a range of up to 128 runs in 8
// lanes (simd_reductions.h): d = 5 and 16 there, 133 in as many lanes as GCC likes. With 70 query
// rows over d = 16 the kernel runs its packed variant (packed_variant.h), which must match too.
TEST(CBackend, AttentionScoresAreTiledAndMatchInterpreter) {
  Graph g;
  testing::build_attention(g);
  Program p = optimize(lower(g));
  int dot_tile = 0;
  for (auto& b : plan_cpu(p, {}).blocks)
    for (auto& l : b.loops) dot_tile += l.carried.size() == 16;
  EXPECT_GE(dot_tile, 1) << print(plan_cpu(p, {}));
  EXPECT_NE(emit_c(p).find("simdlen(8) reduction(+:"), std::string::npos) << emit_c(p);
  CCompileOptions exact;
  exact.reassociate = false;
  auto fast = compile_c(p), slow = compile_c(p, exact);
  for (auto [b, m, n, d] : std::vector<std::array<int64_t, 4>>{
           {2, 7, 9, 5}, {1, 37, 45, 16}, {1, 9, 11, 133}, {2, 70, 33, 16}}) {
    TensorMap in =
        testing::random_inputs(p, {{"q", {b, m, d}}, {"k", {b, n, d}}, {"v", {b, n, d}}}, 11);
    TensorMap want = interpret(p, in);
    EXPECT_TRUE(testing::same_outputs(want, slow->run(in), 1e-6)) << m << "x" << n;
    EXPECT_TRUE(testing::same_outputs(want, fast->run(in), 1e-5)) << m << "x" << n;
  }
}

// Where the packed variant's copies would pass the memory budget that the program fits in, the
// kernel runs the program (the same bits) instead of refusing the run.
TEST(CBackend, PackedVariantGivesWayToTheMemoryBudget) {
  Graph g;
  testing::build_attention(g);
  Program p = optimize(lower(g));
  auto variant = packed_variant(p);
  ASSERT_TRUE(variant);
  TensorMap in =
      testing::random_inputs(p, {{"q", {2, 70, 16}}, {"k", {2, 33, 16}}, {"v", {2, 33, 16}}}, 5);
  auto bytes = [&](const Program& q) {
    Binding b = bind(q, in, {});
    int64_t n = 0;
    for (size_t t = 0; t < q.tensors.size(); ++t) {
      if (q.tensors[t].role == Role::input) continue;
      int64_t numel = 1;
      for (int64_t d : b.shapes[t]) numel *= d;
      n += numel * int64_t(dtype_size(q.tensors[t].dtype));
    }
    return n;
  };
  ASSERT_LT(bytes(p), bytes(variant->program));
  TensorMap want = interpret(p, in);
  CCompileOptions exact;
  exact.reassociate = false;
  auto exe = compile_c(p, exact);
  set_memory_budget(bytes(p));
  EXPECT_THROW(bind(variant->program, in, {}), LimitError);
  TensorMap got;
  EXPECT_NO_THROW(got = exe->run(in));
  set_memory_budget(0);
  EXPECT_TRUE(testing::same_outputs(want, got, 0)) << "budget " << bytes(p);
}

// run_into writes into the caller's tensors when they fit (the same buffer, no allocation) and
// replaces those that do not; zeroed outputs are zeroed again on reuse.
TEST(CBackend, RunIntoReusesCallerOutputs) {
  Program p = optimize(lower(matmul_graph()));
  auto exe = compile_c(p);
  TensorMap in = testing::random_inputs(p, {{"a", {5, 7}}, {"b", {7, 3}}}, 3);
  TensorMap want = interpret(p, in);
  TensorMap out = {{"c", Tensor(DType::f32, {5, 3})}, {"other", Tensor(DType::i32, {2})}};
  const unsigned char* buffer = out["c"].bytes.data();
  for (int round = 0; round < 2; ++round) {
    exe->run_into(in, out);
    EXPECT_EQ(out["c"].bytes.data(), buffer);
    EXPECT_TRUE(testing::same_outputs(want, {{"c", out["c"]}}, 1e-4));
  }
  EXPECT_EQ(out["other"].shape, std::vector<int64_t>{2});
  TensorMap wrong = {{"c", Tensor(DType::f32, {3, 5})}};
  exe->run_into(in, wrong);
  EXPECT_EQ(wrong["c"].shape, (std::vector<int64_t>{5, 3}));
  EXPECT_TRUE(testing::same_outputs(want, wrong, 1e-4));
  TensorMap empty;
  EXPECT_THROW(exe->run_into({{"a", in["a"]}}, empty), Error);
  EXPECT_TRUE(empty.empty());
}

// y = sum over j in [1, n) of t[j], t[j] = t[j - 1] / 2 + x[j]: the innermost loop reduces a
// carried sum and stores t, which its next iteration reads. As SIMD lanes the iterations would
// read t before the previous lane stored it, so the loop gets no `omp simd` (stores_stay_apart).
TEST(CBackend, NoSimdReductionWhereAnIterationReadsAnotherOnesStore) {
  Program p;
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"t", DType::f32, {idx::dim(0, 0)}, Role::temporary});
  p.tensors.push_back({"y", DType::f32, {idx::constant(1)}, Role::output});
  Loop row, col;
  row.var = p.num_vars++;
  row.start = idx::constant(0);
  row.end = idx::constant(1);
  row.carried.push_back({p.num_carried++, ReduceOp::sum});
  col.var = p.num_vars++;
  col.start = idx::constant(1);
  col.end = idx::dim(0, 0);
  Index j = idx::var(col.var);
  Stmt next;
  next.tensor = 1;
  next.index = {j};
  next.checked = false;
  next.value = val::binary(
      BinaryOp::add,
      val::binary(BinaryOp::mul, val::load(1, {idx::sub(j, idx::constant(1))}, 0.0, false),
                  val::constant(0.5)),
      val::load(0, {j}, 0.0, false));
  Stmt sum;
  sum.kind = StmtKind::reduce;
  sum.carried = 0;
  sum.value = val::load(1, {j}, 0.0, false);
  col.stmts = {next, sum};
  Stmt store;
  store.tensor = 2;
  store.index = {idx::var(row.var)};
  store.value = val::carried(0);
  row.stmts = {store};
  p.blocks.push_back({{row, col}, "running halves"});
  ASSERT_TRUE(verify(p).empty()) << print(p);
  EXPECT_EQ(emit_c(p).find("omp simd"), std::string::npos) << emit_c(p);
  TensorMap in = testing::random_inputs(p, {{"x", {1000}}}, 4);
  EXPECT_TRUE(testing::same_outputs(interpret(p, in), compile_c(p)->run(in), 1e-5));
}

// An elementwise loop that calls tanh and exp (gelu's kind of gradient) runs as `omp simd` where
// libmvec is linked (simd_math), so that GCC calls the functions' SIMD variants: within a few ulps
// of the interpreter, in f32 and f64; the exact mode and vector_math = false call the scalar
// functions.
TEST(CBackend, SimdMathRunsElementwiseTranscendentalsInLanes) {
  for (DType t : {DType::f32, DType::f64}) {
    Graph g;
    Node x = g.input("x", 2, t);
    Node th = g.unary(UnaryOp::tanh, x);
    g.output("y", g.binary(BinaryOp::add, g.binary(BinaryOp::mul, th, x),
                           g.unary(UnaryOp::exp, g.unary(UnaryOp::neg, th))));
    Program p = optimize(lower(g));
    std::string src = emit_c(p);
    EXPECT_NE(src.find("#if defined(UOPS_SIMD) && defined(UOPS_MVEC)\n    #pragma omp simd\n"),
              std::string::npos)
        << src;
    EXPECT_NE(src.find(t == DType::f32 ? "float tanhf(float);" : "double tanh(double);"),
              std::string::npos)
        << src;
    CCompileOptions exact, scalar;
    exact.reassociate = false;
    scalar.vector_math = false;
    EXPECT_EQ(emit_c(p, exact).find("omp simd"), std::string::npos);
    TensorMap in = testing::random_inputs(p, {{"x", {5, 1003}}}, 6);
    TensorMap want = interpret(p, in);
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p)->run(in), 1e-5));
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p, scalar)->run(in), 1e-5));
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p, exact)->run(in)));
  }
}

// A transposing copy in f32 moves its 16 x 16 tiles as 4 x 4 blocks through SSE registers
// (transpose_copyf, LoopPlan::tile_transpose), the elements of rows and columns left over one
// by one: bit for bit against the interpreter over shapes with whole blocks, none and parts of
// one. f64 keeps the loops.
TEST(CBackend, TransposedCopyTilesMatchTheInterpreter) {
  Program p = optimize(forward_program(find_op("transpose"), DType::f32));
  EXPECT_NE(emit_c(p).find("transpose_copyf(&"), std::string::npos) << emit_c(p);
  auto exe = compile_c(p);
  uint64_t seed = 1;
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {3, 5}, {4, 4}, {16, 16}, {17, 33}, {40, 7}, {64, 3}, {5, 130}}) {
    TensorMap in = testing::random_inputs(p, {{"x", {rows, cols}}}, seed++);
    EXPECT_TRUE(testing::same_outputs(interpret(p, in), exe->run(in))) << rows << " x " << cols;
  }
  Program d = optimize(forward_program(find_op("transpose"), DType::f64));
  EXPECT_EQ(emit_c(d).find("transpose_copyf"), std::string::npos);
}

// The f32 exponential a reassociating kernel computes itself (vector_expf): over every 997th
// float from -104 to 90 (2.2 million, runs of tiny and of huge results among them),
// within 1.25 ulps of e^x where e^x is at least 2^-125, zero or within 2^-125 of it below,
// infinite where e^x overflows, and NaN, infinities and zeros as expf gives them; the exact
// mode calls expf itself (bit for bit).
TEST(CBackend, VectorExpIsWithinAnUlpOverTheWholeRange) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, x));
  Program p = optimize(lower(g));
  std::vector<float> xs = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           0.0f,
                           -0.0f,
                           std::numeric_limits<float>::denorm_min(),
                           88.7228f,
                           -87.6f,
                           89.0f};
  // Bit patterns: from -104 up to -0 (magnitudes falling), then from +0 up to 90.
  auto bits_of = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  };
  auto float_of = [](uint32_t b) {
    float v;
    std::memcpy(&v, &b, 4);
    return v;
  };
  for (uint32_t b = bits_of(-104.0f); b > 0x80000000u; b -= 997) xs.push_back(float_of(b));
  for (uint32_t b = 0; b < bits_of(90.0f); b += 997) xs.push_back(float_of(b));
  Tensor in(DType::f32, {int64_t(xs.size())});
  std::copy(xs.begin(), xs.end(), in.data<float>());
  TensorMap out = compile_c(p)->run({{"x", in}});
  const float* y = out.at("y").data<float>();
  const double tiny = std::ldexp(1.0, -125);
  double worst = 0;
  float worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = std::exp(double(xs[i]));
    if (std::isnan(xs[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    } else if (want > std::numeric_limits<float>::max()) {
      EXPECT_EQ(y[i], std::numeric_limits<float>::infinity()) << xs[i];
    } else if (want < tiny) {
      EXPECT_LE(std::abs(y[i] - want), tiny) << xs[i];
      EXPECT_GE(y[i], 0.0f) << xs[i];
    } else {
      const float near = float(want);
      const double ulp =
          double(std::nextafter(near, std::numeric_limits<float>::infinity())) - near;
      if (std::abs(y[i] - want) / ulp > worst) worst = std::abs(y[i] - want) / ulp, worst_x = xs[i];
    }
  }
  EXPECT_LE(worst, 1.25) << "at x = " << worst_x;
  CCompileOptions exact;
  exact.reassociate = false;
  TensorMap exact_out = compile_c(p, exact)->run({{"x", in}});
  const float* e = exact_out.at("y").data<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::isnan(xs[i])) continue;
    ASSERT_EQ(e[i], std::exp(xs[i])) << xs[i];
  }
}

// t[j] = exp(-t[j - 1] / 2) + x[j]: the innermost loop calls exp and its next iteration reads
// what it stores, so it runs as one lane (no SIMD math: stores_stay_apart).
TEST(CBackend, NoSimdMathWhereAnIterationReadsAnotherOnesStore) {
  Program p;
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0), idx::dim(0, 1)}, Role::input});
  p.tensors.push_back({"t", DType::f32, {idx::dim(0, 0), idx::dim(0, 1)}, Role::output});
  Loop row, col;
  row.var = p.num_vars++;
  row.start = idx::constant(0);
  row.end = idx::dim(0, 0);
  col.var = p.num_vars++;
  col.start = idx::constant(1);
  col.end = idx::dim(0, 1);
  Index i = idx::var(row.var), j = idx::var(col.var);
  Stmt next;
  next.tensor = 1;
  next.index = {i, j};
  next.checked = false;
  next.value = val::binary(
      BinaryOp::add,
      val::unary(
          UnaryOp::exp,
          val::binary(BinaryOp::mul, val::load(1, {i, idx::sub(j, idx::constant(1))}, 0.0, false),
                      val::constant(-0.5))),
      val::load(0, {i, j}, 0.0, false));
  col.stmts = {next};
  p.blocks.push_back({{row, col}, "running exponentials"});
  ASSERT_TRUE(verify(p).empty()) << print(p);
  EXPECT_EQ(emit_c(p).find("omp simd"), std::string::npos) << emit_c(p);
  TensorMap in = testing::random_inputs(p, {{"x", {2, 1000}}}, 4);
  EXPECT_TRUE(testing::same_outputs(interpret(p, in), compile_c(p)->run(in), 1e-5));
}

// Kernels are compiled for the host by default, for the compiler's default target on request;
// fused multiply-adds only when reassociating, so the exact mode stays bit for bit.
TEST(CBackend, TargetAndContractionFlags) {
  auto cc = cgen::compiler_info("");
  auto has = [](const std::vector<std::string>& flags, const std::string& f) {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
  };
  CCompileOptions native, portable, exact;
  portable.target = "";
  exact.reassociate = false;
  auto flags = cgen::compile_flags(cc, native);
  EXPECT_TRUE(has(flags, "-ffp-contract=fast"));
#if defined(__x86_64__)
  EXPECT_TRUE(has(flags, "-march=native"));
#endif
  for (auto& f : cgen::compile_flags(cc, portable)) EXPECT_EQ(f.find("-march"), 0u + f.npos);
  EXPECT_TRUE(has(cgen::compile_flags(cc, exact), "-ffp-contract=off"));
#if defined(__x86_64__)
  // The compiler's own vectorization runs at the width the plan's tiles are sized for.
  CCompileOptions v4, v3;
  v4.target = "x86-64-v4";
  v3.target = "x86-64-v3";
  EXPECT_TRUE(has(cgen::compile_flags(cc, v4), "-mprefer-vector-width=512"));
  EXPECT_FALSE(has(cgen::compile_flags(cc, v3), "-mprefer-vector-width=512"));
  EXPECT_FALSE(has(cgen::compile_flags(cc, portable), "-mprefer-vector-width=512"));
  EXPECT_EQ(has(flags, "-mprefer-vector-width=512"), cgen::cpu_target(native).vector_bytes == 64);
#endif
  Program p = optimize(lower(matmul_graph()));
  TensorMap in = testing::random_inputs(p, {{"a", {9, 300}}, {"b", {300, 17}}}, 8);
  TensorMap want = interpret(p, in);
  exact.target = "";
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p, exact)->run(in)));
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p, portable)->run(in), 1e-4));
  CCompileOptions bogus;
  bogus.target = "no-such-cpu";
  EXPECT_THROW(compile_c(p, bogus), Error);
}

}  // namespace
}  // namespace uops
