// The oracle's reach (issue 25): independent trials, sizes that grow, valid tails and corners,
// values and tolerances from the description, and a shrinker that reaches a local minimum.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <set>

#include "oracle/reach_ops.h"
#include "uops/error.h"
#include "uops/oracle/wrong_kernels.h"

namespace uops::oracle {
namespace {

using testing::reach_kernels;
using testing::registered;

// A fingerprint of every case an implementation is run on.
Implementation recording(const OpDef& op, DType t, std::set<std::string>* seen) {
  Implementation canon = canonical(op, t);
  return [canon, seen](const TensorMap& in, const ParamMap& p) {
    std::string key;
    for (auto& [name, tensor] : in)
      key += name + tensor.shape_text() + std::string(tensor.bytes.begin(), tensor.bytes.end());
    seen->insert(key);
    return canon(in, p);
  };
}

// Trial i of seed s used to be the case of seed s + i, so seeds 1 and 2 shared 49 of 50 cases.
TEST(Reach, SeedsDrawDisjointCases) {
  const OpDef& op = find_op("softmax");
  std::set<std::string> one, two;
  CheckReport a = check(op, recording(op, DType::f32, &one), {.seed = 1});
  CheckReport b = check(op, recording(op, DType::f32, &two), {.seed = 2});
  ASSERT_TRUE(a.passed && b.passed);
  int shared = 0;
  for (auto& k : one) shared += int(two.count(k));
  EXPECT_EQ(shared, 0);
  EXPECT_EQ(a.cases, 50);
  EXPECT_GE(a.distinct, 40) << a.message();
  EXPECT_EQ(a.redrawn, 0) << a.message();
  EXPECT_NE(a.message().find("distinct shapes"), std::string::npos) << a.message();
  // Seeds are below 2^63, so a replay's text reads back.
  for (int i = 0; i < 1000; ++i) EXPECT_LT(trial_seed(uint64_t(i), i), uint64_t(1) << 63);
}

// An op whose rule refuses most draws: the report counts them and warns.
TEST(Reach, MostlyInvalidDrawsWarn) {
  OpDef d = find_op("relu");
  d.name = "reach_picky_relu";
  d.origin = OpOrigin::user;
  d.invalid = [](const Shapes& s, const ParamMap&) {
    return s.at("x")[0] == 3 && s.at("x")[1] % 3 == 0 ? std::string()
                                                      : std::string("x must be 3 x 3k");
  };
  const OpDef& op = registered(d);
  CheckReport r = check(op, canonical(op, DType::f32));
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_GT(r.redrawn, r.cases) << r.message();
  EXPECT_TRUE(r.mostly_invalid());
  EXPECT_NE(r.message().find("warning: most random draws were invalid"), std::string::npos)
      << r.message();
}

int64_t largest(const Case& c) {
  int64_t m = 0;
  for (auto& [axis, v] : c.sizes) m = std::max(m, v);
  return m;
}

// Sizes start small and grow past 256 within a default run, on every seed; the budget and
// max_axis bound them.
TEST(Reach, SizesGrowWithTheTrial) {
  for (const char* name : {"softmax", "sum", "matmul"}) {
    Generator gen(find_op(name), DType::f32);
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      int64_t early = 0, late = 0;
      for (int t = 0; t < 50; ++t) {
        Case c = gen.random(trial_seed(seed, t), t);
        EXPECT_LE(gen.elements(c), kCaseElements);
        (t < 4 ? early : late) = std::max(t < 4 ? early : late, largest(c));
      }
      EXPECT_LE(early, 17) << name;
      EXPECT_GT(late, 256) << name << " seed " << seed;
    }
  }
  Generator bounded(find_op("softmax"), DType::f32, kCaseElements, 40);
  int64_t top = 0;
  for (int t = 0; t < 300; ++t) top = std::max(top, largest(bounded.random(trial_seed(1, t), t)));
  EXPECT_LE(top, 40);
  EXPECT_GE(top, 30);
  // Rows of thousands where the budget allows.
  Generator grown(find_op("sum"), DType::f32);
  int64_t longest = 0;
  for (int t = 0; t < 500; ++t) longest = std::max(longest, largest(grown.random(uint64_t(t))));
  EXPECT_GE(longest, 2000);
}

// An even-only axis gets its tails at the nearest even sizes (14, 18, 30, 34 ...), not at odd
// sizes it refuses; two axes get tails at once.
TEST(Reach, TailsAreValidAndMeetInCorners) {
  const OpDef& rotary = registered(testing::rotary_op());
  Generator gen(rotary, DType::f32);
  int near = 0, n = 400;
  for (int seed = 0; seed < n; ++seed) {
    int64_t d = gen.random(uint64_t(seed)).shapes.at("x")[1];
    EXPECT_EQ(d % 2, 0);
    for (int64_t w : {16, 32, 64, 128, 256, 1024}) near += d == w - 2 || d == w + 2;
  }
  EXPECT_GE(near, n / 20);
  Generator mm(find_op("matmul"), DType::f32);
  int corners = 0;
  for (int seed = 0; seed < n; ++seed) {
    Case c = mm.random(uint64_t(seed));
    auto tail = [](int64_t v) { return v > 8 && v % 8 != 0; };
    corners += tail(c.shapes.at("a")[0]) && tail(c.shapes.at("b")[1]);
  }
  EXPECT_GE(corners, n / 16);
}

// Left at uniform, the values follow the description; index inputs meet their bounds.
TEST(Reach, ValuesFollowTheDescription) {
  Description softmax = describe(find_op("softmax").build(DType::f32));
  EXPECT_TRUE(softmax.exponential && softmax.sums && softmax.compares && softmax.transcendental);
  Description add = describe(find_op("add").build(DType::f32));
  EXPECT_FALSE(add.exponential || add.sums || add.compares || add.transcendental);
  EXPECT_TRUE(describe(find_op("argmax").build(DType::f32)).compares);

  const OpDef& user = registered(testing::softmax_op());
  Generator gen(user, DType::f64);
  int large = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    TensorMap in = gen.inputs(gen.random(seed));
    large += std::fabs(in.at("x").get(0)) > 500;
  }
  EXPECT_GE(large, 10);

