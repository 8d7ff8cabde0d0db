#include "uops/oracle/compare.h"

#include <algorithm>
#include <cmath>

#include "uops/oracle/tolerance.h"

namespace uops::oracle {

namespace {

std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t a = shape.size(); a-- > 0;) {
    index[a] = flat % shape[a];
    flat /= shape[a];
  }
  return index;
}

}  // namespace

std::string index_text(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t a = 0; a < index.size(); ++a) out += (a ? ", " : "") + std::to_string(index[a]);
  return out + "]";
}

Comparison compare(const TensorMap& expected, const TensorMap& got, DType dtype) {
  return compare(expected, got, tolerance(dtype));
}

Comparison compare(const TensorMap& expected, const TensorMap& got, const Tolerance& base,
                   const TensorMap* truth) {
  Comparison c;
  c.worst.scaled_error = -1.0;
  for (auto& [name, want] : expected) {
    auto it = got.find(name);
    if (it == got.end()) {
      c.ok = false;
      c.problem = "output '" + name + "' is missing";
      return c;
    }
    const Tensor& have = it->second;
    if (have.dtype != want.dtype || have.shape != want.shape) {
      c.ok = false;
      c.problem = "output '" + name + "' is " + dtype_name(have.dtype) + " " + have.shape_text() +
                  ", expected " + dtype_name(want.dtype) + " " + want.shape_text();
      return c;
    }
    Tolerance tol = is_float(want.dtype) ? base : tolerance(DType::i32);
    auto exact = truth ? truth->find(name) : TensorMap::const_iterator();
    if (truth && exact != truth->end() && is_float(want.dtype) &&
        exact->second.shape == want.shape) {
      double noise = 0.0;
      for (int64_t e = 0; e < want.numel(); ++e) {
        double d = std::fabs(want.get(e) - exact->second.get(e));
        if (std::isfinite(d)) noise = std::max(noise, d);
      }
      tol.abs += 4.0 * noise;
    }
    for (int64_t e = 0; e < want.numel(); ++e) {
      double x = want.get(e), y = have.get(e);
      double err = scaled_error(x, y, tol);
      if (err > c.worst.scaled_error) {
        c.worst = {name, unravel(e, want.shape), x, y, std::fabs(y - x), err};
      }
    }
  }
  if (c.worst.scaled_error < 0) c.worst.scaled_error = 0;
  c.ok = c.worst.scaled_error <= 1.0;
  return c;
}

}  // namespace uops::oracle
