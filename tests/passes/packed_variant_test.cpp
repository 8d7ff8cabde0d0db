// The C backend's packed variant (packed_variant.h): which programs have one, that it computes
// the same bits as the program it varies, and where it pays.
#include "uops/passes/packed_variant.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

#include "support/compare.h"
#include "support/example_graphs.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/binding.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

Program attention() {
  Graph g;
  testing::build_attention(g);
  return optimize(lower(g));
}

// Whether the variant of `p` pays for inputs of these shapes.
bool pays(const Program& p, const PackedVariant& v,
          const std::map<std::string, std::vector<int64_t>>& shapes) {
  TensorTypeMap types;
  for (int t : p.inputs())
    types[p.tensors[t].name] = {p.tensors[t].dtype, shapes.at(p.tensors[t].name)};
  return packed_variant_pays(v.copies, bind(p, types, {}).env());
}

// The interpreter gives the same bytes for the program and its variant.
void expect_same_bits(const Program& p, const Program& variant,
                      const std::map<std::string, std::vector<int64_t>>& shapes, uint64_t seed) {
  TensorMap in = testing::random_inputs(p, shapes, seed);
  TensorMap want = interpret(p, in), got = interpret(variant, in);
  for (auto& [name, w] : want)
    EXPECT_EQ(w.bytes, got.at(name).bytes) << name << "\n" << print(variant);
}

// The variants compiled as C (exact) give the interpreter's bytes for the programs they vary.
void expect_c_matches(const std::vector<Program>& programs, const std::vector<Program>& variants,
                      const std::vector<TensorMap>& inputs) {
  CCompileOptions exact;
  exact.reassociate = false;
  exact.extra_flags = {"-O1"};
  auto exes = compile_c_batch(variants, exact);
  for (size_t i = 0; i < variants.size(); ++i) {
    TensorMap want = interpret(programs[i], inputs[i]), got = exes[i]->run(inputs[i]);
    for (auto& [name, w] : want)
      EXPECT_EQ(w.bytes, got.at(name).bytes) << i << "\n" << print(variants[i]);
  }
}

}  // namespace

// Attention reads a copy of k laid out [b][d][j], re-read across the query rows; the row
// reductions are split off the scores first. The copy pays from 64 query rows over d <= 128, and
// from 512 over a longer d.
TEST(PackedVariant, AttentionReadsACopyOfKAcrossTheQueryRows) {
  Program p = attention();
  auto v = packed_variant(p);
  ASSERT_TRUE(v) << print(p);
  ASSERT_TRUE(verify(v->program).empty()) << verify(v->program)[0];
  ASSERT_EQ(v->copies.size(), 1u);
  int k_packed = v->program.find_tensor("k_packed");
  ASSERT_GE(k_packed, 0) << print(v->program);
  EXPECT_EQ(v->program.tensors[k_packed].role, Role::temporary);
  for (size_t t = 0; t < p.tensors.size(); ++t)
    EXPECT_EQ(v->program.tensors[t].name, p.tensors[t].name);
  for (auto [b, m, n, d] :
       std::vector<std::array<int64_t, 4>>{{2, 7, 9, 5}, {1, 1, 13, 16}, {3, 13, 4, 1}})
    expect_same_bits(p, v->program, {{"q", {b, m, d}}, {"k", {b, n, d}}, {"v", {b, n, d}}},
                     uint64_t(m));
  auto at = [&](int64_t m, int64_t d) {
    return pays(p, *v, {{"q", {2, m, d}}, {"k", {2, 40, d}}, {"v", {2, 40, d}}});
  };
  EXPECT_FALSE(at(1, 64));  // a decoding step
  EXPECT_FALSE(at(kPackedReuseShort - 1, 64));
  EXPECT_TRUE(at(kPackedReuseShort, 64));
  EXPECT_TRUE(at(kPackedReuseShort, kPackedShortReduction));
  EXPECT_FALSE(at(kPackedReuseShort, kPackedShortReduction + 1));
  EXPECT_FALSE(at(kPackedReuseLong - 1, 256));
  EXPECT_TRUE(at(kPackedReuseLong, 256));
}

// Attention's gradient recomputes the scores and reads copies of k (q k^T) and v (do v^T), the
// first as the forward pass's variant does: its scale, no longer stored to every score between
// the forward and backward parts (variable_substitution.h), leaves the scores' block as the
// forward pass's. 1.5x faster at one thread, B 8, S 512, D 64 (docs/cpu-kernels.md).
TEST(PackedVariant, AttentionGradientCopiesKAndVAsTheForwardPassCopiesK) {
  Graph g;
  testing::build_attention(g);
  Program p = optimize(gradient(g, {"q", "k", "v"}));
  auto v = packed_variant(p);
  ASSERT_TRUE(v) << print(p);
  ASSERT_TRUE(verify(v->program).empty()) << verify(v->program)[0];
  EXPECT_EQ(v->copies.size(), 2u);
  EXPECT_GE(v->program.find_tensor("k_packed"), 0) << print(v->program);
  EXPECT_GE(v->program.find_tensor("v_packed"), 0) << print(v->program);
  for (auto [b, m, n, d] : std::vector<std::array<int64_t, 4>>{{2, 7, 9, 5}, {1, 3, 13, 16}})
    expect_same_bits(p, v->program,
                     {{"q", {b, m, d}}, {"k", {b, n, d}}, {"v", {b, n, d}}, {"do", {b, m, d}}},
                     uint64_t(m));
}

