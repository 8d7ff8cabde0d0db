// Gradient programs against analytic gradients written with Eigen, on random f64 cases.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "autodiff/grad_check.h"
#include "autodiff/op_cases.h"
#include "uops/ops/op_gradient.h"
#include "uops/uops.h"

namespace uops {
namespace {

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXd;

constexpr int kTrials = 12;

Mat mat(const Tensor& t, int64_t rows, int64_t cols) {
  return Eigen::Map<const Mat>(t.data<double>(), rows, cols);
}
Mat mat(const Tensor& t) {
  return mat(t, t.shape[0], t.numel() / std::max<int64_t>(t.shape[0], 1));
}

// A random case of `op`, its seeds d<output>, and what its gradient program computes.
struct GradRun {
  testing::OpCase c;
  TensorMap d;     // d<output>
  TensorMap grad;  // d<input>
};

GradRun run(const std::string& name, int trial) {
  const OpDef& op = find_op(name);
  GradRun r;
  r.c = testing::random_op_case(op, DType::f64, trial);
  r.d = testing::random_output_grads(forward_program(op, DType::f64), r.c.inputs, r.c.params,
                                     700 + trial);
  TensorMap available = r.c.inputs;
  for (auto& [n, t] : r.d) available[n] = t;
  r.grad = testing::run_with(gradient_program(op, DType::f64), available, r.c.params);
  return r;
}

void expect_near(const Tensor& got, const Mat& want, const std::string& what) {
  ASSERT_EQ(got.numel(), want.size()) << what;
  for (int64_t i = 0; i < got.numel(); ++i)
    ASSERT_NEAR(got.get(i), want.data()[i], 1e-9 * (1 + std::abs(want.data()[i])))
        << what << " element " << i;
}

Mat softmax_rows(const Mat& x) {
  Mat e = (x.colwise() - x.rowwise().maxCoeff()).array().exp().matrix();
  return e.array().colwise() / e.rowwise().sum().array();
}

TEST(EigenGradient, Matmul) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("matmul", trial);
    Mat a = mat(r.c.inputs.at("a")), b = mat(r.c.inputs.at("b")), dc = mat(r.d.at("dc"));
    expect_near(r.grad.at("da"), dc * b.transpose(), "da");
    expect_near(r.grad.at("db"), a.transpose() * dc, "db");
  }
}

TEST(EigenGradient, Linear) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("linear", trial);
    Mat x = mat(r.c.inputs.at("x")), w = mat(r.c.inputs.at("w")), dy = mat(r.d.at("dy"));
    expect_near(r.grad.at("dx"), dy * w, "dx");
    expect_near(r.grad.at("dw"), dy.transpose() * x, "dw");
    expect_near(r.grad.at("db"), dy.colwise().sum(), "db");
  }
}

TEST(EigenGradient, Softmax) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("softmax", trial);
    Mat y = softmax_rows(mat(r.c.inputs.at("x"))), dy = mat(r.d.at("dy"));
    Mat dx = y.array() * (dy.colwise() - (dy.array() * y.array()).matrix().rowwise().sum()).array();
    expect_near(r.grad.at("dx"), dx, "dx");
  }
}

TEST(EigenGradient, Layernorm) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("layernorm", trial);
    Mat x = mat(r.c.inputs.at("x")), dy = mat(r.d.at("dy"));
    Eigen::RowVectorXd gamma = mat(r.c.inputs.at("gamma"), 1, x.cols());
    Mat xc = x.colwise() - x.rowwise().mean();
    Vec rstd = ((xc.array().square().rowwise().mean()) + 1e-5).rsqrt();
    Mat xhat = xc.array().colwise() * rstd.array();
    Mat g = dy.array().rowwise() * gamma.array();
    Mat dx = ((g.colwise() - g.rowwise().mean()).array() -
              xhat.array().colwise() * (g.array() * xhat.array()).rowwise().mean())
                 .colwise() *
             rstd.array();
    expect_near(r.grad.at("dx"), dx, "dx");
    expect_near(r.grad.at("dgamma"), (dy.array() * xhat.array()).colwise().sum().matrix(),
                "dgamma");
    expect_near(r.grad.at("dbeta"), dy.colwise().sum(), "dbeta");
  }
}

