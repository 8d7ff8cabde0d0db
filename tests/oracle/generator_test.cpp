#include "uops/oracle/generator.h"

#include <gtest/gtest.h>

#include <chrono>

#include "uops/backends/backends.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/oracle/gtest.h"
#include "uops/oracle/harness.h"
#include "uops/oracle/reference.h"
#include "uops/passes/pipeline.h"

namespace uops::oracle {
namespace {

// Every generated case binds (its shapes satisfy the op's assertions) and replays identically.
TEST(Generator, CasesAreValidAndDeterministic) {
  for (const OpDef& op : all_ops()) {
    Program p = forward_program(op, DType::f64);
    Generator gen(op, DType::f64);
    for (uint64_t seed = 0; seed < 30; ++seed) {
      Case c = gen.random(seed, int(seed));  // as trial `seed` of a run: growing
      TensorMap in = make_inputs(op, c);
      EXPECT_NO_THROW(interpret(p, in, c.params)) << op.name << " seed " << seed;
      Case again = fixed_case(op, DType::f64, seed, c.shapes, c.params);
      EXPECT_EQ(again.sizes, c.sizes);
      TensorMap in2 = make_inputs(op, again);
      for (auto& [name, t] : in) EXPECT_EQ(t.bytes, in2.at(name).bytes) << op.name;
    }
  }
}

// The derived generator alone (no hand-written spec exists) drives every built-in op through
// the interpreter and the C backend without a failure.
TEST(Generator, DerivedCasesCheckEveryBuiltinOp) {
  ASSERT_EQ(all_ops().size(), 31u);
  for (const OpDef& op : all_ops()) {
    if (op.origin != OpOrigin::builtin) continue;
    for (std::string backend : {"interp", "c"})
      for (DType t : {DType::f32, DType::f64}) {
        if (backend == "c" && t == DType::f64) continue;  // one compile per op is enough here
        std::shared_ptr<Executable> exe = make_backend(backend, optimize(forward_program(op, t)));
        CheckOptions o;
        o.dtype = t;
        o.trials = 40;
        o.backend = backend;
        EXPECT_ORACLE(
            op, [exe](const TensorMap& in, const ParamMap& p) { return exe->run(in, p); }, o);
      }
  }
}

// A share of cases reaches the vector and tile widths, and every case stays within the budget.
TEST(Generator, SizesReachTheTails) {
  for (const char* name : {"softmax", "layernorm", "conv2d", "matmul"}) {
    const OpDef& op = find_op(name);
    Generator gen(op, DType::f32);
    int tails = 0, large = 0, n = 400;
    for (int seed = 0; seed < n; ++seed) {
      Case c = gen.random(uint64_t(seed));
      EXPECT_LE(gen.elements(c), kCaseElements);
      bool tail = false, big = false;
      for (auto& [axis, v] : c.sizes) {
        tail |= (v >= 15 && v <= 17) || (v >= 31 && v <= 33) || (v >= 63 && v <= 65) ||
                (v >= 127 && v <= 129);
        big |= v > 8;
      }
      tails += tail;
      large += big;
    }
    EXPECT_GE(tails, n / 10) << name;
    EXPECT_GE(large, n / 8) << name;
    EXPECT_LE(large, n / 2) << name;  // most cases stay small
  }
}

// A case past any sensible size is refused at once (no allocation, no shrinking through
// multi-GB cases); so are parameters the op's validity rule refuses.
TEST(Generator, HugeAndInvalidCasesAreRefused) {
  const OpDef& conv = find_op("conv2d");
  Shapes shapes = {{"x", {1, 5, 5, 3}}, {"w", {2, 3, 3, 3}}};
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(fixed_case(conv, DType::f32, 1, shapes,
                          {{"stride", 1}, {"pad", 1000000000000000}, {"dilation", 1}}),
               LimitError);
  EXPECT_THROW(
      fixed_case(conv, DType::f32, 1, shapes, {{"stride", 1}, {"pad", 100000}, {"dilation", 1}}),
      LimitError);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  for (int64_t dilation : {0, -1}) {
    try {
      fixed_case(conv, DType::f32, 1, shapes, {{"stride", 1}, {"pad", 0}, {"dilation", dilation}});
      ADD_FAILURE() << "dilation " << dilation << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dilation must be at least 1"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(check_valid(conv, shapes, {{"stride", 0}, {"pad", 0}, {"dilation", 1}}), Error);
}

// An implementation that runs out of a resource limit (uops::LimitError) on a case has not
// failed: the case is skipped. Replaying such a case says so instead.
TEST(Generator, LimitErrorIsAnInvalidCase) {
  const OpDef& op = find_op("softmax");
  Implementation canon = canonical(op, DType::f32);
  Implementation limited = [&](const TensorMap& in, const ParamMap& p) {
    if (in.at("x").numel() > 20) throw LimitError("over the test's budget");
    return canon(in, p);
  };
  CheckReport r = check(op, limited, {.trials = 100});
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_GT(r.skipped, 0);
  EXPECT_EQ(r.cases + r.skipped, 100);
  CheckOptions one;
  one.only = fixed_case(op, DType::f32, 1, {{"x", {5, 5}}}, {});
  EXPECT_THROW(check(op, limited, one), LimitError);
  EXPECT_THROW(check(op, limited, {.trials = 0}), Error);
}

TEST(Generator, CaseTextRoundTrips) {
  const OpDef& op = find_op("conv2d");
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Case c = random_case(op, DType::f64, seed);
    Case back = parse_case(op, case_text(c));
    EXPECT_EQ(back.shapes, c.shapes);
    EXPECT_EQ(back.params, c.params);
    EXPECT_EQ(back.seed, c.seed);
    EXPECT_EQ(back.dtype, c.dtype);
  }
  EXPECT_THROW(parse_case(op, "softmax f32 seed=1 x=[2,3]"), Error);
  EXPECT_THROW(parse_case(op, "conv2d f32 x=[1,2,2,1]"), Error);
  EXPECT_THROW(parse_case(op, "conv2d f32 seed=1 x=[1,2,2,1 w=[1,1,1,1]"), Error);
}

TEST(Generator, ShrinkCandidatesAreSmallerAndValid) {
  const OpDef& op = find_op("conv2d");
  Generator gen(op, DType::f32);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Case c = gen.random(seed);
    for (const Case& n : gen.shrink(c)) EXPECT_LE(gen.elements(n), gen.elements(c));
  }
  Case c = random_case(op, DType::f32, 7);
  for (const Case& n : shrink_candidates(op, c)) {
    int smaller = 0;
    for (auto& [name, v] : n.sizes) smaller += v < c.sizes.at(name);
    for (auto& [name, v] : n.params) smaller += v < c.params.at(name);
    EXPECT_EQ(smaller, 1);
    EXPECT_NO_THROW(interpret(forward_program(op, DType::f32), make_inputs(op, n), n.params));
  }
}

TEST(Generator, FixedCaseRejectsInconsistentShapes) {
  const OpDef& op = find_op("matmul");
  EXPECT_THROW(fixed_case(op, DType::f32, 1, {{"a", {2, 3}}, {"b", {4, 2}}}, {}), Error);
  EXPECT_THROW(fixed_case(op, DType::f32, 1, {{"a", {2, 3}}}, {}), Error);
  EXPECT_THROW(
      fixed_case(find_op("conv2d"), DType::f32, 1, {{"x", {1, 2, 2, 1}}, {"w", {1, 3, 3, 1}}},
                 {{"stride", 1}, {"pad", 0}, {"dilation", 1}}),
      Error);
}

// The reference on a case small enough to check by hand.
TEST(Reference, Conv2dByHand) {
  Tensor x(DType::f64, {1, 3, 3, 1}), w(DType::f64, {1, 2, 2, 1});
  for (int i = 0; i < 9; ++i) x.set(i, i + 1);
  for (int i = 0; i < 4; ++i) w.set(i, 1);
  TensorMap y =
      reference("conv2d", {{"x", x}, {"w", w}}, {{"stride", 1}, {"pad", 0}, {"dilation", 1}});
  const Tensor& out = y.at("y");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(out.get(0), 1 + 2 + 4 + 5);
  EXPECT_EQ(out.get(3), 5 + 6 + 8 + 9);
  Tensor ties(DType::f32, {1, 3});
  ties.set(0, 2);
  ties.set(1, 2);
  EXPECT_EQ(reference("argmax", {{"x", ties}}, {}).at("y").get(0), 0);
}

}  // namespace
}  // namespace uops::oracle
