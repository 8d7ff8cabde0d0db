// The gradient program of every op of the registry: against central finite differences in f64
// on random cases, and unchanged by the optimization pipeline.
#include "uops/ops/op_gradient.h"

#include <gtest/gtest.h>

#include <map>

#include "autodiff/grad_check.h"
#include "autodiff/op_cases.h"
#include "uops/ir.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/stats.h"

namespace uops {

using namespace ir;

namespace {

using testing::random_op_case;

constexpr int kTrials = 12;

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const OpDef& op : all_ops()) names.push_back(op.name);
  return names;
}

class OpGradient : public ::testing::TestWithParam<std::string> {};

TEST_P(OpGradient, MatchesFiniteDifferences) {
  const OpDef& op = find_op(GetParam());
  Program forward = forward_program(op, DType::f64);
  Program grad = gradient_program(op, DType::f64);
  verify_or_throw(grad, "gradient");
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::OpCase c = random_op_case(op, DType::f64, trial);
    TensorMap dy = testing::random_output_grads(forward, c.inputs, c.params, 500 + trial);
    std::string failure = testing::compare_with_finite_differences(
        forward, grad, c.inputs, dy, c.params, differentiable_inputs(op));
    ASSERT_EQ(failure, "") << "trial " << trial;
  }
}

TEST_P(OpGradient, OptimizedGradientGivesTheSameResult) {
  const OpDef& op = find_op(GetParam());
  for (DType dtype : {DType::f64, DType::f32}) {
    Program forward = forward_program(op, dtype);
    Program grad = gradient_program(op, dtype);
    PipelineOptions options;
    options.verify = true;
    Program optimized = optimize(grad, options);
    for (int trial = 0; trial < kTrials; ++trial) {
      testing::OpCase c = random_op_case(op, dtype, trial);
      TensorMap available = c.inputs;
      for (auto& [name, t] : testing::random_output_grads(forward, c.inputs, c.params, trial))
        available[name] = t;
      TensorMap want = testing::run_with(grad, available, c.params);
      TensorMap got = testing::run_with(optimized, available, c.params);
      ASSERT_EQ(got.size(), want.size());
      EXPECT_LE(testing::max_difference(got, want), dtype == DType::f64 ? 1e-12 : 1e-5)
          << dtype_name(dtype) << " trial " << trial << "\n"
          << print(optimized);
    }
  }
}

TEST_P(OpGradient, TakesOnlyWhatItReadsAndGivesEveryDifferentiableInput) {
  const OpDef& op = find_op(GetParam());
  Program grad = gradient_program(op, DType::f32);
  for (auto& y : op.outputs) EXPECT_GE(grad.find_tensor("d" + y), 0) << "d" << y;
  for (int t : grad.inputs()) {
    const std::string& name = grad.tensors[t].name;
    bool is_output_grad = false;
    for (auto& y : op.outputs) is_output_grad |= name == "d" + y;
    bool is_input = false;
    for (auto& in : op.inputs) is_input |= name == in.name;
    EXPECT_TRUE(is_output_grad || is_input) << name;
  }
  std::vector<std::string> outputs;
  for (int t : grad.outputs()) outputs.push_back(grad.tensors[t].name);
  std::vector<std::string> want;
  for (auto& x : differentiable_inputs(op)) want.push_back("d" + x);
  EXPECT_EQ(outputs, want);
}

// The passes shrink the gradient programs of conv2d and softmax at their example shapes (f32);
// the figures are printed for the report.
TEST(OpGradientStats, PassesShrinkConv2dAndSoftmaxGradients) {
  for (std::string name : {"conv2d", "softmax"}) {
    const OpDef& op = find_op(name);
    std::map<std::string, std::vector<int64_t>> shapes = op.example_shapes;
    TensorMap zeros;
    for (auto& [input, shape] : shapes) zeros[input] = Tensor(DType::f32, shape);
    for (auto& [y, t] : interpret(forward_program(op, DType::f32), zeros, op.example_params))
      shapes["d" + y] = t.shape;
    Program grad = gradient_program(op, DType::f32);
    Program optimized = optimize(grad);
    ProgramStats before = program_stats(grad, shapes, op.example_params);
    ProgramStats after = program_stats(optimized, shapes, op.example_params);
    std::cout << name << " gradient: blocks " << before.blocks << " -> " << after.blocks
              << ", loops " << before.loops << " -> " << after.loops << ", temporaries "
              << before.temporaries << " -> " << after.temporaries << ", temporary bytes "
              << before.temporary_bytes << " -> " << after.temporary_bytes << "\n"
              << print(optimized);
    EXPECT_LT(after.blocks, before.blocks) << name;
    EXPECT_LT(after.temporary_bytes, before.temporary_bytes) << name;
  }
}

// The optimized gradient program of every built-in op, at its example shapes (f32), is no larger
// than the one the loop-block emitters gave before gradients became graphs (blocks, temporaries,
// temporary bytes; `uopc stats OP --grad` on main at 67cfe35).
TEST(OpGradientStats, NoLargerThanTheLoopBlockEmitters) {
  struct Size {
    int64_t blocks, temporaries, temporary_bytes;
  };
  const std::map<std::string, Size> before = {
      {"add", {1, 0, 0}},
      {"sub", {1, 0, 0}},
      {"mul", {1, 0, 0}},
      {"div", {1, 0, 0}},
      {"max", {1, 0, 0}},
      {"min", {1, 0, 0}},
      {"relu", {2, 0, 0}},
      {"sigmoid", {1, 0, 0}},
      {"tanh", {1, 0, 0}},
      {"exp", {1, 0, 0}},
      {"log", {1, 0, 0}},
      {"gelu", {7, 4, 1048576}},
      {"matmul", {6, 1, 16384}},
      {"batched_matmul", {6, 1, 32768}},
      {"linear", {5, 2, 16384}},
      {"transpose", {1, 0, 0}},
      {"conv2d", {5, 1, 32768}},
      {"depthwise_conv2d", {6, 1, 131072}},
      {"maxpool2d", {4, 2, 65536}},
      {"avgpool2d", {4, 1, 32768}},
      {"softmax", {6, 7, 264704}},
      {"log_softmax", {5, 6, 133632}},
      {"layernorm", {9, 6, 133632}},
      {"sum", {1, 0, 0}},
      {"mean", {1, 0, 0}},
      {"max_reduce", {2, 1, 1024}},
      {"argmax", {1, 0, 0}},
      {"gather", {2, 1, 65536}},
      {"concat", {3, 0, 0}},
      {"pad2d", {2, 0, 0}},
      {"cross_entropy", {7, 7, 1029124}},
  };
  for (auto& [name, old] : before) {
    const OpDef& op = find_op(name);
    // With d<y> shaped like y at the example.
    Shapes shapes = gradient_op(op).example_shapes;
    ProgramStats now =
        program_stats(optimize(gradient_program(op, DType::f32)), shapes, op.example_params);
    EXPECT_LE(now.blocks, old.blocks) << name;
    EXPECT_LE(now.temporaries, old.temporaries) << name;
    EXPECT_LE(now.temporary_bytes, old.temporary_bytes) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradient, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace uops
