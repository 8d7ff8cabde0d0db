#include "uops/ir/dtype.h"

#include <iterator>

#include "uops/error.h"

namespace uops {

void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(std::string("uops internal error at ") + file + ":" + std::to_string(line) +
                      ": " + what);
}

// Indexed by the enum, as uop_kind_name is.
const char* dtype_name(DType t) {
  static constexpr const char* kNames[] = {"f32", "f64", "i32"};
  static_assert(std::size(kNames) == size_t(DType::i32) + 1);
  return size_t(t) < std::size(kNames) ? kNames[size_t(t)] : "?";
}

DType dtype_from_name(const std::string& name) {
  if (name == "f32") return DType::f32;
  if (name == "f64") return DType::f64;
  if (name == "i32") return DType::i32;
  throw Error("unknown dtype '" + name + "' (expected f32, f64 or i32)");
}

std::size_t dtype_size(DType t) {
  return t == DType::f64 ? 8 : 4;
}

}  // namespace uops
