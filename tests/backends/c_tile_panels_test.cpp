// The C backend's tile panels (backends/c/c_tile_panels.h): which tiles read their row operand
// from a panel (tiles in rows of 16 lanes under AVX-512's width, AVX-512's whole rows of 64
// columns, kept across one loop), and that
// the kernels give the interpreter's results bit for bit where
// a panel is refilled: by the reduction tiles outside it (more than kTilePanelRows steps), by
// the batch, by the column tiles, with rows and columns left over, on one thread and on three,
// and on a thread with a small stack.
#include "backends/c/c_tile_panels.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include "backends/c/c_team_plan.h"
#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/printer.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

using namespace ir;

// As the C printer plans p for a target whose vectors hold `bytes`.
Program planned(const Program& optimized, int bytes) {
  Program p = plan_cpu(optimized, CpuTarget{true, false, bytes});
  cgen::plan_teams(p, false);
  cgen::plan_tile_panels(p, bytes);
  return p;
}

// The names of the tensors p's tiles read from panels.
std::vector<std::string> panels(const Program& p) {
  std::vector<std::string> out;
  for (const Block& b : p.blocks)
    for (const Loop& l : b.loops)
      for (auto& [t, index] : l.plan.tile_panel) out.push_back(p.tensors[size_t(t)].name);
  return out;
}

Program forward(const char* op, DType t = DType::f32) {
  return optimize(forward_program(find_op(op), t));
}

// The x86-64 levels this host runs: SSE2's 16-byte vectors, AVX2's 32, AVX-512's 64.
std::vector<std::string> host_targets() {
  std::vector<std::string> targets;
#if defined(__x86_64__)
  targets.push_back("x86-64");
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    targets.push_back("x86-64-v3");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    targets.push_back("x86-64-v4");
#endif
  return targets;
}

TEST(TilePanels, TilesInRowsOfLanesReadTheirRowOperandFromAPanel) {
  using Names = std::vector<std::string>;
  // matmul's b, in its tiles of 6 rows and of the 4 left over; batched matmul's likewise.
  for (const char* op : {"matmul", "batched_matmul"}) {
    for (int bytes : {32, 16}) {
      const Program p = planned(forward(op), bytes);
      EXPECT_EQ(panels(p), (Names{"b", "b"})) << op << " " << bytes << "\n" << print(p);
    }
    // AVX-512's tiles of 64 columns (whole rows, which GCC vectorizes) read b's from a panel
    // too, their 16-lane tiles of the columns left over do not; f64 tiles get none.
    // (Each in two blocks: the reduction split across a team where the output is small.)
    EXPECT_EQ(panels(planned(forward(op), 64)), (Names{"b", "b", "b", "b"})) << op;
    EXPECT_EQ(panels(planned(forward(op, DType::f64), 32)), Names{}) << op;
    EXPECT_EQ(panels(planned(forward(op, DType::f64), 64)), Names{}) << op;
  }
  // Matmul's gradient: db = a^T dc reads dc's rows.
  const Program grad = planned(optimize(gradient_program(find_op("matmul"), DType::f32)), 32);
  EXPECT_EQ(panels(grad), (Names{"dc", "dc"})) << print(grad);
  const Program grad64 = planned(optimize(gradient_program(find_op("matmul"), DType::f32)), 64);
  EXPECT_EQ(panels(grad64), (Names{"dc", "dc", "dc", "dc"})) << print(grad64);
  // conv2d's tile is kept across kh, kw and the input channels, a panel of 9 x 64 rows: none.
  EXPECT_EQ(panels(planned(forward("conv2d"), 32)), Names{});
}

