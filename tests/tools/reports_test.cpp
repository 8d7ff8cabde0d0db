// The check reports' files: JSON that parses back with every field, JUnit XML with a failure
// that carries the replay, and merges that refuse what is not one campaign.
#include "reports.h"

#include <gtest/gtest.h>

#include "uops/error.h"

namespace uops::tools {
namespace {

using nlohmann::json;

oracle::CheckReport failing_report() {
  const OpDef& op = find_op("relu");
  oracle::Implementation canon = oracle::canonical(op, DType::f32);
  oracle::Implementation wrong = [canon](const TensorMap& in, const ParamMap& p) {
    TensorMap out = canon(in, p);
    Tensor& y = out.begin()->second;
    if (y.numel() > 3) y.set(0, y.get(0) + 1);
    return out;
  };
  return oracle::check(op, wrong, {.trials = 30, .backend = "mine <&>"});
}

TEST(Reports, JunitCarriesTheFailureAndItsReplay) {
  oracle::CheckReport bad = failing_report();
  ASSERT_FALSE(bad.passed);
  oracle::CheckReport good =
      oracle::check(find_op("relu"), oracle::canonical(find_op("relu"), DType::f32),
                    {.trials = 3, .backend = "interp"});
  json doc = reports_json({1, 30, 0, 1}, {bad, good});
  json back = json::parse(doc.dump());
  EXPECT_EQ(back["checks"][0]["failures"][0]["replay"], bad.replay);
  EXPECT_EQ(back["checks"][0]["passed"], false);
  EXPECT_TRUE(back["checks"][0]["worst_error"].is_number());
  std::string xml = junit_xml(back);
  EXPECT_NE(xml.find("tests=\"2\" failures=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"relu mine &lt;&amp;&gt; f32\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure message=\"implementation disagrees; replay: " + bad.replay),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("<&>"), std::string::npos) << "unescaped text in the XML";
}

TEST(Reports, MergeSumsShardsAndKeepsEveryFailure) {
  oracle::CheckReport bad = failing_report();
  json a = reports_json({1, 30, 0, 2}, {bad});
  json b = reports_json({1, 30, 1, 2}, {bad});
  json m = merge_reports({a, b});
  EXPECT_EQ(m["checks"][0]["cases"], 2 * bad.cases);
  EXPECT_EQ(m["checks"][0]["failures"].size(), 2u);
  EXPECT_EQ(m["checks"][0]["passed"], false);
  EXPECT_EQ(m["shard_indexes"], json::array({0, 1}));
  EXPECT_THROW(merge_reports({a}), Error);     // shard 1 missing
  EXPECT_THROW(merge_reports({a, a}), Error);  // shard 0 twice
  EXPECT_THROW(merge_reports({a, reports_json({2, 30, 1, 2}, {bad})}), Error);
}

}  // namespace
}  // namespace uops::tools
