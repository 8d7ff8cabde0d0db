// Single programs and small chains as runtime nodes: the blocks run on the CPU executor give
// what the interpreter gives, nodes carry the accesses of their blocks, and every misuse is a
// uops::Error before anything runs.
#include "uops/backends/runtime_nodes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduled/sum_without_zeroing.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/runtime.h"

namespace uops {

using namespace ir;

namespace {

Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::f64, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// Runs the chain's nodes once on `streams` CPU streams.
void run_scheduled(const ChainNodes& nodes, size_t streams) {
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({streams}));
  executor.run();
}

// Without reassociation the C kernels do every operation in the interpreter's order, so the
// results agree exactly (the backends' own tests hold them to the same).
CCompileOptions exact() {
  CCompileOptions options;
  options.reassociate = false;
  return options;
}

void expect_same(const Tensor& expected, const Tensor& actual, const std::string& what) {
  ASSERT_EQ(expected.shape, actual.shape) << what;
  for (int64_t i = 0; i < expected.numel(); ++i)
    ASSERT_EQ(expected.get(i), actual.get(i)) << what << " element " << i;
}

void expect_blocks_match_interpreter(const Program& program, const TensorMap& inputs,
                                     const ParamMap& params) {
  ASSERT_GT(program.blocks.size(), 0u);
  ChainNodes nodes({{"p", program, {}, params}}, inputs, exact());
  run_scheduled(nodes, 2);
  TensorMap expected = interpret(program, inputs, params);
  for (auto& [name, tensor] : expected) expect_same(tensor, nodes.read(name), name);
}

TEST(RuntimeNodes, SoftmaxForwardAndGradientBlocksMatchInterpreter) {
  const OpDef& op = find_op("softmax");
  Program forward = optimize(forward_program(op, DType::f64));
  ASSERT_EQ(forward.blocks.size(), 3u);
  expect_blocks_match_interpreter(forward, {{"x", random_tensor({7, 13}, 1)}}, {});

  Program grad = optimize(gradient_program(op, DType::f64));
  ASSERT_GT(grad.blocks.size(), 1u);
  expect_blocks_match_interpreter(
      grad, {{"x", random_tensor({7, 13}, 2)}, {"dy", random_tensor({7, 13}, 3)}}, {});
}

TEST(RuntimeNodes, Conv2dForwardAndGradientBlocksMatchInterpreter) {
  const OpDef& op = find_op("conv2d");
  ParamMap params = {{"stride", 2}, {"pad", 1}, {"dilation", 1}};
  TensorMap inputs = {{"x", random_tensor({2, 9, 8, 3}, 4)}, {"w", random_tensor({5, 3, 3, 3}, 5)}};
  expect_blocks_match_interpreter(optimize(forward_program(op, DType::f64)), inputs, params);

  // One block computes dx and dw together (the gradient graph's scatters fuse).
  Program grad = optimize(gradient_program(op, DType::f64));
  ASSERT_GE(grad.blocks.size(), 1u);
  inputs["dy"] = random_tensor({2, 5, 4, 5}, 6);
  expect_blocks_match_interpreter(grad, inputs, params);
}

TEST(RuntimeNodes, GatherAndItsScatterGradientBlocksMatchInterpreter) {
  const OpDef& op = find_op("gather");
  Tensor idx(DType::i32, {6});
  for (int64_t i = 0; i < 6; ++i) idx.set(i, double((i * 3) % 5 - 1));  // -1 is out of range
  TensorMap inputs = {{"table", random_tensor({4, 3}, 17)}, {"idx", idx}};
  expect_blocks_match_interpreter(optimize(forward_program(op, DType::f64)), inputs, {});
  inputs["dy"] = random_tensor({6, 3}, 18);
  expect_blocks_match_interpreter(optimize(gradient_program(op, DType::f64)), inputs, {});
}

TEST(RuntimeNodes, ATensorReadOnlyAsAnIndexIsDeclaredRead) {
  // y[i] = x[idx[i]], with idx read through the load's index expression, not as a value: the
  // runtime must still see the read, or it could run the block before idx is written.
  Program p;
  p.tensors = {{"x", DType::f64, {idx::dim(0, 0)}, Role::input},
               {"idx", DType::i32, {idx::dim(1, 0)}, Role::input},
               {"y", DType::f64, {idx::dim(1, 0)}, Role::output}};
  p.num_vars = 1;
  Loop l{0, idx::constant(0), idx::dim(1, 0), {}, {}};
  l.stmts.push_back({StmtKind::assign,
                     2,
                     {idx::var(0)},
                     true,
                     ReduceOp::sum,
                     -1,
                     val::load(0, {idx::data(1, {idx::var(0)})}),
                     nullptr});
  p.blocks.push_back({{l}, "gather by hand"});
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  Tensor indices(DType::i32, {5});
  for (int64_t i = 0; i < 5; ++i) indices.set(i, double(4 - i));
  TensorMap inputs = {{"x", random_tensor({4}, 19)}, {"idx", indices}};
  expect_blocks_match_interpreter(p, inputs, {});

  ChainNodes nodes({{"g", p, {}, {}}}, inputs);
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::Graph graph = std::move(builder).build();
  std::vector<runtime::BufferId> reads = graph.node(1).reads;
  std::sort(reads.begin(), reads.end());
  std::vector<runtime::BufferId> expected = {runtime::buffer_id(&nodes.read("x")),
                                             runtime::buffer_id(&nodes.read("idx"))};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(reads, expected);
}

TEST(RuntimeNodes, OutputsStartAtZeroOnEveryRun) {
  // y[0] += x[i] with no zeroing block: the program relies on outputs starting at zero
  // (docs/design.md §3.4), so a second run must not add to the first one's result.
  Program p = testing::sum_without_zeroing();
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  Tensor x(DType::f64, {3});
  for (int i = 0; i < 3; ++i) x.set(i, i + 1.0);
  ChainNodes nodes({{"sum", p, {}, {}}}, {{"x", x}});
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build());
  for (int run = 0; run < 2; ++run) {
    executor.run();
    EXPECT_EQ(nodes.read("y").get(0), 6.0) << "run " << run;
  }
}

