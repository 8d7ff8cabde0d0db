// Printing an index expression and parsing the text again gives an equal tree (index_expr.h's
// promise), on hand-written expressions and on randomly built ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

void expect_round_trip(const Index& e) {
  std::string text = to_string(e);
  Index back;
  try {
    back = parse_index(text).expr;
  } catch (const Error& err) {
    ADD_FAILURE() << "printed text does not parse: " << err.what();
    return;
  }
  EXPECT_TRUE(equal(back, e)) << text << " reads back as " << to_string(back);
}

TEST(IndexRoundTrip, HandWritten) {
  const char* texts[] = {
      "i1 * $stride + i3 - $pad",
      "i0",
      "-i0",
      "-i0 * 2",
      "-(i0 * 2)",
      "-i0 / 2 + 1",
      "-(i0 + i1)",
      "i0 - (i1 - i2)",
      "i0 - (-i1)",
      "i0 * (-3)",
      "-3 * i0",
      "(i0 + 1) * (i1 - 1)",
      "i0 / 2 / 3",
      "i0 / (2 / i1)",
      "i0 % (i1 * 2)",
      "(i0 % 3) * 4",
      "min(i0, dA1) - max(-i1, 0)",
      "-min(i0, 2)",
      "max(min(i0, i1), -(i2 + 1))",
      "dA0 * dB1 + dC2",
      "-9223372036854775807 - 1",
      "i0 - (-9223372036854775807 - 1)",
      "-(-9223372036854775807 - 1)",
      "(i0 * $s - $p + i3 * $d) / 2",
  };
  for (const char* t : texts) {
    SCOPED_TRACE(t);
    expect_round_trip(parse_index(t).expr);
  }
}

TEST(IndexRoundTrip, PrintsCanonicalText) {
  EXPECT_EQ(to_string(parse_index("i1*$stride+i3-$pad").expr), "i1 * $stride + i3 - $pad");
  EXPECT_EQ(to_string(parse_index("((i0))+(i1*i2)").expr), "i0 + i1 * i2");
  EXPECT_EQ(to_string(parse_index("i0-(i1+i2)").expr), "i0 - (i1 + i2)");
  EXPECT_EQ(to_string(parse_index("(i0+i1)-i2").expr), "i0 + i1 - i2");
  EXPECT_EQ(to_string(parse_index("- i0*2").expr), "-i0 * 2");
  EXPECT_EQ(to_string(parse_index("-(i0*2)").expr), "-(i0 * 2)");
  EXPECT_EQ(to_string(idx::mul(idx::var(0), idx::neg(idx::var(1)))), "i0 * (-i1)");
  EXPECT_EQ(to_string(idx::add(idx::var(0), idx::constant(-4))), "i0 + (-4)");
  EXPECT_EQ(to_string(idx::add(idx::constant(-4), idx::var(0))), "-4 + i0");
  EXPECT_EQ(to_string(parse_index("min(dA0,dB1[=dA2])").expr), "min(dA0, dB1)");
}

TEST(IndexRoundTrip, LongChainWithinTheLengthLimit) {
  std::string text = "i0";
  while (text.size() + 5 <= 4096) text += " + i1";
  Index e = parse_index(text).expr;
  EXPECT_EQ(to_string(e), text);
  expect_round_trip(e);
}

// Random trees over every node kind the parser can produce, through the same constructors.
class RandomIndex {
 public:
  explicit RandomIndex(uint64_t seed) : rng_(seed) {}

  Index make(int depth) {
    int pick = depth <= 0 ? pick_in(0, 3) : pick_in(0, 11);
    switch (pick) {
      case 0:
        return idx::constant(constant());
      case 1:
        return idx::var(pick_in(0, 7));
      case 2:
        return idx::dim(pick_in(0, 25), pick_in(0, 64));
      case 3:
        return idx::param(std::string(1, char('a' + pick_in(0, 3))) + "_" +
                          std::to_string(pick_in(0, 9)));
      case 4:
        return idx::neg(make(depth - 1));
      case 5:
        return idx::add(make(depth - 1), make(depth - 1));
      case 6:
        return idx::sub(make(depth - 1), make(depth - 1));
      case 7:
        return idx::mul(make(depth - 1), make(depth - 1));
      case 8:
        return idx::floordiv(make(depth - 1), make(depth - 1));
      case 9:
        return idx::floormod(make(depth - 1), make(depth - 1));
      case 10:
        return idx::min(make(depth - 1), make(depth - 1));
      default:
        return idx::max(make(depth - 1), make(depth - 1));
    }
  }

 private:
  int pick_in(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  int64_t constant() {
    switch (pick_in(0, 5)) {
      case 0:
        return INT64_MIN;
      case 1:
        return INT64_MAX;
      case 2:
        return -pick_in(0, 9);
      default:
        return pick_in(0, 20);
    }
  }
  std::mt19937_64 rng_;
};

TEST(IndexRoundTrip, RandomTrees) {
  // UOPS_ROUNDTRIP_TRIALS raises the count for long runs.
  const char* env = std::getenv("UOPS_ROUNDTRIP_TRIALS");
  int trials = env ? std::atoi(env) : 3000;
  for (int seed = 0; seed < trials; ++seed) {
    RandomIndex gen(seed);
    Index e = gen.make(1 + seed % 6);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_round_trip(e);
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace uops