TEST(EigenGradient, CrossEntropy) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("cross_entropy", trial);
    Mat logits = mat(r.c.inputs.at("logits"));
    const Tensor& labels = r.c.inputs.at("labels");
    Mat want = softmax_rows(logits);
    // An out-of-range label selects 0: only the log-sum-exp term remains.
    for (int64_t m = 0; m < logits.rows(); ++m) {
      int64_t label = int64_t(labels.get(m));
      if (label >= 0 && label < logits.cols()) want(m, label) -= 1;
    }
    want *= r.d.at("dloss").get(0) / double(logits.rows());
    expect_near(r.grad.at("dlogits"), want, "dlogits");
  }
}

struct ConvShape {
  int64_t n, h, w, c, o, kh, kw, oh, ow, stride, pad, dilation;
};

TEST(EigenGradient, Conv2dThroughIm2col) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("conv2d", trial);
    const Tensor &x = r.c.inputs.at("x"), &w = r.c.inputs.at("w");
    ConvShape s{x.shape[0],
                x.shape[1],
                x.shape[2],
                x.shape[3],
                w.shape[0],
                w.shape[1],
                w.shape[2],
                0,
                0,
                r.c.params.at("stride"),
                r.c.params.at("pad"),
                r.c.params.at("dilation")};
    s.oh = (s.h + 2 * s.pad - s.dilation * (s.kh - 1) - 1) / s.stride + 1;
    s.ow = (s.w + 2 * s.pad - s.dilation * (s.kw - 1) - 1) / s.stride + 1;
    // cols[(n, oh, ow), (kh, kw, c)] = x at the window position (zero in the padding).
    int64_t rows = s.n * s.oh * s.ow, patch = s.kh * s.kw * s.c;
    Mat cols = Mat::Zero(rows, patch);
    std::vector<std::pair<int64_t, int64_t>> at;  // (col entry, x element) pairs
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t oh = 0; oh < s.oh; ++oh)
        for (int64_t ow = 0; ow < s.ow; ++ow)
          for (int64_t kh = 0; kh < s.kh; ++kh)
            for (int64_t kw = 0; kw < s.kw; ++kw)
              for (int64_t c = 0; c < s.c; ++c) {
                int64_t ih = oh * s.stride - s.pad + kh * s.dilation;
                int64_t iw = ow * s.stride - s.pad + kw * s.dilation;
                if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
                int64_t row = (n * s.oh + oh) * s.ow + ow, col = (kh * s.kw + kw) * s.c + c;
                int64_t xi = ((n * s.h + ih) * s.w + iw) * s.c + c;
                cols(row, col) = x.get(xi);
                at.push_back({row * patch + col, xi});
              }
    Mat wm = mat(w, s.o, patch), dy = mat(r.d.at("dy"), rows, s.o);
    Mat dcols = dy * wm;
    Mat dx = Mat::Zero(1, x.numel());
    for (auto [entry, xi] : at) dx(0, xi) += dcols.data()[entry];
    expect_near(r.grad.at("dx"), dx, "dx");
    expect_near(r.grad.at("dw"), dy.transpose() * cols, "dw");
  }
}

TEST(EigenGradient, Maxpool2dRoutesToTheFirstMaximumOfEachWindow) {
  for (int trial = 0; trial < kTrials; ++trial) {
    GradRun r = run("maxpool2d", trial);
    const Tensor& x = r.c.inputs.at("x");
    const Tensor& dy = r.d.at("dy");
    int64_t N = x.shape[0], H = x.shape[1], W = x.shape[2], C = x.shape[3];
    int64_t k = r.c.params.at("k"), st = r.c.params.at("stride"), p = r.c.params.at("pad");
    int64_t OH = (H + 2 * p - k) / st + 1, OW = (W + 2 * p - k) / st + 1;
    Mat dx = Mat::Zero(1, x.numel());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t c = 0; c < C; ++c) {
            int64_t best = -1;
            for (int64_t kh = 0; kh < k; ++kh)
              for (int64_t kw = 0; kw < k; ++kw) {
                int64_t ih = oh * st - p + kh, iw = ow * st - p + kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                int64_t xi = ((n * H + ih) * W + iw) * C + c;
                if (best < 0 || x.get(xi) > x.get(best)) best = xi;
              }
            dx(0, best) += dy.get(((n * OH + oh) * OW + ow) * C + c);
          }
    expect_near(r.grad.at("dx"), dx, "dx");
  }
}

}  // namespace
}  // namespace uops
