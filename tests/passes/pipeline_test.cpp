// The pipeline (passes/pipeline): every pass it runs can be dumped by name.
#include "uops/passes/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "uops/uops.h"

namespace uops {

namespace {

TEST(Pipeline, DumpsAndNamesPasses) {
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, g.unary(UnaryOp::neg, x)));
  std::ostringstream out;
  PipelineOptions o;
  o.dump_after = "all";
  o.dump = &out;
  optimize(lower(g), o);
  for (auto& name : pass_names())
    EXPECT_NE(out.str().find("// after " + name + "\n"), std::string::npos) << name;
  // Every pass optimize() runs is one that dump_after accepts by name (storage_reuse was not).
  std::istringstream lines(out.str());
  auto names = pass_names();
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("// after ", 0) != 0) continue;
    std::string name = line.substr(9);
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    std::ostringstream one;
    PipelineOptions only{false, name, &one};
    EXPECT_NO_THROW(optimize(lower(g), only)) << name;
    EXPECT_NE(one.str().find("// after " + name + "\n"), std::string::npos) << name;
  }
  o.dump_after = "fusion";
  EXPECT_THROW(optimize(lower(g), o), Error);
}

}  // namespace
}  // namespace uops