TEST(RuntimeNodes, OneNodePerBlockPlusZeroFillWithTheBlocksAccesses) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f64));
  ChainNodes nodes({{"softmax", p, {{"x", "in"}, {"y", "out"}}, {}}},
                   {{"in", random_tensor({3, 4}, 7)}});
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::Graph graph = std::move(builder).build();
  ASSERT_EQ(graph.size(), 1 + p.blocks.size());
  EXPECT_EQ(graph.node(0).name, "softmax: zero");
  EXPECT_TRUE(graph.node(0).reads.empty());
  for (size_t b = 0; b < p.blocks.size(); ++b)
    EXPECT_EQ(graph.node(runtime::NodeIndex(b + 1)).name,
              "softmax: block " + std::to_string(b) + " (" + p.blocks[b].origin + ")");
  auto id = [&](const char* buffer) { return runtime::buffer_id(&nodes.read(buffer)); };
  // The first block reads only the input; the last writes the output.
  EXPECT_EQ(graph.node(1).reads, std::vector<runtime::BufferId>{id("in")});
  const runtime::Node& last = graph.node(runtime::NodeIndex(p.blocks.size()));
  EXPECT_EQ(last.writes, std::vector<runtime::BufferId>{id("out")});
  // Every block is ordered after the zero fill and before the next block that needs it.
  for (runtime::NodeIndex n = 1; n < graph.size(); ++n)
    EXPECT_FALSE(graph.predecessors(n).empty()) << graph.node(n).name;
}

