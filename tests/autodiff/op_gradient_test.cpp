// The gradient program of every op of the registry: against central finite differences in f64
// on random cases, and unchanged by the optimization pipeline.
#include "uops/ops/op_gradient.h"

#include <gtest/gtest.h>

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

INSTANTIATE_TEST_SUITE_P(AllOps, OpGradient, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace uops
