// What a user's test file holds, compiled as the user would (this file is built with -Wextra
// -Wmissing-field-initializers -Werror): <uops/oracle/harness.h> alone declares everything the
// documented examples use, uops::Error included, and their initialiser styles (`{"x", 2}` inputs,
// designated CheckOptions) compile without a warning.
#include <gtest/gtest.h>
#include <uops/oracle/harness.h>

namespace {

TEST(OracleHeader, DocumentedStylesCompileAlone) {
  uops::OpDef op;
  op.name = "header_test_op";
  op.inputs = {{"x", 2}, {"w", 1}, {"idx", 1, true, false}};
  op.param_ranges = {{"k", {1, 3}}};
  uops::oracle::CheckOptions options{.dtype = uops::DType::f64, .trials = 5};
  EXPECT_EQ(options.trials, 5);
  EXPECT_EQ(op.inputs[2].is_index, true);
  uops::oracle::Case c{.op = "relu", .dtype = uops::DType::f32, .seed = 1};
  EXPECT_EQ(c.seed, 1u);
  try {
    throw uops::LimitError("too large");
  } catch (const uops::Error& e) {
    EXPECT_STREQ(e.what(), "too large");
  }
}

}  // namespace
