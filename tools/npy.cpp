#include "npy.h"

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>

#include "uops/error.h"

namespace uops::npy {

namespace {

const char kMagic[] = "\x93NUMPY";

// The value of `key` in the header's Python dict literal, as raw text.
std::string field(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path + ": .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  if (colon == std::string::npos) throw Error(path + ": malformed .npy header");
  size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) throw Error(path + ": malformed .npy header");
  char open = header[start];
  size_t end = open == '('    ? header.find(')', start)
               : open == '\'' ? header.find('\'', start + 1)
                              : header.find_first_of(",}", start);
  if (end == std::string::npos) throw Error(path + ": malformed .npy header");
  return header.substr(start, end - start + (open == '(' || open == '\'' ? 1 : 0));
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& path) {
  std::vector<int64_t> shape;
  std::string inner = text.substr(1, text.size() - 2);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i == inner.size()) break;
    if (!std::isdigit(static_cast<unsigned char>(inner[i])))
      throw Error(path + ": bad shape " + text + " in the .npy header");
    int64_t v = 0;
    while (i < inner.size() && std::isdigit(static_cast<unsigned char>(inner[i]))) {
      if (v > (int64_t(1) << 40)) throw Error(path + ": shape " + text + " is too large");
      v = v * 10 + (inner[i++] - '0');
    }
    shape.push_back(v);
  }
  if (shape.size() > 8)
    throw Error(path + ": rank " + std::to_string(shape.size()) + " is above 8");
  return shape;
}

}  // namespace

Tensor read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < offset + header_len) throw Error(path + ": truncated .npy header");
  std::string header = bytes.substr(offset, header_len);
  std::string descr = field(header, "descr", path);
  DType dtype;
  if (descr == "'<f4'") {
    dtype = DType::f32;
  } else if (descr == "'<f8'") {
    dtype = DType::f64;
  } else if (descr == "'<i4'") {
    dtype = DType::i32;
  } else {
    throw Error(path + ": dtype " + descr + " is not supported (use <f4, <f8 or <i4)");
  }
  if (field(header, "fortran_order", path) != "False")
    throw Error(path + ": Fortran-order arrays are not supported (save in C order)");
  std::string shape_text = field(header, "shape", path);
  if (shape_text.front() != '(') throw Error(path + ": bad shape in the .npy header");
  std::vector<int64_t> shape = parse_shape(shape_text, path);
  // The data's size is checked against the header before anything is allocated: a short file
  // whose header claims 10^9 elements must not cost 4 GB.
  size_t data = offset + header_len, held = bytes.size() - data;
  int64_t needed = dtype_size(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(needed, d, &needed)) needed = INT64_MAX;
  if (uint64_t(needed) != held) {
    Tensor empty;
    empty.shape = shape;
    throw Error(path + ": holds " + std::to_string(held) + " bytes of data, " + empty.shape_text() +
                " " + dtype_name(dtype) + " needs " +
                (needed == INT64_MAX ? "more than 2^63" : std::to_string(needed)));
  }
  Tensor t = Tensor::uninitialized(dtype, std::move(shape));
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), bytes.data() + data, t.bytes.size());
  return t;
}

std::string encode(const Tensor& t) {
  std::string descr = t.dtype == DType::f32 ? "<f4" : t.dtype == DType::f64 ? "<f8" : "<i4";
  std::string shape = "(";
  for (size_t a = 0; a < t.shape.size(); ++a) shape += std::to_string(t.shape[a]) + ", ";
  if (t.shape.size() > 1) shape.resize(shape.size() - 2);
  if (t.shape.size() == 1) shape.pop_back();
  shape += ")";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64, ending in a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  return out;
}

void write(const std::string& path, const Tensor& t) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path + ": cannot write: " + std::strerror(errno));
  std::string bytes = encode(t);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw Error(path + ": write failed");
}

}  // namespace uops::npy
