#include "uops/oracle/reference.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <unsupported/Eigen/CXX11/Tensor>

#include "uops/error.h"

namespace uops::oracle {

namespace {

template <int R>
using ETensor = Eigen::Tensor<double, R, Eigen::RowMajor>;
using Pair = Eigen::IndexPair<Eigen::Index>;
using Dims2 = std::array<Eigen::Index, 2>;
using Dims4 = std::array<Eigen::Index, 4>;

template <int R>
ETensor<R> in(const TensorMap& inputs, const std::string& name) {
  const Tensor& t = inputs.at(name);
  UOPS_ASSERT(t.shape.size() == size_t(R), "reference: rank of " + name);
  std::array<Eigen::Index, R> dims;
  for (int a = 0; a < R; ++a) dims[a] = t.shape[a];
  ETensor<R> e(dims);
  for (int64_t i = 0; i < t.numel(); ++i) e.data()[i] = t.get(i);
  return e;
}

template <int R>
Tensor out(const ETensor<R>& e, DType dtype) {
  std::vector<int64_t> shape(e.dimensions().begin(), e.dimensions().end());
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, e.data()[i]);
  return t;
}

struct Ctx {
  const TensorMap& inputs;
  const ParamMap& params;
  DType dtype;
  int64_t p(const std::string& name) const { return params.at(name); }
};

using Ref = std::function<TensorMap(const Ctx&)>;

// A row vector [M] as [M, N] by repeating along axis 1.
ETensor<2> rows(const ETensor<1>& v, Eigen::Index n) {
  return v.reshape(Dims2{v.dimension(0), 1}).broadcast(Dims2{1, n});
}

// A vector [N] as [M, N] by repeating along axis 0.
ETensor<2> cols(const ETensor<1>& v, Eigen::Index m) {
  return v.reshape(Dims2{1, v.dimension(0)}).broadcast(Dims2{m, 1});
}

// x [N,H,W,C] padded by `pad` on both spatial sides with `fill`.
ETensor<4> pad_image(const ETensor<4>& x, int64_t pad, double fill) {
  std::array<std::pair<Eigen::Index, Eigen::Index>, 4> p = {
      {{0, 0}, {pad, pad}, {pad, pad}, {0, 0}}};
  return x.pad(p, fill);
}

// The [N, OH, OW, C] slice of a padded image that window offset (dh, dw) sees.
ETensor<4> window(const ETensor<4>& xp, int64_t dh, int64_t dw, int64_t oh, int64_t ow,
                  int64_t stride) {
  Dims4 start = {0, dh, dw, 0};
  Dims4 stop = {xp.dimension(0), dh + (oh - 1) * stride + 1, dw + (ow - 1) * stride + 1,
                xp.dimension(3)};
  Dims4 strides = {1, stride, stride, 1};
  return xp.stridedSlice(start, stop, strides);
}

TensorMap elementwise(const Ctx& c, const std::string& out_name,
                      const std::function<ETensor<2>(const ETensor<2>&, const ETensor<2>&)>& f) {
  ETensor<2> x = in<2>(c.inputs, "x");
  ETensor<2> y = c.inputs.count("y") ? in<2>(c.inputs, "y") : x;
  return {{out_name, out<2>(f(x, y), c.dtype)}};
}

Ref binary(std::function<ETensor<2>(const ETensor<2>&, const ETensor<2>&)> f) {
  return [f](const Ctx& c) { return elementwise(c, "z", f); };
}

Ref unary(std::function<ETensor<2>(const ETensor<2>&)> f) {
  return [f](const Ctx& c) {
    return elementwise(c, "y", [&](const ETensor<2>& x, const ETensor<2>&) { return f(x); });
  };
}

TensorMap conv2d(const Ctx& c) {
  ETensor<4> x = in<4>(c.inputs, "x"), w = in<4>(c.inputs, "w");
  int64_t s = c.p("stride"), pad = c.p("pad"), d = c.p("dilation");
  int64_t kh = w.dimension(1), kw = w.dimension(2);
  int64_t oh = (x.dimension(1) + 2 * pad - d * (kh - 1) - 1) / s + 1;
  int64_t ow = (x.dimension(2) + 2 * pad - d * (kw - 1) - 1) / s + 1;
  ETensor<4> xp = pad_image(x, pad, 0.0);
  ETensor<4> y(x.dimension(0), oh, ow, w.dimension(0));
  y.setZero();
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      ETensor<2> wk = w.chip(i, 1).chip(j, 1);  // [O, C]
      ETensor<4> part =
          window(xp, i * d, j * d, oh, ow, s).contract(wk, std::array<Pair, 1>{Pair(3, 1)});
      y += part;
    }
  return {{"y", out<4>(y, c.dtype)}};
}

