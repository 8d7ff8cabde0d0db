// Every op's uop description against its Eigen reference on random cases, f32 and f64.
// UOPS_ORACLE_TRIALS sets the number of cases per op and dtype (default 50; 200 for the full run).
#include <gtest/gtest.h>

#include <cstdlib>

#include "uops/oracle/harness.h"

namespace uops::oracle {
namespace {

int trials() {
  const char* env = std::getenv("UOPS_ORACLE_TRIALS");
  return env ? std::atoi(env) : 50;
}

class UopsVsEigen : public ::testing::TestWithParam<std::string> {};

TEST_P(UopsVsEigen, AgreeOnRandomCases) {
  const OpDef& op = find_op(GetParam());
  for (DType t : {DType::f32, DType::f64}) {
    CheckOptions o;
    o.dtype = t;
    o.trials = trials();
    o.seed = 1000;
    // The canonical implementation against itself: only the Eigen comparison can fail.
    CheckReport r = check(op, canonical(op, t), o);
    EXPECT_TRUE(r.passed) << r.message();
    EXPECT_EQ(r.cases, o.trials);
  }
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (auto& op : all_ops()) names.push_back(op.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(AllOps, UopsVsEigen, ::testing::ValuesIn(op_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace uops::oracle
