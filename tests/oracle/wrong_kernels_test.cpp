#include "uops/oracle/wrong_kernels.h"

#include <gtest/gtest.h>

#include <iostream>

#include "uops/error.h"

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

const WrongKernel& find_kernel(const std::string& name) {
  for (auto& w : wrong_kernels())
    if (w.name == name) return w;
  throw Error("no wrong kernel " + name);
}

// A shrunk case still fails, is no larger than the original, and its replay reruns it. There is
// no uopc command: uopc cannot run this kernel, and a command that passes would mislead.
TEST(WrongKernels, FailuresAreShrunkAndReproducible) {
  const WrongKernel& k = find_kernel("conv2d_pad_off_by_one");
  CheckOptions o;
  o.trials = 20;
  o.backend = k.name;
  CheckReport r = check(find_op("conv2d"), k.make(DType::f32), o);
  ASSERT_FALSE(r.passed);
  for (auto& [name, dims] : r.shrunk.shapes)
    for (size_t a = 0; a < dims.size(); ++a) EXPECT_LE(dims[a], r.original.shapes.at(name)[a]);
  EXPECT_TRUE(r.repro.empty()) << r.repro;
  EXPECT_EQ(r.message().find("uopc"), std::string::npos) << r.message();
  CheckReport again = replay(find_op("conv2d"), k.make(DType::f32), r.replay);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.cases, 1);
  EXPECT_EQ(again.mismatch.worst.got, r.mismatch.worst.got);
}

// The uopc command is printed only for the backends uopc runs, naming the shrunk case.
TEST(WrongKernels, UopcCommandOnlyForItsBackends) {
  const WrongKernel& k = find_kernel("conv2d_pad_off_by_one");
  CheckOptions o;
  o.trials = 20;
  o.backend = "c";
  // A kernel named "c" is not uopc's C backend: a uopc line would rerun another kernel.
  CheckReport r = check(find_op("conv2d"), k.make(DType::f32), o);
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(r.repro.empty()) << r.repro;
  o.uopc_backend = true;  // as uopc check says of its own backends
  r = check(find_op("conv2d"), k.make(DType::f32), o);
  ASSERT_FALSE(r.passed);
  EXPECT_NE(r.repro.find("uopc check conv2d --backend c --dtype f32 --seed " +
                         std::to_string(r.original.seed) + " --trials 1"),
            std::string::npos)
      << r.repro;
}

// The tail bugs are caught at the default options (50 trials, f32).
TEST(WrongKernels, TailBugsCaughtAtDefaults) {
  for (auto name :
       {"softmax_tail_block_dropped", "layernorm_row_tile_stats", "conv2d_channel_tail_dropped"}) {
    const WrongKernel& k = find_kernel(name);
    CheckReport r = check(find_op(k.op), k.make(DType::f32));
    EXPECT_FALSE(r.passed) << name << " was not caught";
    std::cout << r.message();
  }
}

}  // namespace
}  // namespace uops::oracle