TensorMap depthwise_conv2d(const Ctx& c) {
  ETensor<4> x = in<4>(c.inputs, "x");
  ETensor<3> w = in<3>(c.inputs, "w");
  int64_t s = c.p("stride"), pad = c.p("pad");
  int64_t n = x.dimension(0), ch = x.dimension(3);
  int64_t oh = (x.dimension(1) + 2 * pad - w.dimension(0)) / s + 1;
  int64_t ow = (x.dimension(2) + 2 * pad - w.dimension(1)) / s + 1;
  ETensor<4> xp = pad_image(x, pad, 0.0);
  ETensor<4> y(n, oh, ow, ch);
  y.setZero();
  for (int64_t i = 0; i < w.dimension(0); ++i)
    for (int64_t j = 0; j < w.dimension(1); ++j) {
      ETensor<1> wk = w.chip(i, 0).chip(j, 0);  // [C]
      y += window(xp, i, j, oh, ow, s) *
           wk.reshape(Dims4{1, 1, 1, ch}).broadcast(Dims4{n, oh, ow, 1});
    }
  return {{"y", out<4>(y, c.dtype)}};
}

TensorMap pool(const Ctx& c, bool max) {
  ETensor<4> x = in<4>(c.inputs, "x");
  int64_t k = c.p("k"), s = c.p("stride"), pad = max ? c.p("pad") : 0;
  const double inf = std::numeric_limits<double>::infinity();
  int64_t oh = (x.dimension(1) + 2 * pad - k) / s + 1;
  int64_t ow = (x.dimension(2) + 2 * pad - k) / s + 1;
  ETensor<4> xp = pad_image(x, pad, max ? -inf : 0.0);
  ETensor<4> y(x.dimension(0), oh, ow, x.dimension(3));
  y.setConstant(max ? -inf : 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      ETensor<4> part = window(xp, i, j, oh, ow, s);
      if (max) {
        ETensor<4> m = y.cwiseMax(part);
        y = m;
      } else {
        y += part;
      }
    }
  if (!max) y = y / double(k * k);
  return {{"y", out<4>(y, c.dtype)}};
}

// x minus its row maximum, and the maximum: [M, N] and [M].
std::pair<ETensor<2>, ETensor<1>> shift_rows(const ETensor<2>& x) {
  ETensor<1> mx = x.maximum(std::array<int, 1>{1});
  return {x - rows(mx, x.dimension(1)), mx};
}

TensorMap softmax(const Ctx& c, bool log) {
  ETensor<2> x = in<2>(c.inputs, "x");
  ETensor<2> s = shift_rows(x).first;
  ETensor<2> e = s.exp();
  ETensor<1> total = e.sum(std::array<int, 1>{1});
  ETensor<2> y = log ? ETensor<2>(s - rows(total.log(), x.dimension(1)))
                     : ETensor<2>(e / rows(total, x.dimension(1)));
  return {{"y", out<2>(y, c.dtype)}};
}

TensorMap layernorm(const Ctx& c) {
  ETensor<2> x = in<2>(c.inputs, "x");
  ETensor<1> gamma = in<1>(c.inputs, "gamma"), beta = in<1>(c.inputs, "beta");
  int64_t m = x.dimension(0), n = x.dimension(1);
  ETensor<1> mean = x.mean(std::array<int, 1>{1});
  ETensor<2> xc = x - rows(mean, n);
  ETensor<1> var = (xc * xc).mean(std::array<int, 1>{1});
  ETensor<1> rstd = (var + 1e-5).rsqrt();
  ETensor<2> y = xc * rows(rstd, n) * cols(gamma, m) + cols(beta, m);
  return {{"y", out<2>(y, c.dtype)}};
}

Ref row_reduce(std::function<ETensor<1>(const ETensor<2>&)> f) {
  return [f](const Ctx& c) {
    ETensor<2> x = in<2>(c.inputs, "x");
    ETensor<2> y = f(x).reshape(Dims2{x.dimension(0), 1});
    return TensorMap{{"y", out<2>(y, c.dtype)}};
  };
}

TensorMap argmax(const Ctx& c) {
  ETensor<2> x = in<2>(c.inputs, "x");
  Eigen::Tensor<Eigen::Index, 1, Eigen::RowMajor> best = x.argmax(1);
  Tensor y(DType::i32, {x.dimension(0), 1});
  for (int64_t i = 0; i < x.dimension(0); ++i) y.set(i, double(best(i)));
  return {{"y", y}};
}

TensorMap gather(const Ctx& c) {
  ETensor<2> table = in<2>(c.inputs, "table");
  const Tensor& idx = c.inputs.at("idx");
  ETensor<2> y(idx.numel(), table.dimension(1));
  y.setZero();
  for (int64_t n = 0; n < idx.numel(); ++n) {
    int64_t row = int64_t(idx.get(n));
    if (row >= 0 && row < table.dimension(0)) y.chip(n, 0) = table.chip(row, 0);
  }
  return {{"y", out<2>(y, c.dtype)}};
}

TensorMap concat(const Ctx& c) {
  ETensor<2> z = in<2>(c.inputs, "x").concatenate(in<2>(c.inputs, "y"), 1);
  return {{"z", out<2>(z, c.dtype)}};
}

TensorMap pad2d(const Ctx& c) {
  return {{"y", out<4>(pad_image(in<4>(c.inputs, "x"), c.p("pad"), 0.0), c.dtype)}};
}

