// The kernel cache as an attacker and a careless user would try it: a planted object never runs,
// a corrupt one is rebuilt, stale temporaries go, failures say why, and CC may carry words.
#include "backends/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/compare.h"
#include "uops/backends/c/c_backend.h"
#include "uops/uops.h"

namespace uops {
namespace {

namespace fs = std::filesystem;

// A cache folder of the test's own, removed afterwards.
class KernelCacheTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("uops-trust-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    cache_ = dir_ / "cache";
    setenv("UOPS_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("UOPS_CACHE_DIR");
    std::error_code ec;
    fs::permissions(cache_, fs::perms::owner_all, fs::perm_options::replace, ec);
    fs::remove_all(dir_);
  }

  static Program program() {
    Graph g;
    g.output("y", g.unary(UnaryOp::exp, g.input("x", 1, DType::f32)));
    return lower(g);
  }
  static TensorMap input() {
    Tensor x(DType::f32, {5});
    for (int i = 0; i < 5; ++i) x.set(i, 0.5 * i);
    return {{"x", x}};
  }
  // Compiles and loads `p` in a child process, as a later run would (a kernel this process has
  // loaded once is found by name and never mapped again): 0 when that worked, 2 for an Error,
  // 128 + the signal when it crashed.
  static int compile_in_child(const Program& p) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        compile_c(p);
        _exit(0);
      } catch (const Error&) {
        _exit(2);
      } catch (...) {
        _exit(3);
      }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // The one compiled kernel in the cache.
  fs::path cached_object() const {
    fs::path found;
    for (auto& e : fs::directory_iterator(cache_))
      if (e.path().extension() == ".so") found = e.path();
    return found;
  }
  // A shared object whose constructor creates `marker` when it is loaded.
  fs::path planted_object(const fs::path& marker) const {
    fs::path src = dir_ / "evil.c", so = dir_ / "evil.so";
    std::ofstream(src) << "#include <stdio.h>\n__attribute__((constructor)) static void run(void) "
                          "{ FILE* f = fopen(\""
                       << marker.string() << "\", \"w\"); if (f) fclose(f); }\n";
    std::string cmd = "cc -shared -fPIC -o '" + so.string() + "' '" + src.string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return so;
  }

  fs::path dir_, cache_;
};

TEST_F(KernelCacheTrust, FolderIsCreatedPrivate) {
  kernel_cache_dir();
  EXPECT_EQ(fs::status(cache_).permissions() & fs::perms::all, fs::perms::owner_all);
}

// Another local user who may write the folder swaps in an object of theirs: it must never run.
// Another local user who may write the folder swaps in an object of theirs: it must never run.
TEST_F(KernelCacheTrust, PlantedObjectInAnOpenFolderNeverRuns) {
  Program p = program();
  ASSERT_EQ(compile_in_child(p), 0);
  fs::path so = cached_object(), marker = dir_ / "planted-code-ran";
  ASSERT_FALSE(so.empty());
  fs::copy_file(planted_object(marker), so, fs::copy_options::overwrite_existing);
  fs::permissions(cache_, fs::perms::all, fs::perm_options::replace);  // 0777
  EXPECT_EQ(compile_in_child(p), 2);                                   // refused with an Error
  EXPECT_FALSE(fs::exists(marker));
  try {
    compile_c(p);
    FAIL() << "an open cache folder was used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writable by group or others (mode 0777)"),
              std::string::npos)
        << e.what();
  }

  // Made private again, the folder still holds the planted bytes: they do not match the digest
  // stored with the kernel, so they are deleted and the kernel rebuilt.
  fs::permissions(cache_, fs::perms::owner_all, fs::perm_options::replace);
  EXPECT_TRUE(testing::same_outputs(interpret(p, input()), compile_c(p)->run(input()), 1e-5));
  EXPECT_FALSE(fs::exists(marker));
}

