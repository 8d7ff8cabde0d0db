// The index-expression parser (docs/design.md §3.1): every grammar form, precedence, floor
// semantics, and the exact message of every kind of syntax error.
#include <gtest/gtest.h>
#include <pthread.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

// Evaluates `text` with i0=3, i1=5, i2=-2, every dXN = 10*X + N + 1, $a=4, $b=-3.
int64_t eval(const std::string& text) {
  IndexEnv env;
  env.var = [](int v) -> int64_t { return std::vector<int64_t>{3, 5, -2}.at(v); };
  env.dim = [](int s, int a) -> int64_t { return 10 * s + a + 1; };
  env.param = [](const std::string& n) -> int64_t {
    return std::map<std::string, int64_t>{{"a", 4}, {"b", -3}}.at(n);
  };
  return evaluate(parse_index(text).expr, env);
}

std::string error_of(const std::string& text, const ParseOptions& options = {}) {
  try {
    parse_index(text, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Parser, Constants) {
  EXPECT_EQ(eval("0"), 0);
  EXPECT_EQ(eval("42"), 42);
  EXPECT_EQ(eval("9223372036854775807"), INT64_MAX);
  EXPECT_TRUE(equal(parse_index("17").expr, idx::constant(17)));
}

TEST(Parser, LoopIndex) {
  EXPECT_TRUE(equal(parse_index("i0").expr, idx::var(0)));
  EXPECT_TRUE(equal(parse_index("i12").expr, idx::var(12)));
  EXPECT_EQ(eval("i1"), 5);
}

TEST(Parser, ShapeSources) {
  EXPECT_TRUE(equal(parse_index("dA0").expr, idx::dim(0, 0)));
  EXPECT_TRUE(equal(parse_index("dB3").expr, idx::dim(1, 3)));
  EXPECT_TRUE(equal(parse_index("dZ64").expr, idx::dim(25, 64)));
  EXPECT_EQ(eval("dA0 + dB1"), 1 + 12);
  EXPECT_TRUE(parse_index("dA0 + dB1").equalities.empty());
}

TEST(Parser, EqualAssertion) {
  ParsedIndex p = parse_index("dA1[=dB0] * 2");
  EXPECT_TRUE(equal(p.expr, idx::mul(idx::dim(0, 1), idx::constant(2))));
  ASSERT_EQ(p.equalities.size(), 1u);
  EXPECT_TRUE(equal(p.equalities[0].first, idx::dim(0, 1)));
  EXPECT_TRUE(equal(p.equalities[0].second, idx::dim(1, 0)));

  ParsedIndex two = parse_index("dA0[=dC2] + dB1[=dA3]");
  ASSERT_EQ(two.equalities.size(), 2u);
  EXPECT_TRUE(equal(two.equalities[1].first, idx::dim(1, 1)));
  EXPECT_TRUE(equal(two.equalities[1].second, idx::dim(0, 3)));
}

TEST(Parser, Params) {
  EXPECT_TRUE(equal(parse_index("$stride").expr, idx::param("stride")));
  EXPECT_TRUE(equal(parse_index("$_x9").expr, idx::param("_x9")));
  EXPECT_EQ(eval("i1 * $a + i0 - $b"), 5 * 4 + 3 + 3);
  std::vector<std::string> known = {"stride", "pad"};
  ParseOptions o;
  o.params = &known;
  EXPECT_TRUE(equal(parse_index("$pad", o).expr, idx::param("pad")));
}

TEST(Parser, MinMax) {
  EXPECT_EQ(eval("min(i0, i1)"), 3);
  EXPECT_EQ(eval("max(i0, i1)"), 5);
  EXPECT_EQ(eval("min(max(i2, 0), 1)"), 0);
  EXPECT_EQ(eval("max(-i1, i2 * 4)"), -5);
  EXPECT_EQ(eval("min(i0, -1) + 1"), 0);
  EXPECT_TRUE(equal(parse_index("max(i0, i1)").expr, idx::max(idx::var(0), idx::var(1))));
}

TEST(Parser, Precedence) {
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("10 - 3 - 2"), 5);
  EXPECT_EQ(eval("10 - (3 - 2)"), 9);
  EXPECT_EQ(eval("100 / 10 / 5"), 2);
  EXPECT_EQ(eval("2 * 3 % 4"), 2);
  EXPECT_EQ(eval("2 * (3 % 4)"), 6);
  EXPECT_EQ(eval("7 + 8 / 2 - 3 % 2"), 10);
  EXPECT_TRUE(equal(parse_index("i0 + i1 * i2").expr,
                    idx::add(idx::var(0), idx::mul(idx::var(1), idx::var(2)))));
  EXPECT_TRUE(equal(parse_index("i0 - i1 - i2").expr,
                    idx::sub(idx::sub(idx::var(0), idx::var(1)), idx::var(2))));
}

TEST(Parser, FloorDivisionAndModulo) {
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -4);
  EXPECT_EQ(eval("7 / (-2)"), -4);
  EXPECT_EQ(eval("-7 / (-2)"), 3);
  EXPECT_EQ(eval("-8 / 2"), -4);
  EXPECT_EQ(eval("7 % 2"), 1);
  EXPECT_EQ(eval("-7 % 2"), 1);
  EXPECT_EQ(eval("7 % (-2)"), -1);
  EXPECT_EQ(eval("-7 % (-2)"), -1);
  EXPECT_EQ(eval("-8 % 3"), 1);
  EXPECT_EQ(eval("i2 / 3"), -1);  // i2 = -2
  EXPECT_EQ(eval("i2 % 3"), 1);
  EXPECT_EQ(eval("(i2 - 1) / 3"), -1);
  EXPECT_EQ(eval("(i2 - 2) % 3"), 2);
}

