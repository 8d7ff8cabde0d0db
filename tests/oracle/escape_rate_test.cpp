// The oracle's escape rate (issue 25): for every wrong kernel of the catalogue and of
// tests/oracle/reach_ops.h, the share of default-run cases on which it is wrong, and its chance of
// escaping one default run (50 trials, f32), estimated per block of 4 trials (sizes grow by
// block) over many seeds. Slow: labelled `long`; UOPS_ESCAPE_SEEDS sets the number of seeds.
//   ctest --preset release -R oracle_escape_rate --verbose
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "oracle/reach_ops.h"
#include "uops/oracle/wrong_kernels.h"

namespace uops::oracle {
namespace {

TEST(EscapeRate, SumOverKernelsIsBelowAThird) {
  const char* env = std::getenv("UOPS_ESCAPE_SEEDS");
  const int seeds = env ? std::max(1, std::atoi(env)) : 20, trials = CheckOptions().trials;
  struct Subject {
    std::string name;
    const OpDef* op;
    Implementation impl;
  };
  std::vector<Subject> subjects;
  for (const WrongKernel& k : wrong_kernels())
    subjects.push_back({k.name, &find_op(k.op), k.make(DType::f32)});
  for (auto& k : testing::reach_kernels())
    subjects.push_back({k.name, &testing::registered(k.describe()), k.make(true)});
  double total = 0.0;
  std::printf("%-34s %8s %8s %8s\n", "wrong kernel", "wrong", "escape", "runs");
  for (const Subject& s : subjects) {
    Generator gen(*s.op, DType::f32);
    const int block = 4, blocks = (trials + block - 1) / block;
    std::vector<int> wrong(size_t(blocks), 0), seen(size_t(blocks), 0);
    int wrong_cases = 0, escaped_runs = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      bool caught = false;
      for (int t = 0; t < trials; ++t) {
        CheckOptions o;
        o.only = gen.random(trial_seed(uint64_t(seed), t), t);
        o.shrink = false;
        bool bad = !check(*s.op, s.impl, o).passed;
        wrong[size_t(t / block)] += bad;
        seen[size_t(t / block)] += 1;
        wrong_cases += bad;
        caught |= bad;
      }
      escaped_runs += !caught;
    }
    double escape = 1.0;
    for (int b = 0; b < blocks; ++b) {
      int in_block = std::min(block, trials - b * block);
      escape *= std::pow(1.0 - double(wrong[size_t(b)]) / seen[size_t(b)], in_block);
    }
    total += escape;
    std::printf("%-34s %7.1f%% %8.4f %5d/%d\n", s.name.c_str(),
                100.0 * wrong_cases / (seeds * trials), escape, escaped_runs, seeds);
  }
  std::printf("sum over %zu kernels of the chance of escaping one default run: %.3f\n",
              subjects.size(), total);
  EXPECT_LT(total, 0.3);
}

}  // namespace
}  // namespace uops::oracle
