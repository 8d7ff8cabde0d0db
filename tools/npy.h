// NumPy .npy files (format versions 1-3): `<f4`, `<f8` and `<i4`, C order. A file that is not
// one of those (bad magic, truncated header or data, Fortran order, another dtype) is a
// uops::Error naming the file and what is wrong.
#pragma once

#include <string>

#include "uops/ir/tensor.h"

namespace uops::npy {

Tensor read(const std::string& path);
// The file's bytes: a version 1 header padded to 64 bytes, then the data.
std::string encode(const Tensor& t);
// Writes `path` directly; callers that must not leave partial files write a temporary name
// and rename it.
void write(const std::string& path, const Tensor& t);

}  // namespace uops::npy
