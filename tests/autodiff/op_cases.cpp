#include "autodiff/op_cases.h"

#include <cmath>
#include <random>

#include "autodiff/grad_check.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"

namespace uops::testing {

namespace {

std::pair<int, int> param_range(const std::string& name) {
  if (name == "stride" || name == "dilation") return {1, 2};
  if (name == "k") return {1, 3};
  if (name == "pad") return {0, 2};
  return {0, 2};
}

bool usable(const Program& forward, const OpCase& c) {
  try {
    for (auto& [name, y] : interpret(forward, c.inputs, c.params)) {
      if (y.numel() == 0) return false;
      for (int64_t i = 0; i < y.numel(); ++i)
        if (!std::isfinite(y.get(i))) return false;
    }
    return true;
  } catch (const Error&) {
    return false;  // shapes that break an assertion or give a negative size
  }
}

}  // namespace

OpCase random_op_case(const OpDef& op, DType dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Program forward = forward_program(op, dtype);
  bool positive = op.name == "log" || op.name == "div";
  for (int attempt = 0; attempt < 100000; ++attempt) {
    OpCase c;
    for (auto& p : op.params) {
      auto [lo, hi] = param_range(p);
      c.params[p] = std::uniform_int_distribution<int>(lo, hi)(rng);
    }
    for (auto& in : op.inputs) {
      std::vector<int64_t> shape;
      for (int64_t d : op.example_shapes.at(in.name))
        shape.push_back(std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(d, 4))(rng));
      DType t = in.is_index ? DType::i32 : dtype;
      c.inputs[in.name] = in.is_index ? random_tensor(t, shape, rng, -1, 4)
                          : positive  ? random_tensor(t, shape, rng, 0.5, 2)
                                      : random_tensor(t, shape, rng, -1, 1);
    }
    if (usable(forward, c)) return c;
  }
  throw Error("no usable random case for op '" + op.name + "'");
}

}  // namespace uops::testing
