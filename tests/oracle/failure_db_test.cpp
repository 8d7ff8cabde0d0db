// The failure memory: a failing case is stored and replayed first; a stored case that passes is
// forgotten only after kForgetAfterPasses passes; an untrusted folder is refused and a corrupt,
// planted or oversized entry is skipped with a warning.
#include "uops/oracle/failure_db.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "uops/error.h"
#include "uops/oracle/harness.h"

namespace uops::oracle {
namespace {

namespace fs = std::filesystem;

Implementation wrong_past_10() {
  Implementation canon = canonical(find_op("relu"), DType::f32);
  return [canon](const TensorMap& in, const ParamMap& p) {
    TensorMap out = canon(in, p);
    Tensor& y = out.begin()->second;
    if (y.numel() > 10) y.set(y.numel() - 1, y.get(y.numel() - 1) + 1);
    return out;
  };
}

class FailureDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("uops_failure_db_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    for (auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".case") out.push_back(e.path());
    return out;
  }
  CheckReport run(const Implementation& impl, uint64_t seed) {
    return check(find_op("relu"), impl,
                 {.trials = 40, .seed = seed, .backend = "mine", .database = dir_.string()});
  }
  fs::path dir_;
};

TEST_F(FailureDbTest, AFailureIsStoredAndReplayedFirst) {
  CheckReport first = run(wrong_past_10(), 1);
  ASSERT_FALSE(first.passed);
  EXPECT_EQ(fs::status(dir_).permissions() & fs::perms::all, fs::perms::owner_all);
  ASSERT_EQ(entries().size(), 1u);
  // Another seed: the stored case fails at once, before any random case.
  CheckReport again = run(wrong_past_10(), 999);
  ASSERT_FALSE(again.passed);
  EXPECT_EQ(again.cases, 1);
  EXPECT_EQ(again.replayed, 1);
  EXPECT_EQ(again.original.shapes, first.shrunk.shapes);
  EXPECT_NE(again.message().find("failure database"), std::string::npos) << again.message();
  // Another implementation name has its own memory.
  CheckReport other = check(find_op("relu"), canonical(find_op("relu"), DType::f32),
                            {.trials = 5, .backend = "other", .database = dir_.string()});
  EXPECT_EQ(other.replayed, 0);
}

TEST_F(FailureDbTest, AFixedCaseIsForgottenAfterEnoughPasses) {
  ASSERT_FALSE(run(wrong_past_10(), 1).passed);
  Implementation right = canonical(find_op("relu"), DType::f32);
  for (int pass = 1; pass <= FailureDb::kForgetAfterPasses; ++pass) {
    CheckReport r = run(right, 7);
    EXPECT_TRUE(r.passed);
    EXPECT_EQ(r.replayed, 1) << "pass " << pass;
    EXPECT_EQ(entries().size(), pass < FailureDb::kForgetAfterPasses ? 1u : 0u) << pass;
  }
  EXPECT_EQ(run(right, 7).replayed, 0);
}

TEST_F(FailureDbTest, CorruptPlantedAndOversizedEntriesAreSkippedWithAWarning) {
  ASSERT_FALSE(run(wrong_past_10(), 1).passed);
  fs::path stored = entries().at(0);
  std::string good;
  {
    std::ifstream in(stored);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::ofstream(dir_ / "relu.mine.0000000000000001.case") << "uops-oracle-failure 1\nop relu\n"
                                                          << "implementation mine\npasses 0\n"
                                                          << "case relu f32 seed=1 x=[oops]\n";
  std::ofstream(dir_ / "relu.mine.0000000000000002.case") << std::string(100000, 'x');
  fs::path outside = dir_.string() + "_outside";
  std::ofstream(outside) << good;
  fs::create_symlink(outside, dir_ / "relu.mine.0000000000000003.case");
  CheckReport r = run(canonical(find_op("relu"), DType::f32), 3);
  fs::remove(outside);
  EXPECT_TRUE(r.passed) << r.message();
  EXPECT_EQ(r.replayed, 1);  // the good entry only
  std::string text = r.message();
  EXPECT_NE(text.find("0000000000000001.case"), std::string::npos) << text;
  EXPECT_NE(text.find("0000000000000002.case: 100000 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("0000000000000003.case"), std::string::npos) << text;
}

TEST_F(FailureDbTest, AnUntrustedFolderIsRefused) {
  fs::path real = dir_.string() + "_real";
  fs::create_directories(real);
  fs::create_symlink(real, dir_);
  EXPECT_THROW(run(wrong_past_10(), 1), Error);
  fs::remove(dir_);
  fs::remove(real);
  fs::create_directories(dir_);
  ::chmod(dir_.c_str(), 0777);
  try {
    run(wrong_past_10(), 1);
    ADD_FAILURE() << "a folder anyone can write was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writable by group or others"), std::string::npos);
  }
}

TEST_F(FailureDbTest, TheEnvironmentVariableNamesTheFolder) {
  ::setenv("UOPS_ORACLE_DB", dir_.c_str(), 1);
  CheckReport r = check(find_op("relu"), wrong_past_10(), {.trials = 40});
  ::unsetenv("UOPS_ORACLE_DB");
  ASSERT_FALSE(r.passed);
  EXPECT_EQ(entries().size(), 1u);
}

}  // namespace
}  // namespace uops::oracle
