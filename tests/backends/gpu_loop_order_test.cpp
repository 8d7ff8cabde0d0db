// exclusive_loops_first, which the CUDA emitter applies to every block, keeps every
// result: checked on the interpreter (which runs the reordered blocks as written), bit for bit,
// on every op and gradient and on random programs. No GPU needed.
#include <gtest/gtest.h>

#include "ir/parallelism.h"
#include "support/compare.h"
#include "support/programs.h"
#include "support/random_graph.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

Program reordered(const Program& p) {
  Program q = p;
  for (auto& b : q.blocks) b = exclusive_loops_first(p, b);
  return q;
}

void expect_same_run(const Program& p, const TensorMap& inputs, const ParamMap& params,
                     const std::string& label) {
  Program q = reordered(p);
  EXPECT_TRUE(verify(q).empty()) << label;
  std::string want_error, got_error;
  TensorMap want, got;
  try {
    want = interpret(p, inputs, params);
  } catch (const Error& e) {
    want_error = e.what();
  }
  try {
    got = interpret(q, inputs, params);
  } catch (const Error& e) {
    got_error = e.what();
  }
  EXPECT_EQ(want_error, got_error) << label;
  EXPECT_TRUE(testing::same_outputs(want, got)) << label << "\n" << print(p) << print(q);
}

TEST(GpuLoopOrder, EveryOptimizedOpAndGradientKeepsItsResults) {
  // Lowered programs have carried scalars in every reduction and one statement per block; the
  // optimized ones are what the CUDA backend is given.
  for (auto& c : testing::op_cases())
    if (c.label.find("optimized") != std::string::npos && c.label.find("f64") != std::string::npos)
      expect_same_run(c.program, c.inputs, c.params, c.label);
}

TEST(GpuLoopOrder, RandomProgramsKeepTheirResults) {
  int moved = 0;
  // About one random program in 200 has a block to reorder.
  for (uint64_t seed = 0; seed < 3000; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    RandomCase c = random_case(seed, o);
    Program p = optimize(lower(c.graph));
    moved += print(reordered(p)) != print(p);
    expect_same_run(p, c.inputs, c.params, "seed " + std::to_string(seed));
  }
  EXPECT_GT(moved, 10) << "the random programs should exercise the reordering";
}

TEST(GpuLoopOrder, MatmulRunsItsOutputLoopsOnTheGridWithoutAtomics) {
  Program p = optimize(forward_program(find_op("matmul"), DType::f32));
  ASSERT_EQ(p.blocks.size(), 2u);  // c's zeros, then the product
  Block b = exclusive_loops_first(p, p.blocks[1]);
  // The CPU order is i, k, j (stride-1 stores); the grid wants i, j outside and k per thread.
  ASSERT_EQ(b.loops.size(), 3u);
  EXPECT_EQ(b.loops[2].var, p.blocks[1].loops[1].var);
  std::string cuda = emit_cuda(p);
  EXPECT_EQ(cuda.find("atomicAdd"), std::string::npos) << cuda;
}

TEST(GpuLoopOrder, BlocksWithCarriedScalarsAreLeftAlone) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f32));
  for (auto& b : p.blocks) {
    if (b.loops.front().carried.empty()) continue;
    EXPECT_EQ(print_block(p, exclusive_loops_first(p, b), 0), print_block(p, b, 0));
  }
}

}  // namespace
}  // namespace uops
