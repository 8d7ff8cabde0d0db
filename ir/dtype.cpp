#include "uops/ir/dtype.h"

#include "uops/error.h"

namespace uops {

void internal_error(const char* file, int line, const std::string& what) {
  throw InternalError(std::string("uops internal error at ") + file + ":" + std::to_string(line) +
                      ": " + what);
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
  }
  return "?";
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
