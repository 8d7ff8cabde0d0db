// The oracle in a GoogleTest suite (header-only; needs only GTest and uops_oracle):
//
//   EXPECT_ORACLE(find_op("softmax"), my_softmax);
//   ASSERT_ORACLE(op, my_kernel, {.dtype = DType::f64, .trials = 200});
//
// checks the implementation as oracle::check does and, when it fails, fails the test with the
// report: the shrunk case, the worst element and the replay line that reruns just that case. A
// check that throws (a malformed option, a description that does not build) fails the test with
// the error. The options are anything a CheckOptions is made from, or omitted.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>

#include "uops/oracle/harness.h"

namespace uops::oracle::gtest_support {

inline ::testing::AssertionResult oracle_passes(const char* op_text, const char* impl_text,
                                                const char*, const OpDef& op,
                                                const Implementation& impl,
                                                const CheckOptions& options) {
  std::string what = std::string("oracle::check(") + op_text + ", " + impl_text + ")";
  try {
    CheckReport r = check(op, impl, options);
    if (r.passed) return ::testing::AssertionSuccess() << r.message();
    return ::testing::AssertionFailure() << what << " failed:\n" << r.message();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << what << " threw: " << e.what();
  }
}

}  // namespace uops::oracle::gtest_support

#define EXPECT_ORACLE(op, impl, ...)                                          \
  EXPECT_PRED_FORMAT3(::uops::oracle::gtest_support::oracle_passes, op, impl, \
                      ::uops::oracle::CheckOptions(__VA_ARGS__))
#define ASSERT_ORACLE(op, impl, ...)                                          \
  ASSERT_PRED_FORMAT3(::uops::oracle::gtest_support::oracle_passes, op, impl, \
                      ::uops::oracle::CheckOptions(__VA_ARGS__))