// The planted bytes with a matching digest, but in a file others may write, or behind a link.
TEST_F(KernelCacheTrust, ObjectWritableByOthersOrLinkedIsNotLoaded) {
  Program p = program();
  for (int how = 0; how < 2; ++how) {
    ASSERT_EQ(compile_in_child(p), 0);
    fs::path so = cached_object(), marker = dir_ / "planted-code-ran";
    fs::path evil = planted_object(marker);
    std::ifstream in(evil, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    store_artifact(so, bytes);
    if (how == 0) {
      fs::permissions(so, fs::perms::group_write, fs::perm_options::add);
    } else {
      fs::remove(so);
      fs::create_symlink(evil, so);
    }
    EXPECT_EQ(compile_in_child(p), 0) << how;
    EXPECT_FALSE(fs::exists(marker)) << how;
    EXPECT_FALSE(fs::is_symlink(so)) << how;
  }
  EXPECT_TRUE(testing::same_outputs(interpret(p, input()), compile_c(p)->run(input()), 1e-5));
}

// A truncated, overwritten or empty object crashed every later run (SIGBUS, exit 135) or failed
// it forever ("file too short"); now it is rebuilt and the run succeeds.
TEST_F(KernelCacheTrust, CorruptObjectIsRebuilt) {
  Program p = program();
  ASSERT_EQ(compile_in_child(p), 0);
  fs::path so = cached_object();
  for (int damage = 0; damage < 3; ++damage) {
    if (damage == 0) fs::resize_file(so, 4000);
    if (damage == 1) {
      std::fstream f(so, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(64);
      f << std::string(200, 'x');
    }
    if (damage == 2) fs::resize_file(so, 0);
    EXPECT_EQ(compile_in_child(p), 0) << "damage " << damage;
    EXPECT_GT(fs::file_size(so), 4000u) << "damage " << damage;
  }
  EXPECT_TRUE(testing::same_outputs(interpret(p, input()), compile_c(p)->run(input()), 1e-5));
}

TEST_F(KernelCacheTrust, StaleTemporariesAreRemoved) {
  fs::create_directories(cache_);
  pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // a process that is gone
  auto old = fs::file_time_type::clock::now() - std::chrono::minutes(5);
  auto make = [&](const std::string& name, bool aged) {
    std::ofstream(cache_ / name) << "partial";
    if (aged) fs::last_write_time(cache_ / name, old);
    return cache_ / name;
  };
  std::string dead = std::to_string(child), alive = std::to_string(::getpid());
  fs::path stale = make("k.so.tmp." + dead + ".ab.0", true);
  fs::path fresh = make("k.so.tmp." + dead + ".ab.1", false);  // a moment old: left
  fs::path running = make("k.so.tmp." + alive + ".ab.2", true);
  fs::path ancient = make("k.c.tmp." + alive + ".ab.3", false);
  fs::last_write_time(ancient, fs::file_time_type::clock::now() - std::chrono::hours(25));
  kernel_cache_dir();
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_TRUE(fs::exists(running));
  EXPECT_FALSE(fs::exists(ancient));
}

TEST_F(KernelCacheTrust, FailuresSayWhy) {
  CCompileOptions o;
  o.compiler = "/bin/true";  // exits 0, writes nothing
  try {
    compile_c(program(), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exited 0 but wrote no"), std::string::npos) << e.what();
  }
  try {
    write_file_atomically(dir_ / "no-such-folder" / "f", "bytes");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos)
        << e.what();
  }
  for (auto& e : fs::directory_iterator(cache_))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

// CC may name a launcher and carry flags, as make and CMake take it, split without a shell.
TEST_F(KernelCacheTrust, CompilerCommandMayHaveWords) {
  Program p = program();
  TensorMap want = interpret(p, input());
  for (std::string cc : {"env cc", "cc -m64", "  cc  "}) {
    CCompileOptions o;
    o.compiler = cc;
    EXPECT_TRUE(testing::same_outputs(want, compile_c(p, o)->run(input()), 1e-5)) << cc;
  }
}

}  // namespace
}  // namespace uops
