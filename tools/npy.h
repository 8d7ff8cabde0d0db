// NumPy .npy files (format versions 1-3): `<f4`, `<f8` and `<i4`, C order. A file that is not
// one of those (bad magic, truncated header or data, Fortran order, another dtype) is a
// uops::Error naming the file and what is wrong. A file is read straight into its tensor (never
// held twice), from a pipe or a device too, and never past what its header declares.
#pragma once

#include <cstdint>
#include <string>

#include "uops/ir/tensor.h"

namespace uops::npy {

// Refuses with uops::LimitError, before reading the data, an array of more than `max_bytes`.
Tensor read(const std::string& path, int64_t max_bytes = INT64_MAX);
// The file's bytes: a version 1 header padded to 64 bytes, then the data.
std::string encode(const Tensor& t);
// Writes `path` directly; callers that must not leave partial files write a temporary name
// and rename it.
void write(const std::string& path, const Tensor& t);

}  // namespace uops::npy