TEST(Parser, LeadingSign) {
  EXPECT_EQ(eval("-i0"), -3);
  EXPECT_EQ(eval("+i0"), 3);
  EXPECT_EQ(eval("-i0 + 5"), 2);
  EXPECT_EQ(eval("- i0 * 2"), -6);
  EXPECT_EQ(eval("-(i0 + 1)"), -4);
  EXPECT_EQ(eval("(-i0)"), -3);
  EXPECT_EQ(eval("-(-i0)"), 3);
  EXPECT_EQ(eval("min(-i0, -i1)"), -5);
  // The sign binds to the first factor: -i0 / 2 is (-3) / 2 = -2, not -(3 / 2) = -1.
  EXPECT_EQ(eval("-i0 / 2"), -2);
  EXPECT_TRUE(equal(parse_index("-i0 * i1").expr, idx::mul(idx::neg(idx::var(0)), idx::var(1))));
  EXPECT_TRUE(equal(parse_index("-5").expr, idx::constant(-5)));
  EXPECT_EQ(eval("-9223372036854775807 - 1"), INT64_MIN);
}

TEST(Parser, SpacesAnywhere) {
  auto same = [](const std::string& spaced, const std::string& tight) {
    ParsedIndex a = parse_index(spaced), b = parse_index(tight);
    EXPECT_TRUE(equal(a.expr, b.expr)) << spaced;
    ASSERT_EQ(a.equalities.size(), b.equalities.size()) << spaced;
  };
  same("  i1 * $a +i3-$b  ", "i1*$a+i3-$b");
  same("\ti1 *\n$a\r+ i3", "i1*$a+i3");
  same("dA0 [ = dB1 ] + 1", "dA0[=dB1]+1");
  same("min ( i0 , 2 ) * ( i1 % 3 )", "min(i0,2)*(i1%3)");
  same(" - i0", "-i0");
}

TEST(Parser, RuntimeDivisionByZeroIsAnError) {
  EXPECT_THROW(eval("i0 / (i1 - 5)"), Error);
  EXPECT_THROW(eval("i0 % (i0 - 3)"), Error);
  EXPECT_THROW(eval("$a / ($a - 4)"), Error);
  EXPECT_THROW(eval("(-9223372036854775807 - 1) / (-1)"), Error);
}

TEST(Parser, RuntimeOverflowIsAnError) {
  EXPECT_THROW(eval("i0 + 9223372036854775807"), Error);
  EXPECT_THROW(eval("i0 * 4611686018427387904"), Error);
  // Negating -2^63 overflowed silently (undefined behaviour) before.
  EXPECT_THROW(eval("-(i0 - 3 - 9223372036854775807 - 1)"), Error);
  EXPECT_EQ(eval("-(i0 - 3 - 9223372036854775807)"), INT64_MAX);
}

struct Malformed {
  std::string text, message;
};

