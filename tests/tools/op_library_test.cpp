// load_op_library from a program that does not export uops' symbols (this test executable, like
// a user's own test program linked the plain way): the error says what to do.
#include <gtest/gtest.h>

#include "uops/error.h"
#include "uops/ops/registry.h"

namespace uops {
namespace {

TEST(OpLibrary, UnexportedSymbolsAreExplained) {
  try {
    load_op_library(OP_LIBRARY_PATH);
    GTEST_SKIP() << "this executable exports uops' symbols; nothing to explain";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("undefined symbol"), std::string::npos) << what;
    EXPECT_NE(what.find("-rdynamic"), std::string::npos) << what;
    EXPECT_NE(what.find("docs/op-libraries.md"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace uops
