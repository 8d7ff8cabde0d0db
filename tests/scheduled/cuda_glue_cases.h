// What the CUDA glue's tests run, on the emulation (cuda_runtime_nodes_test.cpp) and on a real
// device (cuda_glue_device_test.cpp): the same chains, inputs and tolerances.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "mlp_model.h"
#include "uops/backends/runtime_nodes.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"

namespace uops::testing::glue {

inline Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::f64, std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

// Sums may run in another order on the device (atomics, block reductions).
inline void expect_close(const Tensor& expected, const Tensor& actual, const std::string& what) {
  ASSERT_EQ(expected.dtype, actual.dtype) << what;
  ASSERT_EQ(expected.shape, actual.shape) << what;
  for (int64_t i = 0; i < expected.numel(); ++i)
    ASSERT_NEAR(expected.get(i), actual.get(i), 1e-9 * (1 + std::abs(expected.get(i))))
        << what << " element " << i;
}

// An op's forward step, then its gradient step fed the forward's output as the upstream
// gradient, so the second step's kernels read what the first step's kernels wrote on the device.
inline std::vector<ChainStep> forward_and_gradient(const std::string& op_name,
                                                   const ParamMap& params) {
  const OpDef& op = find_op(op_name);
  return {{"forward", optimize(forward_program(op, DType::f64)), {}, params},
          {"gradient", optimize(gradient_program(op, DType::f64)), {{"dy", "y"}}, params}};
}

struct ChainCase {
  std::vector<ChainStep> steps;
  TensorMap inputs;
};

// "softmax", "conv2d" or "gather" (whose indices include one out of range).
inline ChainCase chain_case(const std::string& op) {
  if (op == "softmax") return {forward_and_gradient(op, {}), {{"x", random_tensor({7, 13}, 1)}}};
  if (op == "conv2d")
    return {forward_and_gradient(op, {{"stride", 2}, {"pad", 1}, {"dilation", 1}}),
            {{"x", random_tensor({2, 9, 8, 3}, 4)}, {"w", random_tensor({5, 3, 3, 3}, 5)}}};
  Tensor idx(DType::i32, {6});
  for (int64_t i = 0; i < 6; ++i) idx.set(i, double((i * 3) % 5 - 1));
  return {forward_and_gradient(op, {}), {{"table", random_tensor({4, 3}, 17)}, {"idx", idx}}};
}

// The interpreter's loss after each of the MLP's training steps.
inline std::vector<double> mlp_losses() {
  std::vector<ChainStep> steps = mlp::training_step();
  TensorMap buffers = mlp::initial_buffers();
  std::vector<double> losses;
  for (int s = 0; s < mlp::kSteps; ++s) {
    interpret_chain(steps, buffers);
    losses.push_back(buffers.at("loss").get(0));
  }
  return losses;
}

}  // namespace uops::testing::glue
