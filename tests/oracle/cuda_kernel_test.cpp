// The catalogue of hand-written CUDA kernels (cuda_kernel_catalogue.h), checked on the CPU
// emulation of CUDA at the default options: every wrong kernel is caught, by the detector its
// bug trips or, for a bug that only gives wrong values, by the comparison; its failure is shrunk
// and the replay reruns the same kernel and fails again; every correct kernel passes.
#include "uops/oracle/cuda_kernel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "oracle/cuda_kernel_catalogue.h"
#include "uops/error.h"

namespace uops::oracle {
namespace {

const CudaCatalogueEntry& find_entry(const std::string& name) {
  for (const CudaCatalogueEntry& e : cuda_kernel_catalogue())
    if (e.name == name) return e;
  throw Error("no kernel " + name + " in the CUDA kernel catalogue");
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The detectors' words: a report caught by the comparison alone has none of them.
const std::vector<std::string> kDetectors = {"out of bounds", "race", "__syncthreads",
                                             "uninitialised", "mask"};

CheckReport check_on_emulation(const CudaCatalogueEntry& e) {
  return check_cuda_kernel(find_op(e.op), catalogue_kernel(e), {}, CudaTarget::emulation);
}

TEST(CudaKernelCatalogue, IsWellFormed) {
  const auto& catalogue = cuda_kernel_catalogue();
  std::set<std::string> names, bugs;
  int wrong = 0;
  for (const CudaCatalogueEntry& e : catalogue) {
    EXPECT_TRUE(names.insert(e.name).second) << "two kernels named " << e.name;
    EXPECT_NO_THROW(find_op(e.op)) << e.name;
    EXPECT_NO_THROW(catalogue_kernel(e)) << e.name;
    if (!e.wrong()) {
      EXPECT_TRUE(e.bug.empty() && e.correct.empty()) << e.name;
      continue;
    }
    ++wrong;
    bugs.insert(e.expect);
    EXPECT_FALSE(e.bug.empty()) << e.name;
    EXPECT_TRUE(e.expect == "disagrees" ||
                std::count(kDetectors.begin(), kDetectors.end(), e.expect) == 1)
        << e.name << ": " << e.expect;
    const CudaCatalogueEntry& fixed = find_entry(e.correct);
    EXPECT_FALSE(fixed.wrong()) << e.name << "'s correct kernel " << e.correct << " is wrong";
    EXPECT_EQ(fixed.op, e.op) << e.name;
  }
  EXPECT_GE(wrong, 14);
  // Every detector has a kernel that trips it, and the comparison has some of its own.
  for (const std::string& d : kDetectors) EXPECT_EQ(bugs.count(d), 1u) << d;
  EXPECT_EQ(bugs.count("disagrees"), 1u);
}

class CudaCatalogueKernel : public ::testing::TestWithParam<CudaCatalogueEntry> {};

// A wrong kernel fails at the default options, for the reason its bug gives; the shrunk case is
// no larger than the first failing one, and its replay reruns this kernel and fails the same way.
TEST_P(CudaCatalogueKernel, WrongIsCaughtAndCorrectPasses) {
  const CudaCatalogueEntry& e = GetParam();
  const OpDef& op = find_op(e.op);
  CheckReport r = check_on_emulation(e);
  std::cout << e.name << ": " << r.message();
  EXPECT_EQ(r.backend, "cuda-emulation");
  if (!e.wrong()) {
    EXPECT_TRUE(r.passed) << e.name << " is correct but failed:\n" << r.message();
    return;
  }
  ASSERT_FALSE(r.passed) << e.name << " (" << e.bug << ") was not caught";
  EXPECT_EQ(r.culprit, "implementation") << r.message();
  EXPECT_TRUE(contains(r.message(), e.expect)) << e.name << ": expected \"" << e.expect << "\" in\n"
                                               << r.message();
  if (e.expect == "disagrees") {
    // Wrong values, and no detector fired: the kernel ran to the end.
    EXPECT_TRUE(r.error.empty()) << e.name << " tripped a detector:\n" << r.message();
  } else {
    EXPECT_TRUE(contains(r.error, "CUDA emulation: ")) << r.message();
    EXPECT_TRUE(contains(r.error, e.expect)) << r.message();
  }
  ASSERT_FALSE(r.replay.empty()) << r.message();
  for (auto& [name, dims] : r.shrunk.shapes)
    for (size_t a = 0; a < dims.size(); ++a)
      EXPECT_LE(dims[a], r.original.shapes.at(name)[a]) << r.message();
  CheckReport again =
      replay(op, cuda_kernel(op, catalogue_kernel(e), CudaTarget::emulation), r.replay);
  EXPECT_FALSE(again.passed) << e.name << ": the replay " << r.replay << " passed";
  EXPECT_EQ(again.cases, 1);
  EXPECT_TRUE(contains(again.message(), e.expect)) << again.message();
  EXPECT_EQ(again.error.empty(), r.error.empty()) << again.message();
}

INSTANTIATE_TEST_SUITE_P(Catalogue, CudaCatalogueKernel,
                         ::testing::ValuesIn(cuda_kernel_catalogue()),
                         [](const ::testing::TestParamInfo<CudaCatalogueEntry>& info) {
                           return info.param.name;
                         });

// A detector's report names the kernel's source file and line, and where in the grid it was.
TEST(CudaKernelCatalogue, DetectorReportNamesTheSourceLine) {
  const CudaCatalogueEntry& e = find_entry("softmax_missing_sync");
  CheckReport r = check_on_emulation(e);
  ASSERT_FALSE(r.passed);
  std::string m = r.message();
  size_t at = m.find("softmax_missing_sync.cu:");
  ASSERT_NE(at, std::string::npos) << m;
  at += std::string("softmax_missing_sync.cu:").size();
  EXPECT_TRUE(at < m.size() && std::isdigit(static_cast<unsigned char>(m[at]))) << m;  // a line
  EXPECT_TRUE(contains(r.message(), "softmax_warp")) << r.message();                   // the kernel
}

TEST(CudaKernelCatalogue, DetectorReportNamesBlockAndThread) {
  CheckReport r = check_on_emulation(find_entry("transpose_early_return"));
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(contains(r.error, "block")) << r.message();
  EXPECT_TRUE(contains(r.error, "thread")) << r.message();
}

}  // namespace
}  // namespace uops::oracle
