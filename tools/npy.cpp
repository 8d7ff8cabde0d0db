#include "npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "uops/error.h"
#include "uops/ir/memory_budget.h"

namespace uops::npy {

namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMaxHeader = size_t(1) << 20;

// A file opened for reading: a folder is refused at once, and reads retry until `n` bytes or the
// end, so a pipe or a device is read like a file.
class File {
 public:
  explicit File(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    if (::fstat(fd_, &st_) != 0) {
      int err = errno;
      ::close(fd_);
      throw Error(path + ": cannot read: " + std::strerror(err));
    }
    if (S_ISDIR(st_.st_mode)) {
      ::close(fd_);
      throw Error(path + ": is a folder, not a .npy file");
    }
  }
  ~File() { ::close(fd_); }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  bool regular() const { return S_ISREG(st_.st_mode); }
  int64_t size() const { return st_.st_size; }
  size_t read_some(void* out, size_t n) {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::read(fd_, static_cast<char*>(out) + got, std::min<size_t>(n - got, 1 << 30));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(path_ + ": cannot read: " + std::strerror(errno));
      if (r == 0) break;
      got += size_t(r);
    }
    return got;
  }

 private:
  std::string path_;
  int fd_ = -1;
  struct stat st_ {};
};

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

Tensor read(const std::string& path, int64_t max_bytes) {
  File f(path);
  std::string bytes(10, '\0');
  if (f.read_some(bytes.data(), 10) < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    throw Error(path + ": not a .npy file (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    bytes.resize(12);
    if (f.read_some(bytes.data() + 10, 2) < 2) throw Error(path + ": truncated .npy header");
    header_len = 0;
    for (int i = 3; i >= 0; --i)
      header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + i]);
    offset = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_len > kMaxHeader)
    throw Error(path + ": a .npy header of " + std::to_string(header_len) +
                " bytes (NumPy writes at most a few hundred)");
  std::string header(header_len, '\0');
  if (f.read_some(header.data(), header_len) < header_len)
    throw Error(path + ": truncated .npy header");
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
  // The data's size is checked against the file and the budget before anything is allocated: a
  // short file whose header claims 10^9 elements must not cost 4 GB.
  int64_t needed = dtype_size(dtype);
  for (int64_t d : shape)
    if (__builtin_mul_overflow(needed, d, &needed)) needed = INT64_MAX;
  Tensor described;
  described.shape = shape;
  auto mismatch = [&](const std::string& held) {
    return Error(path + ": holds " + held + " bytes of data, " + described.shape_text() + " " +
                 dtype_name(dtype) + " needs " +
                 (needed == INT64_MAX ? "more than 2^63" : std::to_string(needed)));
  };
  if (f.regular()) {
    int64_t held = f.size() - int64_t(offset + header_len);
    if (held != needed) throw mismatch(std::to_string(held));
  }
  if (needed > max_bytes)
    throw LimitError(path + ": " + described.shape_text() + " " + dtype_name(dtype) + " needs " +
                     byte_size_text(needed) + ", past the memory budget of " +
                     byte_size_text(max_bytes) + " left for inputs");
  // Read straight into the tensor, then make sure a stream (a pipe, a device) ends there.
  Tensor t = Tensor::uninitialized(dtype, std::move(shape));
  size_t got = f.read_some(t.bytes.data(), t.bytes.size());
  if (got < t.bytes.size()) throw mismatch(std::to_string(got));
  char extra;
  if (f.read_some(&extra, 1) != 0) throw mismatch("more than " + std::to_string(needed));
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
