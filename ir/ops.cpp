#include "uops/ir/ops.h"

#include <iterator>
#include <limits>

#include "uops/error.h"

namespace uops {

namespace {

constexpr const char* kUnary[] = {"neg",   "abs",  "exp",     "log", "sqrt", "rsqrt",
                                  "recip", "tanh", "sigmoid", "sin", "cos",  "floor"};
constexpr const char* kBinary[] = {"add", "sub", "mul", "div", "pow", "max",
                                   "min", "eq",  "ne",  "lt",  "le"};
constexpr const char* kBinarySymbol[] = {"+",     "-",  "*",  "/", nullptr, nullptr,
                                         nullptr, "==", "!=", "<", "<="};
static_assert(std::size(kBinarySymbol) == std::size(kBinary));
constexpr const char* kReduce[] = {"sum", "prod", "mean", "max", "min", "argmax", "argmin"};

template <typename Op, size_t N>
Op from_name(const char* const (&names)[N], const std::string& name, const char* what) {
  std::string valid;
  for (size_t i = 0; i < N; ++i) {
    if (name == names[i]) return static_cast<Op>(i);
    valid += (i ? ", " : "") + std::string(names[i]);
  }
  throw Error("unknown " + std::string(what) + " op '" + name + "' (expected one of " + valid +
              ")");
}

}  // namespace

const char* op_name(UnaryOp op) {
  return kUnary[static_cast<int>(op)];
}
const char* op_name(BinaryOp op) {
  return kBinary[static_cast<int>(op)];
}
const char* op_symbol(BinaryOp op) {
  return kBinarySymbol[static_cast<int>(op)];
}
const char* op_name(ReduceOp op) {
  return kReduce[static_cast<int>(op)];
}

UnaryOp unary_op_from_name(const std::string& n) {
  return from_name<UnaryOp>(kUnary, n, "unary");
}
BinaryOp binary_op_from_name(const std::string& n) {
  return from_name<BinaryOp>(kBinary, n, "binary");
}
ReduceOp reduce_op_from_name(const std::string& n) {
  return from_name<ReduceOp>(kReduce, n, "reduce");
}

double reduce_identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      return 0.0;
    case ReduceOp::prod:
      return 1.0;
    case ReduceOp::max:
    case ReduceOp::argmax:
      return -std::numeric_limits<double>::infinity();
    case ReduceOp::min:
    case ReduceOp::argmin:
      return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

}  // namespace uops
