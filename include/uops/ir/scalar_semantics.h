// The scalar meaning of every operator, in one place. The interpreter calls these; the code
// generators emit the same formulas (backends/c, backends/cuda), and the differential tests
// hold them to it.
//
// Conventions: max/min pick the first operand on ties and the second when the first is NaN
// (`a >= b ? a : b`); reductions update only on a strict improvement, so arg-reductions keep the
// first index; comparisons give 1 or 0; an i32 store truncates toward zero and stores 0 for a
// value outside the i32 range (NaN included).
#pragma once

#include <cmath>
#include <cstdint>

#include "uops/ir/ops.h"

namespace uops {

template <typename T>
T apply_unary(UnaryOp op, T a) {
  switch (op) {
    case UnaryOp::neg:
      return -a;
    case UnaryOp::abs:
      return std::fabs(a);
    case UnaryOp::exp:
      return std::exp(a);
    case UnaryOp::log:
      return std::log(a);
    case UnaryOp::sqrt:
      return std::sqrt(a);
    case UnaryOp::rsqrt:
      return T(1) / std::sqrt(a);
    case UnaryOp::recip:
      return T(1) / a;
    case UnaryOp::tanh:
      return std::tanh(a);
    case UnaryOp::sigmoid:
      return T(1) / (T(1) + std::exp(-a));
    case UnaryOp::sin:
      return std::sin(a);
    case UnaryOp::cos:
      return std::cos(a);
    case UnaryOp::floor:
      return std::floor(a);
  }
  return a;
}

template <typename T>
T apply_binary(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::add:
      return a + b;
    case BinaryOp::sub:
      return a - b;
    case BinaryOp::mul:
      return a * b;
    case BinaryOp::div:
      return a / b;
    case BinaryOp::pow:
      return std::pow(a, b);
    case BinaryOp::max:
      return a >= b ? a : b;
    case BinaryOp::min:
      return a <= b ? a : b;
    case BinaryOp::eq:
      return a == b ? T(1) : T(0);
    case BinaryOp::ne:
      return a != b ? T(1) : T(0);
    case BinaryOp::lt:
      return a < b ? T(1) : T(0);
    case BinaryOp::le:
      return a <= b ? T(1) : T(0);
  }
  return a;
}

// One step of a reduction into `acc`; returns true when `v` replaced the best value (what an
// arg-reduction records its index on).
template <typename T>
bool reduce_step(ReduceOp op, T& acc, T v) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      acc += v;
      return false;
    case ReduceOp::prod:
      acc *= v;
      return false;
    case ReduceOp::max:
    case ReduceOp::argmax:
      if (v > acc) {
        acc = v;
        return true;
      }
      return false;
    case ReduceOp::min:
    case ReduceOp::argmin:
      if (v < acc) {
        acc = v;
        return true;
      }
      return false;
  }
  return false;
}

template <typename T>
int32_t to_i32(T v) {
  if (!(v > T(-2147483649.0) && v < T(2147483648.0))) return 0;
  return static_cast<int32_t>(v);
}

}  // namespace uops
