// The harness's edges: hand-built cases, replays that must not shrink a run, shards, the memory a
// check holds, the reproduction line, and the GoogleTest macros.
#include "uops/oracle/harness.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "uops/ir/memory_budget.h"
#include "uops/oracle/gtest.h"

namespace uops::oracle {
namespace {

// The canonical relu, but wrong on the last element of any output past 10 elements.
Implementation wrong_past_10(DType dtype) {
  Implementation canon = canonical(find_op("relu"), dtype);
  return [canon](const TensorMap& in, const ParamMap& p) {
    TensorMap out = canon(in, p);
    Tensor& y = out.begin()->second;
    if (y.numel() > 10) y.set(y.numel() - 1, y.get(y.numel() - 1) + 1);
    return out;
  };
}

struct ScopedEnv {
  ScopedEnv(const char* name, const std::string& value) : name(name) {
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { ::unsetenv(name); }
  const char* name;
};

TEST(Harness, HandBuiltCaseWithoutSizesShrinks) {
  const OpDef& op = find_op("relu");
  Case c;
  c.op = "relu";
  c.seed = 3;
  c.shapes = {{"x", {9, 7}}};  // sizes left empty, as a user writes it
  CheckReport r = check(op, wrong_past_10(DType::f32), {.only = c});
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(r.original.shapes, c.shapes);
  EXPECT_LT(r.shrunk.shapes.at("x")[0] * r.shrunk.shapes.at("x")[1], 63) << r.message();
}

// A leftover UOPS_ORACLE_REPLAY costs one case, not the run: the random cases still run, the
// report says what was replayed, and a wrong kernel is still caught.
TEST(Harness, LeftoverReplayIsLoudAndKeepsTheRandomCases) {
  const OpDef& op = find_op("relu");
  ScopedEnv env("UOPS_ORACLE_REPLAY", "relu f32 seed=1 x=[1,1]");
  CheckReport right = check(op, canonical(op, DType::f32), {.trials = 20});
  EXPECT_TRUE(right.passed);
  EXPECT_EQ(right.cases, 21);
  EXPECT_EQ(right.replayed, 1);
  EXPECT_NE(right.message().find("UOPS_ORACLE_REPLAY='relu f32 seed=1 x=[1,1]'"), std::string::npos)
      << right.message();
  CheckReport wrong = check(op, wrong_past_10(DType::f32), {.trials = 50});
  EXPECT_FALSE(wrong.passed) << "the replayed case passes; the random ones must still run";
  EXPECT_NE(wrong.message().find("UOPS_ORACLE_REPLAY"), std::string::npos);
}

TEST(Harness, ReplayAppliesOnlyToItsDtype) {
  const OpDef& op = find_op("relu");
  ScopedEnv env("UOPS_ORACLE_REPLAY", "relu f32 seed=1 x=[1,1]");
  CheckReport f64 = check(op, canonical(op, DType::f64), {.dtype = DType::f64, .trials = 5});
  EXPECT_TRUE(f64.passed) << f64.message();
  EXPECT_EQ(f64.replayed, 0);
  EXPECT_EQ(f64.cases, 5);
}

TEST(Harness, MalformedBudgetIsTheCallersError) {
  const OpDef& op = find_op("relu");
  ScopedEnv env("UOPS_MEMORY_BUDGET", "garbage");
  EXPECT_THROW(check(op, canonical(op, DType::f32), {.trials = 2}), Error);
}

// Shards of one run: disjoint cases whose union is the unsharded run's.
TEST(Harness, ShardsAreDisjointAndCoverTheRun) {
  const OpDef& op = find_op("relu");
  Implementation canon = canonical(op, DType::f32);
  auto seen = [&](int shard, int shards, std::multiset<std::string>& out) {
    Implementation recording = [&](const TensorMap& in, const ParamMap& p) {
      const Tensor& x = in.at("x");
      out.insert(x.shape_text() + std::string(x.bytes.begin(), x.bytes.end()));
      return canon(in, p);
    };
    return check(op, recording, {.trials = 30, .shard = shard, .shards = shards});
  };
  std::multiset<std::string> whole, joined;
  EXPECT_EQ(seen(0, 1, whole).cases, 30);
  int cases = 0;
  for (int k = 0; k < 3; ++k) {
    std::multiset<std::string> part;
    CheckReport r = seen(k, 3, part);
    cases += r.cases;
    EXPECT_EQ(r.cases, 10);
    for (auto& c : part) EXPECT_EQ(joined.count(c), 0u) << "shard " << k << " repeats a case";
    joined.insert(part.begin(), part.end());
  }
  EXPECT_EQ(cases, 30);
  EXPECT_EQ(joined, whole);
  EXPECT_THROW(check(op, canon, {.shard = 3, .shards = 3}), Error);
  EXPECT_THROW(check(op, canon, {.shard = 0, .shards = 0}), Error);
}

// The budget counts what a check holds (inputs, both outputs, the f64 reference), not only what
// the program's run allocates: relu 2000x2000 f32 runs in 32 MB but its check holds far more.
TEST(Harness, CheckCountsTheMemoryItHolds) {
  const OpDef& op = find_op("relu");
  set_memory_budget(40 << 20);
  CheckOptions one{.only = fixed_case(op, DType::f32, 1, {{"x", {2000, 2000}}}, {})};
  try {
    check(op, canonical(op, DType::f32), one);
    ADD_FAILURE() << "a check holding past the budget ran";
  } catch (const LimitError& e) {
    EXPECT_NE(std::string(e.what()).find("f64 reference"), std::string::npos) << e.what();
  }
  set_memory_budget(0);
}

// A user's kernel named like a backend is still the user's: no uopc line that would rerun
// uopc's kernel instead.
TEST(Harness, UserKernelNamedLikeABackendGetsNoUopcCommand) {
  CheckReport r = check(find_op("relu"), wrong_past_10(DType::f32), {.backend = "c"});
  ASSERT_FALSE(r.passed);
  EXPECT_TRUE(r.repro.empty()) << r.repro;
  EXPECT_EQ(r.message().find("reproduce:"), std::string::npos);
}

// The reproduction line survives a shell: a library path with a space and a ';' is one word.
TEST(Harness, ReproduceLineIsQuotedAsAShellWould) {
  OpDef op = find_op("relu");
  op.origin = OpOrigin::library;
  op.library = "/tmp/my ops;touch pwned/it's.so";
  CheckReport r = check(op, wrong_past_10(DType::f32), {.backend = "c", .uopc_backend = true});
  ASSERT_FALSE(r.passed);
  std::string cmd = "set -- " + r.repro.substr(5) + "; printf '%s\\n' \"$@\"";
  std::string quoted;
  for (char ch : cmd) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  FILE* sh = ::popen(("/bin/sh -c '" + quoted + "'").c_str(), "r");
  ASSERT_NE(sh, nullptr);
  std::vector<std::string> words;
  char line[4096];
  while (std::fgets(line, sizeof line, sh)) words.emplace_back(line, std::strlen(line) - 1);
  ::pclose(sh);
  ASSERT_GE(words.size(), 4u) << r.repro;
  EXPECT_EQ(words[0], "--ops");
  EXPECT_EQ(words[1], op.library) << r.repro;
  EXPECT_EQ(words[2], "check");
  EXPECT_EQ(words[3], "relu");
}

TEST(Harness, UserOpsHaveNoReference) {
  OpDef op = find_op("relu");
  op.origin = OpOrigin::user;
  EXPECT_FALSE(check(op, canonical(op, DType::f32), {.trials = 3}).has_reference);
}

// The GoogleTest macro fails with the report, replay line included.
TEST(Harness, ExpectOracleFailsWithTheReplay) {
  const OpDef& op = find_op("relu");
  Implementation wrong = wrong_past_10(DType::f32);
  EXPECT_NONFATAL_FAILURE(EXPECT_ORACLE(op, wrong, {.trials = 50}), "UOPS_ORACLE_REPLAY='relu f32");
  EXPECT_NONFATAL_FAILURE(EXPECT_ORACLE(op, wrong, {.trials = 0}), "trials must be at least 1");
  EXPECT_ORACLE(op, canonical(op, DType::f32));
}

}  // namespace
}  // namespace uops::oracle
