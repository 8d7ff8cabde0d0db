// The C backend's window gathers (backends/c/c_window_gather.h): a sum scattered through a window
// of stride 1 (depthwise conv2d's input gradient, the pools' at stride 1) becomes a gather, its
// tiles' rows first, then the border rows and columns, whose window loops skip the positions the
// scatter never formed. Where it applies and where it does not; the gathered program against the
// scattered one in the interpreter, and the C kernels against the interpreter, bit for bit (the
// sign of zero too; within 1e-4 where they may reassociate): image sizes below, at and above the
// window's, channel counts that leave lanes over, padding from none to more than the window, a loop
// order with the window's loop outside the image's, a second scatter into what a first left, and
// inputs of a few values with NaN, infinities and both zeros among them (a term read as 0 * inf
// would show as NaN).
#include "backends/c/c_window_gather.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/analysis.h"
#include "uops/ir/fixed_params.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using namespace ir;

Program grad_of(const std::string& op, const ParamMap& params) {
  return fix_params(optimize(gradient_program(find_op(op), DType::f32)), params);
}

// Blocks of p whose origin says they were gathered (the tiles' rows, or a border).
int gathered(const Program& p, const std::string& which = ", gathered") {
  int n = 0;
  for (const Block& b : p.blocks) n += b.origin.find(which) != std::string::npos;
  return n;
}

TEST(WindowGather, GathersScattersThroughWindowsOfStrideOneOnly) {
  ParamMap conv = find_op("conv2d").example_params;
  conv["stride"] = 1;
  struct Case {
    std::string op;
    ParamMap params;  // fixed (none: the parameters stay)
    int blocks;       // gathered: the tiles' rows and two per window axis, or none
  };
  for (const Case& c : std::vector<Case>{
           {"depthwise_conv2d", {{"stride", 1}, {"pad", 1}}, 5},
           {"depthwise_conv2d", {{"stride", 1}, {"pad", 0}}, 5},
           {"depthwise_conv2d", {{"stride", 2}, {"pad", 1}}, 0},
           {"depthwise_conv2d", {}, 0},
           {"maxpool2d", {{"k", 3}, {"stride", 1}, {"pad", 1}}, 5},
           {"maxpool2d", {{"k", 3}, {"stride", 2}, {"pad", 1}}, 0},
           {"avgpool2d", {{"k", 2}, {"stride", 1}}, 5},
           {"conv2d", conv, 0},  // its sum over input channels is tile_scatters'
       }) {
    SCOPED_TRACE(c.op + " at " + std::to_string(c.params.size()) + " fixed parameters");
    Program p = optimize(gradient_program(find_op(c.op), DType::f32));
    if (!c.params.empty()) p = fix_params(p, c.params);
    Program g = cgen::gather_windows(p);
    EXPECT_EQ(gathered(g), c.blocks) << print(g);
    EXPECT_EQ(gathered(g, "at the border"), c.blocks ? c.blocks - 1 : 0);
    EXPECT_EQ(verify(g), std::vector<std::string>{});
    EXPECT_EQ(verify(plan_cpu(g, {})), std::vector<std::string>{});
  }
}

// The tile machinery takes the gather's rows as it takes a forward convolution's: register
// tiles, and dx's zeros only outside them.
TEST(WindowGather, TheGathersRowsRunInRegisterTiles) {
  const Program p = grad_of("depthwise_conv2d", {{"stride", 1}, {"pad", 1}});
  Program planned = plan_cpu(cgen::gather_windows(p), {});
  int tiles = 0;
  for (const Block& b : planned.blocks)
    if (b.origin.find(", gathered") != std::string::npos &&
        b.origin.find("border") == std::string::npos)
      for (const Loop& l : b.loops) tiles += l.plan.tile > 0;
  EXPECT_GT(tiles, 0) << print(planned);
  const std::string src = emit_c(p);
  EXPECT_NE(src.find("gathered at the border"), std::string::npos);
  EXPECT_NE(src.find("float tile_v"), std::string::npos);
}

// Every element the same bits, but NaN's payload.
::testing::AssertionResult same_bits(const TensorMap& want, const TensorMap& got) {
  if (auto r = testing::same_outputs(want, got); !r) return r;
  for (auto& [name, w] : want)
    for (int64_t i = 0; i < w.numel(); ++i) {
      double x = w.get(i), y = got.at(name).get(i);
      if (!std::isnan(x) && std::signbit(x) != std::signbit(y))
        return ::testing::AssertionFailure() << name << "[" << i << "]: " << x << " against " << y;
    }
  return ::testing::AssertionSuccess();
}

// A program and the shapes it runs at: x [N, H, W, C], dy [N, OH, OW, C] and, for depthwise
// conv2d, w [k, k, C], for windows of k at stride 1 and padding `pad`. Rows of 24 and 31 pixels
// run the tiles of 6 and of 4 that take the inner pixels the tiles of 8 leave (tile_registers).
struct Case {
  std::string what;
  Program program;
  ParamMap params;
  std::vector<std::map<std::string, std::vector<int64_t>>> shapes;
};

