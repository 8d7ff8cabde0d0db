#include <gtest/gtest.h>

#include "uops/uops.h"

namespace uops {
namespace {

TEST(Parser, Smoke) {
  auto p = parse_index("i1 * $stride + i3 - $pad");
  EXPECT_EQ(to_string(p.expr), "i1 * $stride + i3 - $pad");
}

}  // namespace
}  // namespace uops