  const OpDef& emb = registered(testing::embedding_op());
  Generator eg(emb, DType::f32);
  int first = 0, last = 0, cases = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Case c = eg.random(seed);
    int64_t v = c.shapes.at("table")[0];
    if (v < 6) continue;  // the old default [0, 4] met v - 1 only there
    ++cases;
    TensorMap in = eg.inputs(c);
    const Tensor& idx = in.at("idx");
    bool f = false, l = false;
    for (int64_t e = 0; e < idx.numel(); ++e) {
      EXPECT_GE(idx.get(e), 0);
      EXPECT_LT(idx.get(e), v);
      f |= idx.get(e) == 0;
      l |= idx.get(e) == v - 1;
    }
    first += f;
    last += l;
  }
  ASSERT_GT(cases, 20);
  EXPECT_GE(last, cases / 4);
  EXPECT_GE(first, cases / 4);
  // gather declares a range past its table: it meets -1 and V.
  Generator gather(find_op("gather"), DType::f32);
  int outside = 0;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    Case c = gather.random(seed);
    TensorMap in = gather.inputs(c);
    const Tensor& idx = in.at("idx");
    for (int64_t e = 0; e < idx.numel(); ++e)
      outside += idx.get(e) == -1 || idx.get(e) == c.shapes.at("table")[0];
  }
  EXPECT_GE(outside, 10);
}

