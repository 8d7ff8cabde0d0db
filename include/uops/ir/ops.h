// The operator vocabularies of the uops (docs/design.md §3.3) and their names as printed.
#pragma once

#include <string>

namespace uops {

enum class UnaryOp { neg, abs, exp, log, sqrt, rsqrt, recip, tanh, sigmoid, sin, cos, floor };
enum class BinaryOp { add, sub, mul, div, pow, max, min, eq, ne, lt, le };
enum class ReduceOp { sum, prod, mean, max, min, argmax, argmin };

const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);
const char* op_name(ReduceOp op);
// The C operator of a binary op that is written infix ("+", "==", ...); nullptr for pow, max and
// min, which are calls. The IR printer and the generated C and CUDA spell it alike.
const char* op_symbol(BinaryOp op);

// Parse an operator name; throws uops::Error listing the valid names.
UnaryOp unary_op_from_name(const std::string& name);
BinaryOp binary_op_from_name(const std::string& name);
ReduceOp reduce_op_from_name(const std::string& name);

inline bool is_arg_reduce(ReduceOp op) {
  return op == ReduceOp::argmax || op == ReduceOp::argmin;
}
inline bool is_comparison(BinaryOp op) {
  return op == BinaryOp::eq || op == BinaryOp::ne || op == BinaryOp::lt || op == BinaryOp::le;
}

// The identity a carried scalar of `op` starts from (mean accumulates a sum).
double reduce_identity(ReduceOp op);

}  // namespace uops
