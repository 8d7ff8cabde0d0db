#include "autodiff/grad_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "uops/backends/interpreter.h"

namespace uops::testing {

Tensor random_tensor(DType dtype, const std::vector<int64_t>& shape, std::mt19937_64& rng,
                     double lo, double hi) {
  Tensor t(dtype, shape);
  if (dtype == DType::i32) {
    std::uniform_int_distribution<int> d(int(std::floor(lo)), int(std::floor(hi)));
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(rng));
  } else {
    std::uniform_real_distribution<double> d(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, d(rng));
  }
  return t;
}

TensorMap run_with(const Program& p, const TensorMap& available, const ParamMap& params) {
  TensorMap in;
  for (int t : p.inputs()) {
    const std::string& name = p.tensors[t].name;
    auto it = available.find(name);
    if (it != available.end()) in[name] = it->second;
  }
  return interpret(p, in, params);
}

TensorMap random_output_grads(const Program& forward, const TensorMap& inputs,
                              const ParamMap& params, uint64_t seed) {
  std::mt19937_64 rng(seed);
  TensorMap out;
  for (auto& [name, y] : interpret(forward, inputs, params))
    out["d" + name] = y.dtype == DType::i32 ? Tensor(DType::i32, y.shape)
                                            : random_tensor(y.dtype, y.shape, rng, -1, 1);
  return out;
}

namespace {

// sum(dy * (y(up) - y(down))) over the float outputs, differenced element by element so that
// outputs the moved element does not reach add exactly nothing.
double loss_difference(const Program& forward, const TensorMap& up, const TensorMap& down,
                       const TensorMap& output_grads, const ParamMap& params) {
  TensorMap y_down = interpret(forward, down, params);
  double l = 0;
  for (auto& [name, y] : interpret(forward, up, params)) {
    if (y.dtype == DType::i32) continue;
    const Tensor &dy = output_grads.at("d" + name), &other = y_down.at(name);
    for (int64_t i = 0; i < y.numel(); ++i) l += dy.get(i) * (y.get(i) - other.get(i));
  }
  return l;
}

// What rounding in the outputs can move the difference quotient at step h: a few units in the
// last place of every output element the moved element reaches (those a step of 1% changes),
// weighted by dy.
double rounding_bound(const Program& forward, const TensorMap& up, const TensorMap& down,
                      const TensorMap& output_grads, const ParamMap& params, double h) {
  TensorMap y_down = interpret(forward, down, params);
  double bound = 0;
  for (auto& [name, y] : interpret(forward, up, params)) {
    if (y.dtype == DType::i32) continue;
    const Tensor &dy = output_grads.at("d" + name), &other = y_down.at(name);
    double eps = y.dtype == DType::f32 ? std::numeric_limits<float>::epsilon()
                                       : std::numeric_limits<double>::epsilon();
    for (int64_t i = 0; i < y.numel(); ++i)
      if (y.get(i) != other.get(i))
        bound += 16 * eps * std::fabs(dy.get(i)) * (std::fabs(y.get(i)) + std::fabs(other.get(i)));
  }
  return bound / (2 * h);
}

}  // namespace

std::string compare_with_finite_differences(const Program& forward, const Program& grad,
                                            const TensorMap& inputs, const TensorMap& output_grads,
                                            const ParamMap& params,
                                            const std::vector<std::string>& wrt, double tol,
                                            int* unreliable) {
  TensorMap available = inputs;
  for (auto& [name, t] : output_grads) available[name] = t;
  TensorMap analytic = run_with(grad, available, params);
  for (auto& x : wrt) {
    auto it = analytic.find("d" + x);
    if (it == analytic.end()) return "the gradient program has no output d" + x;
    const Tensor& dx = it->second;
    if (dx.shape != inputs.at(x).shape)
      return "d" + x + " has shape " + dx.shape_text() + ", " + x + " has " +
             inputs.at(x).shape_text();
    for (int64_t i = 0; i < dx.numel(); ++i) {
      double v = inputs.at(x).get(i);
      auto moved = [&](double h, TensorMap* up, TensorMap* down) {
        *up = inputs, *down = inputs;
        (*up)[x].set(i, v + h);
        (*down)[x].set(i, v - h);
      };
      auto numeric = [&](double h) {
        TensorMap up, down;
        moved(h, &up, &down);
        return loss_difference(forward, up, down, output_grads, params) / (2 * h);
      };
      auto close = [&](double a, double b) { return std::fabs(a - b) <= tol * (1 + std::fabs(b)); };
      double h = 1e-6 * std::max(1.0, std::fabs(v)), fd = numeric(h), got = dx.get(i);
      if (close(got, fd)) continue;
      auto noise = [&] {
        TensorMap up, down;
        moved(0.01 * std::max(1.0, std::fabs(v)), &up, &down);
        return rounding_bound(forward, up, down, output_grads, params, h);
      };
      // The central difference is the mean of the derivative over [v - h, v + h]: where the
      // gradient itself moves across that step by as much as the two disagree, the function is
      // not smooth at the step's scale (cos(exp(2 s)) with exp(2 s) = 8e13 turns a full period
      // every 4e-14 of s), and the difference cannot check the gradient's value at v.
      auto rough = [&] {
        double spread = 0;
        for (double t : {v - h, v - h / 2, v + h / 2, v + h}) {
          TensorMap at = available;
          at[x].set(i, t);
          spread = std::max(spread, std::fabs(run_with(grad, at, params).at("d" + x).get(i) - got));
        }
        return spread >= std::fabs(got - fd);
      };
      if (unreliable && (!close(numeric(2 * h), fd) || std::fabs(got - fd) <= noise() || rough())) {
        ++*unreliable;
        continue;
      }
      std::ostringstream s;
      s.precision(10);
      s << "d" << x << " element " << i << " of " << dx.shape_text() << ": gradient " << got
        << ", finite differences " << fd;
      return s.str();
    }
  }
  return "";
}

bool all_finite(const TensorMap& m) {
  for (auto& [name, t] : m)
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(t.get(i))) return false;
  return true;
}

double max_difference(const TensorMap& a, const TensorMap& b) {
  double worst = 0;
  for (auto& [name, x] : a) {
    auto it = b.find(name);
    if (it == b.end()) continue;
    const Tensor& y = it->second;
    if (x.shape != y.shape) return std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < x.numel(); ++i) {
      double p = x.get(i), q = y.get(i);
      if (std::isnan(p) && std::isnan(q)) continue;
      if (std::isnan(p) || std::isnan(q)) return std::numeric_limits<double>::infinity();
      if (p == q) continue;
      worst = std::max(worst, std::fabs(p - q) / (1 + std::fabs(q)));
    }
  }
  return worst;
}

}  // namespace uops::testing
