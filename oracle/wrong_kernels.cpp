#include "uops/oracle/wrong_kernels.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "uops/backends/interpreter.h"
#include "uops/ir/lower.h"

namespace uops::oracle {

using namespace ir;

namespace {

// A modified uop graph, run by the interpreter.
std::function<Implementation(DType)> graph(std::function<Graph(DType)> build) {
  return [build](DType t) -> Implementation {
    std::shared_ptr<Executable> exe = make_interpreter(lower(build(t)));
    return [exe](const TensorMap& in, const ParamMap& p) { return exe->run(in, p); };
  };
}

// A plain C++ kernel over doubles: `f` fills the outputs it creates.
using Kernel = std::function<TensorMap(const TensorMap&, const ParamMap&, DType)>;
std::function<Implementation(DType)> plain(Kernel f) {
  return [f](DType t) -> Implementation {
    return [f, t](const TensorMap& in, const ParamMap& p) { return f(in, p, t); };
  };
}

int64_t offset(const Tensor& t, std::initializer_list<int64_t> index) {
  int64_t flat = 0, a = 0;
  for (int64_t i : index) flat = flat * t.shape[a++] + i;
  return flat;
}
double at(const Tensor& t, std::initializer_list<int64_t> index) {
  return t.get(offset(t, index));
}

// conv2d with the x and w index expressions and the reduced axes given.
Graph conv(DType t, const std::string& ih, const std::string& iw,
           const std::vector<std::string>& w_index, std::vector<int> reduced) {
  Graph g;
  for (auto& p : {"stride", "pad", "dilation"}) g.param(p);
  Node x = g.input("x", 4, t), w = g.input("w", 4, t);
  std::vector<std::string> shape = {"dA0",
                                    "(dA1 + 2 * $pad - $dilation * (dB1 - 1) - 1) / $stride + 1",
                                    "(dA2 + 2 * $pad - $dilation * (dB2 - 1) - 1) / $stride + 1",
                                    "dB0",
                                    "dB1",
                                    "dB2",
                                    "dA3[=dB3]"};
  Node xs = g.reindex(x, shape, {"i0", ih, iw, "i6"}, {x, w});
  Node ws = g.reindex(w, shape, w_index, {x, w});
  Node sum = g.reduce(ReduceOp::sum, reduced, g.binary(BinaryOp::mul, xs, ws));
  g.output("y",
           g.reindex(sum, {"dA0", "dA1", "dA2", "dA3"}, {"i0", "i1", "i2", "i3", "0", "0", "0"}));
  return g;
}

const std::vector<std::string> kW = {"i3", "i4", "i5", "i6"};
const std::string kH = "i1 * $stride - $pad + i4 * $dilation";
const std::string kWd = "i2 * $stride - $pad + i5 * $dilation";

Graph maxpool(DType t, const std::string& ih, const std::string& iw, double fill) {
  Graph g;
  for (auto& p : {"k", "stride", "pad"}) g.param(p);
  Node x = g.input("x", 4, t);
  Node win = g.reindex(x,
                       {"dA0", "(dA1 + 2 * $pad - $k) / $stride + 1",
                        "(dA2 + 2 * $pad - $k) / $stride + 1", "dA3", "$k", "$k"},
                       {"i0", ih, iw, "i3"}, {x}, fill);
  g.output("y", g.reindex(g.reduce(ReduceOp::max, {4, 5}, win), {"dA0", "dA1", "dA2", "dA3"},
                          {"i0", "i1", "i2", "i3", "0", "0"}));
  return g;
}

Node rows(Graph& g, Node col, Node like) {
  return g.reindex(col, {"dA0", "dA1"}, {"i0", "0"}, {like});
}

Graph unshifted_softmax(DType t, bool log) {
  Graph g;
  Node x = g.input("x", 2, t);
  Node e = g.unary(UnaryOp::exp, x);
  Node s = g.reduce(ReduceOp::sum, {1}, e);
  g.output("y", log ? g.binary(BinaryOp::sub, x, rows(g, g.unary(UnaryOp::log, s), x))
                    : g.binary(BinaryOp::div, e, rows(g, s, e)));
  return g;
}

Graph linear(DType t, const std::vector<std::string>& w_index, bool bias) {
  Graph g;
  Node x = g.input("x", 2, t), w = g.input("w", 2, t), b = g.input("b", 1, t);
  std::vector<std::string> mnk = {"dA0", "dB0", "dA1[=dB1]"};
  Node xw = g.binary(BinaryOp::mul, g.reindex(x, mnk, {"i0", "i2"}, {x, w}),
                     g.reindex(w, mnk, w_index, {x, w}));
  Node y = g.reindex(g.reduce(ReduceOp::sum, {2}, xw), {"dA0", "dA1"}, {"i0", "i1", "0"});
  Node bb = g.reindex(b, {"dA0", "dB0[=dC0]"}, {"i1"}, {x, w, b});
  g.output("y", bias ? g.binary(BinaryOp::add, y, bb) : g.binary(BinaryOp::add, y, g.fill(y, 0)));
  return g;
}

Graph batched(DType t, const std::vector<std::string>& a_index,
              const std::vector<std::string>& b_index, int rank) {
  Graph g;
  Node a = g.input("a", rank, t), b = g.input("b", rank, t);
  std::vector<std::string> shape =
      rank == 3 ? std::vector<std::string>{"dA0[=dB0]", "dA1", "dB2", "dA2[=dB1]"}
                : std::vector<std::string>{"dA0", "dB1", "dA1[=dB0]"};
  Node ab = g.binary(BinaryOp::mul, g.reindex(a, shape, a_index, {a, b}),
                     g.reindex(b, shape, b_index, {a, b}));
  std::vector<std::string> out_shape(shape.begin(), shape.end() - 1), out_index;
  for (int i = 0; i < rank; ++i) {
    out_shape[i] = "dA" + std::to_string(i);
    out_index.push_back("i" + std::to_string(i));
  }
  out_index.push_back("0");
  g.output("c", g.reindex(g.reduce(ReduceOp::sum, {rank}, ab), out_shape, out_index));
  return g;
}

// x [M, N] reduced along axis 1 by `step` from `init`, giving y [M, 1] (i32 when `arg`).
TensorMap row_fold(const Tensor& x, DType t, double init, bool arg,
                   const std::function<bool(double, double)>& better) {
  int64_t m = x.shape[0], n = x.shape[1];
  Tensor y(arg ? DType::i32 : t, {m, 1});
  for (int64_t i = 0; i < m; ++i) {
    double acc = init;
    int64_t best = 0;
    for (int64_t j = 0; j < n; ++j) {
      double v = at(x, {i, j});
      if (better(v, acc)) {
        acc = v;
        best = j;
      }
    }
    y.set(i, arg ? double(best) : acc);
  }
  return {{"y", y}};
}

std::vector<WrongKernel> make_catalogue() {
  std::vector<WrongKernel> k;
  auto add = [&](std::string name, std::string op, std::string flaw,
                 std::function<Implementation(DType)> make) {
    k.push_back({std::move(name), std::move(op), std::move(flaw), std::move(make)});
  };
  add("conv2d_pad_off_by_one", "conv2d", "reads one row and column too far (pad - 1)",
      graph([](DType t) {
        return conv(t, kH + " + 1", kWd + " + 1", kW, {4, 5, 6});
      }));
  add("conv2d_dilation_ignored", "conv2d", "window taps are adjacent whatever the dilation",
      graph([](DType t) {
        return conv(t, "i1 * $stride - $pad + i4", "i2 * $stride - $pad + i5", kW, {4, 5, 6});
      }));
  add("conv2d_stride_ignored", "conv2d", "output positions step by 1, not by the stride",
      graph([](DType t) {
        return conv(t, "i1 - $pad + i4 * $dilation", "i2 - $pad + i5 * $dilation", kW, {4, 5, 6});
      }));
  add("conv2d_kernel_transposed", "conv2d", "reads the weights as w[o, kw, kh, c]",
      graph([](DType t) {
        return conv(t, kH, kWd, {"i3", "i5", "i4", "i6"}, {4, 5, 6});
      }));
  add("conv2d_first_channel_only", "conv2d", "does not accumulate over input channels",
      graph([](DType t) {
        return conv(t, kH, kWd, kW, {4, 5});
      }));
  add("depthwise_kernel_flipped", "depthwise_conv2d", "convolves with the flipped kernel",
      graph([](DType t) {
        Graph g;
        for (auto& p : {"stride", "pad"}) g.param(p);
        Node x = g.input("x", 4, t), w = g.input("w", 3, t);
        std::vector<std::string> shape = {"dA0",
                                          "(dA1 + 2 * $pad - dB0) / $stride + 1",
                                          "(dA2 + 2 * $pad - dB1) / $stride + 1",
                                          "dA3[=dB2]",
                                          "dB0",
                                          "dB1"};
        Node xs = g.reindex(
            x, shape, {"i0", "i1 * $stride - $pad + i4", "i2 * $stride - $pad + i5", "i3"}, {x, w});
        Node ws = g.reindex(w, shape, {"dB0 - 1 - i4", "dB1 - 1 - i5", "i3"}, {x, w});
        Node s = g.reduce(ReduceOp::sum, {4, 5}, g.binary(BinaryOp::mul, xs, ws));
        g.output("y",
                 g.reindex(s, {"dA0", "dA1", "dA2", "dA3"}, {"i0", "i1", "i2", "i3", "0", "0"}));
        return g;
      }));
  add("maxpool_zero_padding", "maxpool2d", "padding reads 0, so it wins over negative rows",
      graph([](DType t) {
        return maxpool(t, "i1 * $stride - $pad + i4", "i2 * $stride - $pad + i5", 0.0);
      }));
  add("maxpool_stride_ignored", "maxpool2d", "windows step by 1, not by the stride",
      graph([](DType t) { return maxpool(t, "i1 - $pad + i4", "i2 - $pad + i5", -INFINITY); }));
  add("softmax_without_max_shift", "softmax", "exp overflows on large inputs",
      graph([](DType t) { return unshifted_softmax(t, false); }));
  add("log_softmax_without_max_shift", "log_softmax", "exp overflows on large inputs",
      graph([](DType t) { return unshifted_softmax(t, true); }));
  add("linear_weights_not_transposed", "linear", "computes x·w instead of x·wᵀ", graph([](DType t) {
        return linear(t, {"i2", "i1"}, true);
      }));
  add("linear_missing_bias", "linear", "forgets to add b", graph([](DType t) {
        return linear(t, {"i1", "i2"}, false);
      }));
  add("batched_matmul_first_batch_of_b", "batched_matmul", "every batch multiplies by b[0]",
      graph([](DType t) {
        return batched(t, {"i0", "i1", "i3"}, {"0", "i3", "i2"}, 3);
      }));
  add("matmul_swapped_axes", "matmul", "reads a[k, m] instead of a[m, k]", graph([](DType t) {
        return batched(t, {"i2", "i0"}, {"i2", "i1"}, 2);
      }));
  add("cross_entropy_sum_not_mean", "cross_entropy", "sums the rows' losses instead of averaging",
      graph([](DType t) {
        Graph g;
        Node logits = g.input("logits", 2, t), labels = g.input("labels", 1, DType::i32);
        Node mx = g.reduce(ReduceOp::max, {1}, logits);
        Node s = g.binary(BinaryOp::sub, logits, rows(g, mx, logits));
        Node lse =
            g.binary(BinaryOp::add, mx,
                     g.unary(UnaryOp::log, g.reduce(ReduceOp::sum, {1}, g.unary(UnaryOp::exp, s))));
        Node col = g.reindex(labels, {"dA0[=dB0]", "1"}, {"i0"}, {logits, labels});
        Node per_row = g.binary(BinaryOp::sub, lse, g.select(1, logits, col));
        g.output("loss", g.reindex(g.reduce(ReduceOp::sum, {0}, per_row), {"1"}, {"0", "0"}));
        return g;
      }));
  add("concat_parts_swapped", "concat", "puts y before x", graph([](DType t) {
        Graph g;
        Node x = g.input("x", 2, t), y = g.input("y", 2, t);
        std::vector<std::string> shape = {"dA0[=dB0]", "dA1 + dB1"};
        g.output("z", g.binary(BinaryOp::add, g.reindex(y, shape, {"i0", "i1"}, {x, y}),
                               g.reindex(x, shape, {"i0", "i1 - dB1"}, {x, y})));
        return g;
      }));
  add("pad2d_one_sided", "pad2d", "pads only after the image, not before", graph([](DType t) {
        Graph g;
        g.param("pad");
        Node x = g.input("x", 4, t);
        g.output("y", g.reindex(x, {"dA0", "dA1 + 2 * $pad", "dA2 + 2 * $pad", "dA3"},
                                {"i0", "i1", "i2", "i3"}));
        return g;
      }));
  add("div_operands_swapped", "div", "computes y / x", graph([](DType t) {
        Graph g;
        Node x = g.input("x", 2, t), y = g.input("y", 2, t);
        g.output("z", g.binary(BinaryOp::div, y, x));
        return g;
      }));
  add("matmul_missing_accumulation", "matmul", "assigns each product instead of adding it",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor &a = in.at("a"), &b = in.at("b");
        int64_t m = a.shape[0], kk = a.shape[1], n = b.shape[1];
        Tensor c(t, {m, n});
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            for (int64_t q = 0; q < kk; ++q) c.set(i * n + j, at(a, {i, q}) * at(b, {q, j}));
        return TensorMap{{"c", c}};
      }));
  add("sum_identity_one", "sum", "starts the sum at 1, not 0",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor& x = in.at("x");
        Tensor y(t, {x.shape[0], 1});
        for (int64_t i = 0; i < x.shape[0]; ++i) {
          double acc = 1.0;
          for (int64_t j = 0; j < x.shape[1]; ++j) acc += at(x, {i, j});
          y.set(i, acc);
        }
        return TensorMap{{"y", y}};
      }));
  add("max_reduce_identity_zero", "max_reduce", "starts the maximum at 0, not -inf",
      plain([](auto& in, auto&, DType t) {
        return row_fold(in.at("x"), t, 0.0, false, [](double v, double acc) { return v > acc; });
      }));
  add("argmax_last_index", "argmax", "keeps the last of equal maxima",
      plain([](auto& in, auto&, DType t) {
        return row_fold(in.at("x"), t, -INFINITY, true,
                        [](double v, double acc) { return v >= acc; });
      }));
  add("avgpool_divides_by_k", "avgpool2d", "divides each window's sum by k, not k·k",
      plain([](const TensorMap& in, const ParamMap& p, DType t) {
        const Tensor& x = in.at("x");
        int64_t k = p.at("k"), s = p.at("stride");
        int64_t n = x.shape[0], h = x.shape[1], w = x.shape[2], c = x.shape[3];
        int64_t oh = (h - k) / s + 1, ow = (w - k) / s + 1;
        Tensor y(t, {n, oh, ow, c});
        for (int64_t a = 0; a < n; ++a)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
              for (int64_t ch = 0; ch < c; ++ch) {
                double sum = 0;
                for (int64_t u = 0; u < k; ++u)
                  for (int64_t v = 0; v < k; ++v) sum += at(x, {a, i * s + u, j * s + v, ch});
                y.set(offset(y, {a, i, j, ch}), sum / double(k));
              }
        return TensorMap{{"y", y}};
      }));
  add("layernorm_unbiased_variance", "layernorm", "divides the variance by N - 1",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor &x = in.at("x"), &gamma = in.at("gamma"), &beta = in.at("beta");
        int64_t m = x.shape[0], n = x.shape[1];
        Tensor y(t, {m, n});
        for (int64_t i = 0; i < m; ++i) {
          double mean = 0, var = 0;
          for (int64_t j = 0; j < n; ++j) mean += at(x, {i, j}) / double(n);
          for (int64_t j = 0; j < n; ++j) var += std::pow(at(x, {i, j}) - mean, 2);
          var /= double(n > 1 ? n - 1 : 1);
          for (int64_t j = 0; j < n; ++j)
            y.set(i * n + j,
                  (at(x, {i, j}) - mean) / std::sqrt(var + 1e-5) * gamma.get(j) + beta.get(j));
        }
        return TensorMap{{"y", y}};
      }));
  add("gather_clamps_index", "gather", "clamps out-of-range indices instead of giving zeros",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor &table = in.at("table"), &idx = in.at("idx");
        int64_t v = table.shape[0], d = table.shape[1];
        Tensor y(t, {idx.numel(), d});
        for (int64_t i = 0; i < idx.numel(); ++i) {
          int64_t row = std::clamp<int64_t>(int64_t(idx.get(i)), 0, v - 1);
          for (int64_t j = 0; j < d; ++j) y.set(i * d + j, at(table, {row, j}));
        }
        return TensorMap{{"y", y}};
      }));
  add("transpose_as_reshape", "transpose", "reinterprets the buffer as [N, M] without moving it",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor& x = in.at("x");
        Tensor y(t, {x.shape[1], x.shape[0]});
        for (int64_t e = 0; e < x.numel(); ++e) y.set(e, x.get(e));
        return TensorMap{{"y", y}};
      }));
  add("gelu_without_cubic_term", "gelu", "drops the 0.044715·x³ term",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor& x = in.at("x");
        Tensor y(t, x.shape);
        for (int64_t e = 0; e < x.numel(); ++e) {
          double v = x.get(e);
          y.set(e, 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * v)));
        }
        return TensorMap{{"y", y}};
      }));
  // Tail bugs: a vectorized or tiled kernel right on whole blocks, wrong on the remainder.
  add("softmax_tail_block_dropped", "softmax",
      "sums each row in blocks of 16 and drops the columns past the last full block",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor& x = in.at("x");
        int64_t m = x.shape[0], n = x.shape[1], summed = n > 16 ? n / 16 * 16 : n;
        Tensor y(t, {m, n});
        for (int64_t i = 0; i < m; ++i) {
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < n; ++j) mx = std::max(mx, at(x, {i, j}));
          for (int64_t j = 0; j < summed; ++j) sum += std::exp(at(x, {i, j}) - mx);
          for (int64_t j = 0; j < n; ++j) y.set(i * n + j, std::exp(at(x, {i, j}) - mx) / sum);
        }
        return TensorMap{{"y", y}};
      }));
  add("layernorm_row_tile_stats", "layernorm",
      "rows past the first tile of 8 reuse the statistics of row r % 8",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor &x = in.at("x"), &gamma = in.at("gamma"), &beta = in.at("beta");
        int64_t m = x.shape[0], n = x.shape[1];
        Tensor y(t, {m, n});
        for (int64_t i = 0; i < m; ++i) {
          int64_t r = i % 8;
          double mean = 0, var = 0;
          for (int64_t j = 0; j < n; ++j) mean += at(x, {r, j}) / double(n);
          for (int64_t j = 0; j < n; ++j) var += std::pow(at(x, {r, j}) - mean, 2) / double(n);
          for (int64_t j = 0; j < n; ++j)
            y.set(i * n + j,
                  (at(x, {i, j}) - mean) / std::sqrt(var + 1e-5) * gamma.get(j) + beta.get(j));
        }
        return TensorMap{{"y", y}};
      }));
  add("conv2d_channel_tail_dropped", "conv2d",
      "sums input channels in blocks of 4 and drops the channels past the last full block",
      plain([](const TensorMap& in, const ParamMap& p, DType t) {
        const Tensor &x = in.at("x"), &w = in.at("w");
        int64_t s = p.at("stride"), pad = p.at("pad"), dil = p.at("dilation");
        int64_t n = x.shape[0], h = x.shape[1], wd = x.shape[2], c = x.shape[3];
        int64_t o = w.shape[0], kh = w.shape[1], kw = w.shape[2];
        int64_t oh = (h + 2 * pad - dil * (kh - 1) - 1) / s + 1;
        int64_t ow = (wd + 2 * pad - dil * (kw - 1) - 1) / s + 1;
        int64_t summed = c > 4 ? c / 4 * 4 : c;
        Tensor y(t, {n, oh, ow, o});
        for (int64_t a = 0; a < n; ++a)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
              for (int64_t f = 0; f < o; ++f) {
                double sum = 0;
                for (int64_t u = 0; u < kh; ++u)
                  for (int64_t v = 0; v < kw; ++v) {
                    int64_t r = i * s - pad + u * dil, q = j * s - pad + v * dil;
                    if (r < 0 || r >= h || q < 0 || q >= wd) continue;
                    for (int64_t ch = 0; ch < summed; ++ch)
                      sum += at(x, {a, r, q, ch}) * at(w, {f, u, v, ch});
                  }
                y.set(offset(y, {a, i, j, f}), sum);
              }
        return TensorMap{{"y", y}};
      }));
  // Bugs that only rare cases meet (issue 25): a corner tile, a reduction past 256.
  add("matmul_corner_tile_dropped", "matmul",
      "computes c in 8 x 8 tiles and leaves the bottom-right tile at zero when both M and N "
      "have a partial tile past the first",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor &a = in.at("a"), &b = in.at("b");
        int64_t m = a.shape[0], kk = a.shape[1], n = b.shape[1];
        bool corner = m > 8 && n > 8 && m % 8 && n % 8;
        Tensor c(t, {m, n});
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            if (corner && i >= m / 8 * 8 && j >= n / 8 * 8) continue;
            double acc = 0;
            for (int64_t q = 0; q < kk; ++q) acc += at(a, {i, q}) * at(b, {q, j});
            c.set(i * n + j, acc);
          }
        return TensorMap{{"c", c}};
      }));
  add("sum_blocks_past_256", "sum",
      "sums rows in blocks of 256 and drops the last block when there is more than one",
      plain([](const TensorMap& in, const ParamMap&, DType t) {
        const Tensor& x = in.at("x");
        int64_t m = x.shape[0], n = x.shape[1];
        int64_t summed = n > 256 ? (n - 1) / 256 * 256 : n;
        Tensor y(t, {m, 1});
        for (int64_t i = 0; i < m; ++i) {
          double acc = 0;
          for (int64_t j = 0; j < summed; ++j) acc += at(x, {i, j});
          y.set(i, acc);
        }
        return TensorMap{{"y", y}};
      }));
  return k;
}

}  // namespace

const std::vector<WrongKernel>& wrong_kernels() {
  static const std::vector<WrongKernel> catalogue = make_catalogue();
  return catalogue;
}

}  // namespace uops::oracle