std::vector<std::map<std::string, std::vector<int64_t>>> shapes(std::vector<int64_t> ks,
                                                                int64_t pad, bool weights) {
  std::vector<std::map<std::string, std::vector<int64_t>>> out;
  for (int64_t k : ks)
    for (auto [h, w, c] : {std::tuple<int64_t, int64_t, int64_t>{7, 13, 37},
                           {1, 1, 16},
                           {2, 5, 3},
                           {13, 4, 33},
                           {3, 24, 19},
                           {2, 31, 17}}) {
      const int64_t oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
      if (oh < 1 || ow < 1) continue;
      out.push_back({{"x", {2, h, w, c}}, {"dy", {2, oh, ow, c}}});
      if (weights) out.back()["w"] = {k, k, c};
    }
  return out;
}

// The scatter's window loops outside the image's (kh, kw before oh, ow): each element then
// receives its terms in the window's order.
Program window_outside(Program p) {
  for (Block& b : p.blocks)
    if (b.origin.find("scatter") != std::string::npos && b.loops.size() == 6 &&
        !p.tensors[size_t(b.loops.back().stmts[0].tensor)].name.compare("dx")) {
      std::swap(b.loops[1], b.loops[3]);
      std::swap(b.loops[2], b.loops[4]);
    }
  return p;
}

// The input gradient's scatter twice: the second sums into what the first left.
Program scattered_twice(Program p) {
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    const Stmt& s = p.blocks[bi].loops.back().stmts[0];
    if (p.tensors[size_t(s.tensor)].name != "dx") continue;
    Block again = p.blocks[bi];
    auto fresh = [&](const Index& e) {
      return rewrite(e, [&](const Index& x) -> Index {
        return x->kind == IndexKind::Var ? idx::var(x->var + p.num_vars) : nullptr;
      });
    };
    for (Loop& l : again.loops) l.var += p.num_vars;
    again.loops.back().stmts[0] = map_indices(s, fresh);
    p.num_vars *= 2;
    p.blocks.insert(p.blocks.begin() + long(bi) + 1, again);
    break;
  }
  return p;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int64_t pad : {0, 1, 2, 3})
    out.push_back({"depthwise_conv2d pad " + std::to_string(pad),
                   grad_of("depthwise_conv2d", {{"stride", 1}, {"pad", pad}}),
                   {{"stride", 1}, {"pad", pad}},
                   shapes({1, 2, 3, 5}, pad, true)});
  const Program dw = grad_of("depthwise_conv2d", {{"stride", 1}, {"pad", 1}});
  const ParamMap dw_params = {{"stride", 1}, {"pad", 1}};
  out.push_back({"depthwise_conv2d, the window outside", window_outside(dw), dw_params,
                 shapes({2, 3}, 1, true)});
  out.push_back({"depthwise_conv2d, scattered twice", scattered_twice(dw), dw_params,
                 shapes({2, 3}, 1, true)});
  for (auto [k, pad] : {std::pair<int64_t, int64_t>{3, 1}, {2, 0}, {3, 2}}) {
    ParamMap params = {{"k", k}, {"stride", 1}, {"pad", pad}};
    out.push_back({"maxpool2d k " + std::to_string(k) + " pad " + std::to_string(pad),
                   grad_of("maxpool2d", params), params, shapes({k}, pad, false)});
  }
  for (int64_t k : {2, 3}) {
    ParamMap params = {{"k", k}, {"stride", 1}};
    out.push_back({"avgpool2d k " + std::to_string(k), grad_of("avgpool2d", params), params,
                   shapes({k}, 0, false)});
  }
  return out;
}

TEST(WindowGather, TheGatherIsTheScatterBitForBitInTheInterpreter) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.what);
    Program g = cgen::gather_windows(c.program);
    ASSERT_GT(gathered(g), 0) << print(c.program);
    ASSERT_EQ(verify(g), std::vector<std::string>{});
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      TensorMap in = testing::few_values(c.program, c.shapes[i], i, 10);
      EXPECT_TRUE(same_bits(interpret(c.program, in, c.params), interpret(g, in, c.params)))
          << "shapes " << i;
    }
  }
}

TEST(WindowGather, GatheredKernelsMatchTheInterpreterBitForBit) {
  const std::vector<Case> all = cases();
  std::vector<Program> programs;
  for (const Case& c : all) programs.push_back(c.program);
  for (auto [threads, reassociate] : {std::pair{1, false}, {3, true}}) {
    if (testing::kSanitized && threads > 1) continue;
    CCompileOptions options;
    options.threads = threads;
    options.reassociate = reassociate;
    auto kernels = compile_c_batch(programs, options);
    for (size_t k = 0; k < all.size(); ++k)
      for (size_t i = 0; i < all[k].shapes.size(); ++i) {
        SCOPED_TRACE(all[k].what + ", shapes " + std::to_string(i) + " on " +
                     std::to_string(threads) + " threads");
        TensorMap in = testing::few_values(all[k].program, all[k].shapes[i], 10 + i, 10);
        TensorMap want = interpret(all[k].program, in, all[k].params);
        TensorMap got = testing::nan_like(want);
        kernels[k]->run_into(in, got, all[k].params);
        // Reassociating, the compiler fuses multiplies and adds: not the interpreter's bits.
        EXPECT_TRUE(reassociate ? testing::same_outputs(want, got, 1e-4) : same_bits(want, got));
      }
  }
}

}  // namespace
}  // namespace uops