TEST(Parser, MalformedInputsGiveExactMessages) {
  const std::vector<Malformed> cases = {
      {"i0 + * 2", "\"i0 + * 2\": column 6: expected a term, found '*'"},
      {"", "\"\": column 1: expected a term, found end of input"},
      {"   ", "\"   \": column 4: expected a term, found end of input"},
      {"i0 +", "\"i0 +\": column 5: expected a term, found end of input"},
      {"i0 /", "\"i0 /\": column 5: expected a term, found end of input"},
      {"+", "\"+\": column 2: expected a term, found end of input"},
      {"--1", "\"--1\": column 2: expected a term, found '-'"},
      {"i0 - -1", "\"i0 - -1\": column 6: expected a term, found '-'"},
      {"7 % -2", "\"7 % -2\": column 5: expected a term, found '-'"},
      {"i0 i1", "\"i0 i1\": column 4: expected an operator or end of input, found 'i1'"},
      {"i0, i1", "\"i0, i1\": column 3: expected an operator or end of input, found ','"},
      {"1 = 2", "\"1 = 2\": column 3: expected an operator or end of input, found '='"},
      {"(i0 + 1", "\"(i0 + 1\": column 8: expected ')', found end of input"},
      {"i0 + 1)", "\"i0 + 1)\": column 7: expected an operator or end of input, found ')'"},
      {"((i0)", "\"((i0)\": column 6: expected ')', found end of input"},
      {"()", "\"()\": column 2: expected a term, found ')'"},
      {"foo",
       "\"foo\": column 1: expected a term, found 'foo' (names are iN, dXN, $param, min, max)"},
      {"i", "\"i\": column 1: expected a term, found 'i' (names are iN, dXN, $param, min, max)"},
      {"i0 + dA",
       "\"i0 + dA\": column 6: expected a term, found 'dA' (names are iN, dXN, $param, min, "
       "max)"},
      {"da0",
       "\"da0\": column 1: expected a term, found 'da0' (names are iN, dXN, $param, min, "
       "max)"},
      {"i0x",
       "\"i0x\": column 1: expected a term, found 'i0x' (names are iN, dXN, $param, min, "
       "max)"},
      {"i0 # 2", "\"i0 # 2\": column 4: unexpected character '#'"},
      {"i0 @", "\"i0 @\": column 4: unexpected character '@'"},
      {"i0 +\x01", "\"i0 +\x01\": column 5: unexpected character '\\x01'"},
      {"2i0", "\"2i0\": column 2: expected an operator after '2', found 'i'"},
      {"$", "\"$\": column 1: expected a parameter name after '$'"},
      {"i0 * $1x", "\"i0 * $1x\": column 6: expected a parameter name after '$'"},
      {"min(i0)", "\"min(i0)\": column 7: expected ',', found ')'"},
      {"min i0", "\"min i0\": column 5: expected '(', found 'i0'"},
      {"max(i0, i1", "\"max(i0, i1\": column 11: expected ')', found end of input"},
      {"min(i0,)", "\"min(i0,)\": column 8: expected a term, found ')'"},
      {"max", "\"max\": column 4: expected '(', found end of input"},
      {"dA0[dB0]", "\"dA0[dB0]\": column 5: expected '=', found 'dB0'"},
      {"dA0[=i0]", "\"dA0[=i0]\": column 6: expected an axis size like 'dB0', found 'i0'"},
      {"dA0[=dB0", "\"dA0[=dB0\": column 9: expected ']', found end of input"},
      {"dA0[=dB0]]", "\"dA0[=dB0]]\": column 10: expected an operator or end of input, found ']'"},
      {"i0[=dB0]", "\"i0[=dB0]\": column 3: expected an operator or end of input, found '['"},
      {"dA65", "\"dA65\": column 1: axis 65 is out of range"},
      {"i65", "\"i65\": column 1: loop index 'i65' is out of range"},
      {"i99999999999", "\"i99999999999\": column 1: loop index 'i99999999999' is out of range"},
      {"99999999999999999999",
       "\"99999999999999999999\": column 1: integer '99999999999999999999' does not fit in 64 "
       "bits"},
      {"1 + 9223372036854775808",
       "\"1 + 9223372036854775808\": column 5: integer '9223372036854775808' does not fit in 64 "
       "bits"},
  };
  EXPECT_GE(cases.size(), 30u);
  for (const Malformed& c : cases) EXPECT_EQ(error_of(c.text), c.message) << c.text;
}

TEST(Parser, OptionsRestrictNames) {
  ParseOptions two_sources;
  two_sources.num_sources = 2;
  EXPECT_EQ(error_of("dA0 + dC0", two_sources),
            "\"dA0 + dC0\": column 7: shape source C is out of range: the sources are A-B");
  ParseOptions one_source;
  one_source.num_sources = 1;
  EXPECT_EQ(error_of("dB0", one_source),
            "\"dB0\": column 1: shape source B is out of range: the sources are A");
  EXPECT_EQ(error_of("dA1[=dB0]", one_source),
            "\"dA1[=dB0]\": column 6: shape source B is out of range: the sources are A");
  ParseOptions no_source;
  no_source.num_sources = 0;
  EXPECT_EQ(error_of("dA0", no_source),
            "\"dA0\": column 1: shape source A is out of range: no shape sources are given");

  ParseOptions rank3;
  rank3.rank = 3;
  EXPECT_EQ(error_of("i0 + i3", rank3),
            "\"i0 + i3\": column 6: loop index 'i3' is out of range: the output has rank 3");
  EXPECT_TRUE(equal(parse_index("i2", rank3).expr, idx::var(2)));

  ParseOptions shape;
  shape.allow_loop_vars = false;
  EXPECT_EQ(error_of("dA0 - i1", shape),
            "\"dA0 - i1\": column 7: loop index 'i1' is not allowed in a shape expression");

  std::vector<std::string> known = {"pad"};
  ParseOptions params;
  params.params = &known;
  EXPECT_EQ(error_of("i0 * $stride - $pad", params),
            "\"i0 * $stride - $pad\": column 6: unknown parameter '$stride'");
  std::vector<std::string> none;
  params.params = &none;
  EXPECT_EQ(error_of("$pad", params), "\"$pad\": column 1: unknown parameter '$pad'");
}