TEST(TilePanels, KernelsWithPanelsMatchTheInterpreterBitForBit) {
  struct Case {
    Program p;
    std::map<std::string, std::vector<int64_t>> shapes;
  };
  const Program matmul = forward("matmul");
  const Program grad = optimize(gradient_program(find_op("matmul"), DType::f32));
  const std::vector<Case> cases = {
      // Three reduction tiles (each refills the panel), five column tiles and 8 columns over,
      // work enough for a team of three.
      {matmul, {{"a", {200, 1100}}, {"b", {1100, 88}}}},
      {matmul, {{"a", {70, 40}}, {"b", {40, 37}}}},
      {matmul, {{"a", {13, 300}}, {"b", {300, 64}}}},
      // The batch moves the panel.
      {forward("batched_matmul"), {{"a", {3, 25, 600}}, {"b", {3, 600, 40}}}},
      {grad, {{"a", {29, 530}}, {"b", {530, 35}}, {"dc", {29, 35}}}},
      // AVX-512's tiles of 64 columns, with columns left over.
      {forward("batched_matmul"), {{"a", {2, 25, 600}}, {"b", {2, 600, 70}}}},
      {grad, {{"a", {29, 530}}, {"b", {530, 70}}, {"dc", {29, 70}}}},
  };
#if !defined(__x86_64__)
  GTEST_SKIP() << "the targets named here are x86-64's";
#endif
  for (const Case& c : cases)
    for (const std::string& target : host_targets())
      for (int threads : {1, 3}) {
        SCOPED_TRACE(target + " on " + std::to_string(threads) + " threads\n" + print(c.p));
        CCompileOptions options;
        options.threads = threads;
        options.reassociate = false;
        options.target = target;
        ASSERT_NE(emit_c(c.p, options).find("panel_v"), std::string::npos);
        auto kernel = compile_c(c.p, options);
        for (uint64_t seed : {1, 2}) {
          TensorMap in = testing::random_inputs(c.p, c.shapes, seed);
          TensorMap want = interpret(c.p, in, {});
          TensorMap got = testing::nan_like(want);
          kernel->run_into(in, got, {});
          EXPECT_TRUE(testing::same_outputs(want, got)) << seed;
        }
      }
}

// A panel is the running thread's own, in thread-local storage, not in the kernel's frame: a
// thread whose stack holds 32 KiB (musl's default is 128 KiB) runs kernels that fill AVX-512's
// panel of 128 KB and the 32 KB ones of narrower targets. In the frame, the fill wrote past the
// stack's guard page (a crash, or another thread's stack overwritten). AddressSanitizer's frames
// are larger: 96 KiB there.
TEST(TilePanels, KernelsRunOnSmallStacks) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the targets named here are x86-64's";
#endif
#if defined(__SANITIZE_ADDRESS__)
  const size_t kStack = 96 << 10;
#else
  const size_t kStack = 32 << 10;
#endif
  const Program matmul = forward("matmul");
  // 200 rows: enough tiles for AVX-512's panel to be filled (kTilePanelTiles).
  const std::map<std::string, std::vector<int64_t>> shapes = {{"a", {200, 600}}, {"b", {600, 128}}};
  for (const std::string& target : host_targets()) {
    CCompileOptions options;
    options.threads = 1;
    options.reassociate = false;
    options.target = target;
    ASSERT_NE(emit_c(matmul, options).find("panel_v"), std::string::npos) << target;
    auto kernel = compile_c(matmul, options);
    struct Call {
      Executable* kernel;
      TensorMap in, got;
      std::string error;
    } call{kernel.get(), testing::random_inputs(matmul, shapes, 3), {}, {}};
    const TensorMap want = interpret(matmul, call.in, {});
    call.got = testing::nan_like(want);
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, kStack), 0);
    pthread_t thread;
    auto body = [](void* p) -> void* {
      auto* c = static_cast<Call*>(p);
      try {
        c->kernel->run_into(c->in, c->got, {});
      } catch (const std::exception& e) {
        c->error = e.what();
      }
      return nullptr;
    };
    ASSERT_EQ(pthread_create(&thread, &attr, body, &call), 0);
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
    EXPECT_EQ(call.error, "") << target;
    EXPECT_TRUE(testing::same_outputs(want, call.got)) << target;
  }
}

}  // namespace
}  // namespace uops
