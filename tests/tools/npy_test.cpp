#include "npy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "uops/error.h"

namespace uops {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("uops_npy_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The bytes NumPy 1.x writes for np.array([[1, 2], [3, 4]], dtype='<i4').
std::string numpy_i32_2x2() {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += char(header.size());
  bytes += char(0);
  bytes += header;
  for (int32_t v : {1, 2, 3, 4}) bytes.append(reinterpret_cast<const char*>(&v), 4);
  return bytes;
}

TEST(Npy, ReadsNumpyBytes) {
  std::string path = temp_path("numpy.npy");
  write_raw(path, numpy_i32_2x2());
  Tensor t = npy::read(path);
  EXPECT_EQ(t.dtype, DType::i32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.get(3), 4);
  std::filesystem::remove(path);
}

TEST(Npy, RoundTripsEveryDtypeAndRank) {
  for (DType d : {DType::f32, DType::f64, DType::i32})
    for (auto shape : {std::vector<int64_t>{}, {3}, {2, 0}, {2, 3, 4}}) {
      Tensor t(d, shape);
      for (int64_t i = 0; i < t.numel(); ++i) t.set(i, i * 1.5 - 3);
      std::string path = temp_path("rt.npy");
      npy::write(path, t);
      Tensor back = npy::read(path);
      EXPECT_EQ(back.dtype, d);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.bytes, t.bytes);
      std::filesystem::remove(path);
    }
}

TEST(Npy, CorruptFilesAreErrors) {
  std::string good = numpy_i32_2x2();
  std::string wrong_dtype = good, fortran = good;
  wrong_dtype.replace(wrong_dtype.find("<i4"), 3, "<i8");
  fortran.replace(fortran.find("False"), 5, "True ");
  for (auto& [name, bytes, needle] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"magic", "not numpy at all", "bad magic"},
           {"truncated data", good.substr(0, good.size() - 3), "bytes of data"},
           {"truncated header", good.substr(0, 30), "truncated"},
           {"dtype", wrong_dtype, "not supported"},
           {"fortran", fortran, "Fortran"}}) {
    std::string path = temp_path("bad.npy");
    write_raw(path, bytes);
    try {
      npy::read(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << name << ": " << e.what();
    }
    std::filesystem::remove(path);
  }
  EXPECT_THROW(npy::read(temp_path("does_not_exist.npy")), Error);
}

}  // namespace
}  // namespace uops