TEST(RuntimeNodes, ChainSharesBuffersAcrossPrograms) {
  // relu then its gradient, then a copy: y = relu(x), dx = dy * (x > 0), back = copy(dx).
  const OpDef& relu = find_op("relu");
  std::vector<ChainStep> steps = {
      {"relu", optimize(forward_program(relu, DType::f64)), {{"x", "a"}, {"y", "b"}}, {}},
      {"relu grad",
       optimize(gradient_program(relu, DType::f64)),
       {{"x", "a"}, {"dy", "b"}, {"dx", "c"}},
       {}},
      {"copy", copy_program(2, DType::f64), {{"x", "c"}, {"y", "d"}}, {}},
  };
  TensorMap inputs = {{"a", random_tensor({5, 6}, 8)}};
  ChainNodes nodes(steps, inputs, exact());
  run_scheduled(nodes, 2);
  TensorMap expected = inputs;
  interpret_chain(steps, expected);
  for (const char* name : {"b", "c", "d"}) expect_same(expected.at(name), nodes.read(name), name);
  for (int64_t i = 0; i < 30; ++i) {
    double a = inputs.at("a").get(i);
    EXPECT_EQ(nodes.read("d").get(i), a > 0 ? a : 0.0);
  }
}

TEST(RuntimeNodes, RunsAgainAfterInputsAreRewritten) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f64));
  ChainNodes nodes({{"softmax", p, {}, {}}}, {{"x", random_tensor({4, 5}, 9)}}, exact());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  executor.run();
  Tensor x = random_tensor({4, 5}, 10);
  nodes.write("x", x);
  executor.run();
  expect_same(interpret(p, {{"x", x}}).at("y"), nodes.read("y"), "y");
}

TEST(RuntimeNodes, MisuseIsAnErrorBeforeAnythingRuns) {
  const OpDef& add = find_op("add");
  Program p = optimize(forward_program(add, DType::f64));
  TensorMap inputs = {{"x", random_tensor({2, 3}, 11)}, {"y", random_tensor({2, 3}, 12)}};
  auto message = [&](std::vector<ChainStep> steps, TensorMap in) {
    try {
      ChainNodes nodes(std::move(steps), std::move(in));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({{"s", p, {{"y", "nowhere"}}, {}}}, inputs).find("reads buffer 'nowhere'"),
            std::string::npos);
  EXPECT_NE(message({{"s", p, {{"z", "x"}}, {}}}, inputs).find("binds two tensors to buffer 'x'"),
            std::string::npos);
  TensorMap wide = inputs;
  wide["y"] = random_tensor({2, 4}, 13);
  EXPECT_NE(message({{"s", p, {}, {}}}, wide).find("step 's': "), std::string::npos);
  TensorMap taken = inputs;
  taken["z"] = random_tensor({3, 3}, 14);
  EXPECT_NE(message({{"s", p, {}, {}}}, taken).find("writes buffer 'z' as f64 [2, 3]"),
            std::string::npos);

  ChainNodes nodes({{"s", p, {}, {}}}, inputs);
  EXPECT_THROW(nodes.read("w"), Error);
  EXPECT_THROW(nodes.write("x", random_tensor({3, 2}, 15)), Error);
}

TEST(RuntimeNodes, AFailingKernelStopsTheRunWithTheInterpretersError) {
  // y[i] = x[i / $k]: division by zero when k = 0, reported by the kernel's error bits.
  Graph g;
  g.param("k");
  Node x = g.input("x", 1, DType::f64);
  g.output("y", g.reindex(x, {"dA0"}, {"i0 / $k"}));
  Program p = lower(g);
  TensorMap inputs = {{"x", random_tensor({4}, 16)}};
  EXPECT_THROW(interpret(p, inputs, {{"k", 0}}), Error);
  ChainNodes nodes({{"div", p, {}, {{"k", 0}}}}, inputs);
  try {
    run_scheduled(nodes, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 'div': "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uops