TEST(Parser, NestingDepthIsBounded) {
  auto nested = [](int depth) { return std::string(depth, '(') + "1" + std::string(depth, ')'); };
  EXPECT_EQ(eval(nested(255)), 1);
  std::string deep = nested(256);
  EXPECT_EQ(error_of(deep), "\"" + deep + "\": column 257: expression nested too deeply");
  std::string mins;
  for (int i = 0; i < 300; ++i) mins += "min(";
  EXPECT_NE(error_of(mins).find("expression nested too deeply"), std::string::npos);
}

TEST(Parser, SizeIsBoundedByNodesNotCharacters) {
  // 4096 nodes: 2048 leaves and 2047 additions, however they are spaced.
  std::string largest = "i0";
  for (int k = 1; k < 2048; ++k) largest += "+i0";
  EXPECT_EQ(eval(largest), 3 * 2048);
  std::string spaced = to_string(parse_index(largest).expr);
  EXPECT_GT(spaced.size(), 4 * largest.size() / 3);
  EXPECT_EQ(eval(spaced), 3 * 2048);
  EXPECT_EQ(eval(std::string(100000, ' ') + "1" + std::string(100000, ' ')), 1);
  std::string too_large = largest + "+i0";
  try {
    parse_index(too_large);
    FAIL() << "accepted " << too_large.size() << " characters";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("an index expression of more than 4096 nodes is larger "
                                         "than the limit"),
              std::string::npos)
        << e.what();
  }
  // Tokens are bounded before any tree is built.
  std::string many = "0";
  for (int k = 0; k < 20000; ++k) many += "+1";
  EXPECT_THROW(parse_index(many), LimitError);
  EXPECT_NE(error_of("$" + std::string(257, 'a')).find("parameter name longer than 256"),
            std::string::npos);
}

// What error_of gives for `text`, parsed on a thread whose stack has `bytes` bytes.
std::string error_on_stack(const std::string& text, size_t bytes) {
  struct Run {
    const std::string& text;
    std::string error;
  } run{text, {}};
  auto body = [](void* arg) -> void* {
    auto* r = static_cast<Run*>(arg);
    r->error = error_of(r->text);
    return nullptr;
  };
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, bytes);
  pthread_t thread;
  const int created = pthread_create(&thread, &attributes, body, &run);
  pthread_attr_destroy(&attributes);
  if (created != 0) return "(no thread)";
  pthread_join(thread, nullptr);
  return run.error;
}

// Input past a limit is refused before its tree outgrows the limit, so refusing it takes no
// more stack than accepting the largest input: 256 KiB (sanitizers widen every frame). The
// 32,765-node chain below used to be built whole before the count, and freeing it took 1 MiB.
TEST(Parser, RefusingTakesNoMoreStackThanAccepting) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr size_t kStack = 1024 * 1024;
#else
  constexpr size_t kStack = 256 * 1024;
#endif
  auto chain = [](int terms) {
    std::string text = "i0";
    for (int k = 1; k < terms; ++k) text += "+i0";
    return text;
  };
  auto nested = [](int depth) { return std::string(depth, '(') + "1" + std::string(depth, ')'); };
  EXPECT_EQ(error_on_stack(chain(2048), kStack), "(no error)");
  EXPECT_EQ(error_on_stack(nested(255), kStack), "(no error)");
  EXPECT_NE(error_on_stack(chain(16383), kStack).find("more than 4096 nodes"), std::string::npos);
  EXPECT_NE(error_on_stack(nested(256), kStack).find("nested too deeply"), std::string::npos);
}

// The fuzzer's seeds, among them the inputs it once stopped on: a valid expression written
// without spaces whose printed form was longer than a limit on characters. Every seed that
// parses must print to a form that parses back to an equal tree.
TEST(Parser, FuzzSeedsRoundTrip) {
  int parsed = 0;
  for (auto& entry : std::filesystem::directory_iterator(UOPS_FUZZ_CORPUS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Index e;
    try {
      e = parse_index(text).expr;
    } catch (const Error&) {
      continue;
    }
    ++parsed;
    std::string printed = to_string(e);
    Index back;
    ASSERT_NO_THROW(back = parse_index(printed).expr) << entry.path() << ": " << printed;
    EXPECT_TRUE(equal(back, e)) << entry.path();
  }
  EXPECT_GT(parsed, 10);
}

}  // namespace
}  // namespace uops
