// The oracle on gradients: gradient_op(op) is an op like any other, so a hand-written backward
// kernel is checked against the description's gradient on random cases, with shrinking and a
// replay; a wrong one (softmax's backward without the row sum, as if softmax were elementwise)
// is caught.
#include <gtest/gtest.h>

#include <cmath>

#include "uops/ops/op_gradient.h"
#include "uops/oracle/harness.h"

namespace uops {

namespace {

// dx[i, j] = y[i, j] * (dy[i, j] - sum_k dy[i, k] * y[i, k]), y = softmax(x); `wrong` drops the
// row sum.
oracle::Implementation softmax_backward(bool wrong) {
  return [wrong](const TensorMap& in, const ParamMap&) {
    const Tensor &x = in.at("x"), &dy = in.at("dy");
    int64_t m = x.shape[0], n = x.shape[1];
    Tensor dx(x.dtype, x.shape);
    std::vector<double> y(n);
    for (int64_t i = 0; i < m; ++i) {
      double mx = -INFINITY, sum = 0, dot = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, x.get(i * n + j));
      for (int64_t j = 0; j < n; ++j) sum += y[j] = std::exp(x.get(i * n + j) - mx);
      for (int64_t j = 0; j < n; ++j) dot += dy.get(i * n + j) * (y[j] /= sum);
      for (int64_t j = 0; j < n; ++j)
        dx.set(i * n + j, y[j] * (dy.get(i * n + j) - (wrong ? 0.0 : dot)));
    }
    return TensorMap{{"dx", dx}};
  };
}

TEST(GradientOp, DescribesTheGradientAsAnOp) {
  OpDef g = gradient_op(find_op("conv2d"));
  EXPECT_EQ(g.name, "grad:conv2d");
  std::vector<std::string> inputs, outputs = g.outputs;
  for (auto& in : g.inputs) inputs.push_back(in.name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "w", "dy"}));
  EXPECT_EQ(outputs, (std::vector<std::string>{"dx", "dw"}));
  // dy is y's shape at the example (x [2, 16, 16, 8], w [16, 3, 3, 8], stride 1, pad 1).
  EXPECT_EQ(g.example_shapes.at("dy"), (std::vector<int64_t>{2, 16, 16, 16}));
  EXPECT_EQ(g.params, find_op("conv2d").params);
}

TEST(GradientOp, AHandWrittenBackwardKernelPasses) {
  oracle::CheckOptions options;
  options.dtype = DType::f64;
  options.trials = 100;
  oracle::CheckReport r =
      oracle::check(gradient_op(find_op("softmax")), softmax_backward(false), options);
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_EQ(r.cases, 100);
  EXPECT_FALSE(r.has_reference);
}

TEST(GradientOp, AWrongBackwardKernelIsCaughtShrunkAndReplayed) {
  OpDef op = gradient_op(find_op("softmax"));
  oracle::CheckOptions options;
  options.dtype = DType::f32;
  oracle::CheckReport r = oracle::check(op, softmax_backward(true), options);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.culprit, "implementation");
  // Even a row of one element tells: its gradient is dy - dy * 1 = 0, not dy.
  EXPECT_EQ(r.shrunk.shapes.at("x"), (std::vector<int64_t>{1, 1})) << r.message();
  EXPECT_NE(r.replay.find("grad:softmax f32"), std::string::npos);
  EXPECT_TRUE(r.repro.empty());  // a user's kernel: no uopc line, only the replay
  oracle::CheckReport again = oracle::replay(op, softmax_backward(true), r.replay);
  EXPECT_FALSE(again.passed);
  EXPECT_TRUE(oracle::replay(op, softmax_backward(false), r.replay).passed);
}

}  // namespace
}  // namespace uops
