// Element types. f32 and f64 carry values; i32 carries indices (arg-reductions, gathers).
#pragma once

#include <cstddef>
#include <string>

namespace uops {

enum class DType { f32, f64, i32 };

const char* dtype_name(DType t);
DType dtype_from_name(const std::string& name);  // throws uops::Error on an unknown name
std::size_t dtype_size(DType t);
inline bool is_float(DType t) {
  return t != DType::i32;
}

}  // namespace uops