// The tolerance widens with reductions and magnitudes, an op may declare its own and a check
// may override it; an error of 2e-4 relative on outputs near 1000 is caught in f32.
TEST(Reach, ToleranceScalesAndCanBeDeclared) {
  Tolerance base = tolerance(DType::f32);
  EXPECT_EQ(widen(base, 100, 0, false).abs, base.abs);
  EXPECT_NEAR(widen(base, 128 * 16, 0, false).rel, 4 * base.rel, 1e-12);
  EXPECT_NEAR(widen(base, 1, 400, false).abs, 100 * base.abs, 1e-12);
  EXPECT_EQ(widen(base, 1, 400, false).rel, base.rel);
  EXPECT_NEAR(widen(base, 1, 400, true).rel, 100 * base.rel, 1e-12);

  const OpDef& op = find_op("log_softmax");
  Implementation canon = canonical(op, DType::f32);
  Implementation off = [canon](const TensorMap& in, const ParamMap& p) {
    TensorMap out = canon(in, p);
    for (auto& [name, t] : out)
      for (int64_t e = 0; e < t.numel(); ++e) t.set(e, t.get(e) * (1 + 2e-4));
    return out;
  };
  CheckReport r = check(op, off, {.trials = 100});
  EXPECT_FALSE(r.passed) << "a relative error of 2e-4 went unnoticed";

  OpDef loose = testing::softmax_op();
  loose.name = "reach_softmax_loose";
  loose.tolerance[DType::f64] = {1e-3, 0};
  const OpDef& declared = registered(loose);
  Implementation near = [](const TensorMap& in, const ParamMap& p) {
    TensorMap out = testing::softmax_kernel(true)(in, p);
    for (auto& [name, t] : out)
      for (int64_t e = 0; e < t.numel(); ++e) t.set(e, t.get(e) + 1e-4);
    return out;
  };
  EXPECT_TRUE(check(declared, near, {.dtype = DType::f64}).passed);
  const OpDef& strict = registered(testing::softmax_op());
  EXPECT_FALSE(check(strict, near, {.dtype = DType::f64}).passed);
  CheckOptions o;
  o.dtype = DType::f64;
  o.tolerance = Tolerance{1e-3, 0};
  EXPECT_TRUE(check(strict, near, o).passed);
  o.tolerance = Tolerance{1e-6, 0};
  EXPECT_FALSE(check(declared, near, o).passed);
}

// No case one step smaller in any axis or parameter (every smaller value up to 64) still fails.
void expect_minimal(const OpDef& op, const Implementation& impl, const CheckReport& r) {
  Generator gen(op, r.shrunk.dtype);
  for (const Case& smaller : gen.shrink(r.shrunk)) {
    CheckOptions o;
    o.only = smaller;
    o.shrink = false;
    EXPECT_TRUE(check(op, impl, o).passed) << op.name << ": " << case_text(smaller)
                                           << " still fails; shrunk to " << case_text(r.shrunk);
  }
}

// A bug on odd rows past 8: the greedy pass stopped at 33 (its steps were 1, 16 and 32).
TEST(Reach, ShrinkerReachesALocalMinimum) {
  const OpDef& op = find_op("sum");
  Implementation canon = canonical(op, DType::f64);
  Implementation odd = [canon](const TensorMap& in, const ParamMap& p) {
    TensorMap out = canon(in, p);
    int64_t n = in.at("x").shape[1];
    if (n > 8 && n % 2) out.at("y").set(0, out.at("y").get(0) + 1);
    return out;
  };
  CheckOptions o;
  o.dtype = DType::f64;
  o.only = fixed_case(op, DType::f64, 3, {{"x", {5, 33}}}, {});
  CheckReport r = check(op, odd, o);
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.shrunk.shapes.at("x"), (std::vector<int64_t>{1, 9})) << r.message();
  expect_minimal(op, odd, r);
}

// The must-show kernels: every one caught at default options on five seeds, its case minimal
// in every axis; the right kernels of the same ops pass in f32 and f64 (large sin/cos/exp
// arguments included).
TEST(Reach, RareBugsAreCaughtAtDefaults) {
  struct Subject {
    std::string name;
    const OpDef* op;
    Implementation wrong, right;
  };
  std::vector<Subject> subjects;
  for (auto& k : reach_kernels()) {
    const OpDef& op = registered(k.describe());
    subjects.push_back({k.name, &op, k.make(true), k.make(false)});
  }
  for (const WrongKernel& k : wrong_kernels())
    if (k.name == "matmul_corner_tile_dropped" || k.name == "sum_blocks_past_256")
      subjects.push_back({k.name, &find_op(k.op), k.make(DType::f32), nullptr});
  ASSERT_EQ(subjects.size(), 5u);
  for (const Subject& s : subjects) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      CheckReport r = check(*s.op, s.wrong, {.seed = seed});
      EXPECT_FALSE(r.passed) << s.name << " escaped seed " << seed;
      if (r.passed) continue;
      EXPECT_EQ(r.culprit, "implementation") << r.message();
      if (seed == 1) {
        std::cout << s.name << ": " << r.message();
        expect_minimal(*s.op, s.wrong, r);
      }
      if (!s.right) continue;
      for (DType t : {DType::f32, DType::f64}) {
        CheckReport ok = check(*s.op, s.right, {.dtype = t, .seed = seed});
        EXPECT_TRUE(ok.passed) << ok.message();
      }
    }
  }
}

}  // namespace
}  // namespace uops::oracle
