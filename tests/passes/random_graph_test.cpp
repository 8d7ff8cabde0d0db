#include "support/random_graph.h"

#include <gtest/gtest.h>

#include <cmath>

#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

// Every random case is a valid program that runs, and the same seed gives the same case.
TEST(RandomGraph, CasesLowerVerifyAndRun) {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    o.smooth = seed % 3 == 0;
    RandomCase c = random_case(seed, o);
    Program p = lower(c.graph);
    ASSERT_TRUE(verify(p).empty()) << print(p);
    TensorMap out = interpret(p, c.inputs, c.params);
    EXPECT_EQ(out.size(), c.graph.outputs().size());
    if (o.smooth) {
      for (auto& [name, t] : out)
        for (int64_t i = 0; i < t.numel(); ++i)
          ASSERT_TRUE(std::isfinite(t.get(i))) << "seed " << seed << " " << name << "\n"
                                               << print(p);
    }
    EXPECT_EQ(print(lower(random_case(seed, o).graph)), print(p));
  }
}

TEST(RandomGraph, CoversTheUops) {
  std::map<UopKind, int> kinds;
  int selects_out_of_range = 0, params = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    RandomCase c = random_case(seed);
    for (auto& n : c.graph.nodes()) ++kinds[n.kind];
    params += !c.params.empty();
    for (auto& [name, t] : c.inputs)
      if (t.dtype == DType::i32)
        for (int64_t i = 0; i < t.numel(); ++i) selects_out_of_range += t.get(i) < 0;
  }
  for (UopKind k :
       {UopKind::input, UopKind::reindex, UopKind::unary, UopKind::binary, UopKind::ternary,
        UopKind::reduce, UopKind::select, UopKind::iota, UopKind::cast})
    EXPECT_GT(kinds[k], 10) << uop_kind_name(k);
  EXPECT_GT(selects_out_of_range, 0);
  EXPECT_GT(params, 0);
}

}  // namespace
}  // namespace uops