TensorMap cross_entropy(const Ctx& c) {
  ETensor<2> logits = in<2>(c.inputs, "logits");
  const Tensor& labels = c.inputs.at("labels");
  auto [s, mx] = shift_rows(logits);
  ETensor<1> lse = mx + s.exp().sum(std::array<int, 1>{1}).log();
  ETensor<1> loss(1);
  loss(0) = 0.0;
  for (int64_t m = 0; m < logits.dimension(0); ++m) {
    int64_t label = int64_t(labels.get(m));
    double picked = label >= 0 && label < logits.dimension(1) ? logits(m, label) : 0.0;
    loss(0) += lse(m) - picked;
  }
  loss(0) /= double(logits.dimension(0));
  return {{"loss", out<1>(loss, c.dtype)}};
}

const std::map<std::string, Ref>& references() {
  static const std::map<std::string, Ref> refs = {
      {"add", binary([](auto& x, auto& y) { return ETensor<2>(x + y); })},
      {"sub", binary([](auto& x, auto& y) { return ETensor<2>(x - y); })},
      {"mul", binary([](auto& x, auto& y) { return ETensor<2>(x * y); })},
      {"div", binary([](auto& x, auto& y) { return ETensor<2>(x / y); })},
      {"max", binary([](auto& x, auto& y) { return ETensor<2>(x.cwiseMax(y)); })},
      {"min", binary([](auto& x, auto& y) { return ETensor<2>(x.cwiseMin(y)); })},
      {"relu", unary([](auto& x) { return ETensor<2>(x.cwiseMax(0.0)); })},
      {"sigmoid", unary([](auto& x) { return ETensor<2>(x.sigmoid()); })},
      {"tanh", unary([](auto& x) { return ETensor<2>(x.tanh()); })},
      {"exp", unary([](auto& x) { return ETensor<2>(x.exp()); })},
      {"log", unary([](auto& x) { return ETensor<2>(x.log()); })},
      {"gelu", unary([](auto& x) {
         const double c = std::sqrt(2.0 / M_PI);
         return ETensor<2>(0.5 * x * (((x + 0.044715 * x.cube()) * c).tanh() + 1.0));
       })},
      {"matmul",
       [](const Ctx& c) {
         ETensor<2> r =
             in<2>(c.inputs, "a").contract(in<2>(c.inputs, "b"), std::array<Pair, 1>{Pair(1, 0)});
         return TensorMap{{"c", out<2>(r, c.dtype)}};
       }},
      {"batched_matmul",
       [](const Ctx& c) {
         ETensor<3> a = in<3>(c.inputs, "a"), b = in<3>(c.inputs, "b");
         ETensor<3> r(a.dimension(0), a.dimension(1), b.dimension(2));
         for (int64_t i = 0; i < a.dimension(0); ++i)
           r.chip(i, 0) = a.chip(i, 0).contract(b.chip(i, 0), std::array<Pair, 1>{Pair(1, 0)});
         return TensorMap{{"c", out<3>(r, c.dtype)}};
       }},
      {"linear",
       [](const Ctx& c) {
         ETensor<2> x = in<2>(c.inputs, "x"), w = in<2>(c.inputs, "w");
         ETensor<2> y = x.contract(w, std::array<Pair, 1>{Pair(1, 1)}) +
                        cols(in<1>(c.inputs, "b"), x.dimension(0));
         return TensorMap{{"y", out<2>(y, c.dtype)}};
       }},
      {"transpose", unary([](auto& x) {
         return ETensor<2>(x.shuffle(Dims2{1, 0}));
       })},
      {"conv2d", conv2d},
      {"depthwise_conv2d", depthwise_conv2d},
      {"maxpool2d", [](const Ctx& c) { return pool(c, true); }},
      {"avgpool2d", [](const Ctx& c) { return pool(c, false); }},
      {"softmax", [](const Ctx& c) { return softmax(c, false); }},
      {"log_softmax", [](const Ctx& c) { return softmax(c, true); }},
      {"layernorm", layernorm},
      {"sum", row_reduce([](auto& x) { return ETensor<1>(x.sum(std::array<int, 1>{1})); })},
      {"mean", row_reduce([](auto& x) { return ETensor<1>(x.mean(std::array<int, 1>{1})); })},
      {"max_reduce",
       row_reduce([](auto& x) { return ETensor<1>(x.maximum(std::array<int, 1>{1})); })},
      {"argmax", argmax},
      {"gather", gather},
      {"concat", concat},
      {"pad2d", pad2d},
      {"cross_entropy", cross_entropy},
  };
  return refs;
}

}  // namespace

bool has_reference(const std::string& op) {
  return references().count(op) > 0;
}

TensorMap reference(const std::string& op, const TensorMap& inputs, const ParamMap& params) {
  auto it = references().find(op);
  if (it == references().end()) throw Error("no Eigen reference for op '" + op + "'");
  DType dtype = DType::f32;
  for (auto& [name, t] : inputs)
    if (t.dtype == DType::f64) dtype = DType::f64;
  return it->second(Ctx{inputs, params, dtype});
}

}  // namespace uops::oracle
