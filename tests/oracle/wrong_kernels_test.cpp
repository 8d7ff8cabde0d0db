#include "uops/oracle/wrong_kernels.h"

#include <gtest/gtest.h>

#include <iostream>

namespace uops::oracle {
namespace {

TEST(WrongKernels, EveryOneIsCaught) {
  const auto& catalogue = wrong_kernels();
  ASSERT_GE(catalogue.size(), 20u);
  int caught = 0;
  for (const WrongKernel& k : catalogue) {
    CheckOptions o;
    o.dtype = DType::f64;
    o.trials = 50;
    o.backend = k.name;
    CheckReport r = check(find_op(k.op), k.make(o.dtype), o);
    EXPECT_FALSE(r.passed) << k.name << " (" << k.flaw << ") was not caught";
    if (r.passed) continue;
    ++caught;
    EXPECT_EQ(r.culprit, "implementation") << r.message();
    std::cout << k.name << ": " << r.message();
  }
  std::cout << "caught " << caught << " of " << catalogue.size() << " wrong kernels\n";
  EXPECT_EQ(caught, int(catalogue.size()));
}

// A shrunk case still fails, is no larger than the original, and names its reproduction.
TEST(WrongKernels, FailuresAreShrunkAndReproducible) {
  const WrongKernel* k = nullptr;
  for (auto& w : wrong_kernels())
    if (w.name == "conv2d_pad_off_by_one") k = &w;
  ASSERT_NE(k, nullptr);
  CheckOptions o;
  o.trials = 20;
  o.backend = "c";
  CheckReport r = check(find_op("conv2d"), k->make(DType::f32), o);
  ASSERT_FALSE(r.passed);
  for (auto& [name, dims] : r.shrunk.shapes)
    for (size_t a = 0; a < dims.size(); ++a) EXPECT_LE(dims[a], r.original.shapes.at(name)[a]);
  EXPECT_NE(r.repro.find("uopc check conv2d --backend c --dtype f32 --seed " +
                         std::to_string(r.original.seed) + " --trials 1"),
            std::string::npos)
      << r.repro;
  // Replaying the shrunk case alone fails the same way.
  CheckOptions replay = o;
  replay.only = r.shrunk;
  CheckReport again = check(find_op("conv2d"), k->make(DType::f32), replay);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.cases, 1);
}

}  // namespace
}  // namespace uops::oracle