// matmul's gradient reads a copy of b for da = dc b^T, re-read across the rows of a; a linear
// layer a copy of its weights, across the batch (a reduction over 1024 inputs: 512 rows or more).
TEST(PackedVariant, MatmulGradientAndLinearCopyTheOperandReadTransposed) {
  Program mg = optimize(gradient_program(find_op("matmul"), DType::f32));
  auto v = packed_variant(mg);
  ASSERT_TRUE(v) << print(mg);
  ASSERT_TRUE(verify(v->program).empty()) << verify(v->program)[0];
  EXPECT_EQ(v->copies.size(), 1u);
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{5, 7, 3}, {1, 4, 9}, {17, 2, 1}})
    expect_same_bits(mg, v->program, {{"a", {m, k}}, {"b", {k, n}}, {"dc", {m, n}}}, uint64_t(m));
  EXPECT_TRUE(pays(mg, *v, {{"a", {512, 512}}, {"b", {512, 512}}, {"dc", {512, 512}}}));
  EXPECT_FALSE(pays(mg, *v, {{"a", {256, 512}}, {"b", {512, 512}}, {"dc", {256, 512}}}));

  Program lin = optimize(forward_program(find_op("linear"), DType::f32));
  auto w = packed_variant(lin);
  ASSERT_TRUE(w) << print(lin);
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{5, 7, 3}, {1, 4, 9}})
    expect_same_bits(lin, w->program, {{"x", {m, k}}, {"w", {n, k}}, {"b", {n}}}, uint64_t(m));
  EXPECT_FALSE(pays(lin, *w, {{"x", {64, 1024}}, {"w", {1024, 1024}}, {"b", {1024}}}));
  EXPECT_TRUE(pays(lin, *w, {{"x", {512, 1024}}, {"w", {1024, 1024}}, {"b", {1024}}}));
}

// No contraction reads an operand across a single loop: no variant (conv2d's weights are re-read
// across the pixels and packed by the optimizer already; softmax contracts nothing).
TEST(PackedVariant, NoneWhereNothingIsReadAcrossOneLoop) {
  for (const char* op : {"softmax", "conv2d", "matmul", "add"}) {
    Program p = optimize(forward_program(find_op(op), DType::f32));
    EXPECT_FALSE(packed_variant(p)) << op << "\n" << print(p);
  }
}

// The attention-shaped programs of the dot tiling's test (masks, biases, four row reductions, f32
// and f64): every variant verifies and gives the same bytes as its program, in the interpreter
// and as C (exact), at random sizes.
TEST(PackedVariant, RandomAttentionShapesMatchExactly) {
  std::mt19937_64 rng(45);
  auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
  std::vector<Program> programs, variants;
  std::vector<TensorMap> inputs;
  for (int trial = 0; trial < 40; ++trial) {
    Program p = optimize(lower(testing::random_attention_scores(pick)));
    int64_t b = 1 + pick(3), m = 1 + pick(9), n = 1 + pick(9), d = 1 + pick(20);
    auto v = packed_variant(p);
    if (!v) continue;
    ASSERT_TRUE(verify(v->program).empty()) << verify(v->program)[0] << print(v->program);
    inputs.push_back(testing::random_inputs(p, {{"q", {b, m, d}}, {"k", {b, n, d}}, {"bias", {n}}},
                                            uint64_t(trial)));
    expect_same_bits(p, v->program, {{"q", {b, m, d}}, {"k", {b, n, d}}, {"bias", {n}}},
                     uint64_t(trial));
    programs.push_back(std::move(p));
    variants.push_back(std::move(v->program));
  }
  EXPECT_GE(variants.size(), 20u) << "too few attention shapes had a packed variant";
  expect_c_matches(programs, variants, inputs);
}

// The gradients of those shapes (a scale among their epilogues, which the forward and backward
// parts both read: variable_substitution.h): the optimized program and its variant give the
// unoptimized gradient's bytes in the interpreter, and the variant as C (exact).
TEST(PackedVariant, RandomAttentionGradientsMatchTheUnoptimizedGradient) {
  std::mt19937_64 rng(46);
  auto pick = [&](int n) { return int(rng() % uint64_t(n)); };
  std::vector<Program> plain, variants;
  std::vector<TensorMap> inputs;
  for (int trial = 0; trial < 24; ++trial) {
    Program lowered = gradient(testing::random_attention_scores(pick), {"q", "k", "bias"});
    Program p = optimize(lowered, {true});
    int64_t b = 1 + pick(3), m = 1 + pick(9), n = 1 + pick(9), d = 1 + pick(20);
    const std::map<std::string, std::vector<int64_t>> shapes = {
        {"q", {b, m, d}}, {"k", {b, n, d}}, {"bias", {n}}, {"dout", {b, m, n}}};
    expect_same_bits(lowered, p, shapes, uint64_t(trial));
    auto v = packed_variant(p);
    if (!v) continue;
    ASSERT_TRUE(verify(v->program).empty()) << verify(v->program)[0] << print(v->program);
    expect_same_bits(lowered, v->program, shapes, uint64_t(trial));
    inputs.push_back(testing::random_inputs(p, shapes, uint64_t(trial)));
    plain.push_back(std::move(lowered));
    variants.push_back(std::move(v->program));
  }
  EXPECT_GE(variants.size(), 4u) << "too few attention gradients had a packed variant";
  expect_c_matches(plain, variants, inputs);
}

}  // namespace uops
