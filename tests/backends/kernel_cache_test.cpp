// The kernel cache as an attacker and a careless user would try it: a planted object never runs,
// a corrupt one is rebuilt, stale temporaries go, failures say why, and CC may carry words.
#include "backends/kernel_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

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
  // loaded once is never mapped again): 0 when that worked, 2 for an Error, 128 + the signal
  // when it crashed or hung for a minute.
  static int compile_in_child(const Program& p, const CCompileOptions& options = {}) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(60);
      try {
        compile_c(p, options);
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
  // The names of the compiler identities stored in the cache.
  std::set<std::string> compiler_ids() const {
    std::set<std::string> ids;
    for (auto& e : fs::directory_iterator(cache_))
      if (e.path().extension() == ".id") ids.insert(e.path().filename().string());
    return ids;
  }
  static std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

// A folder above the cache that another user could write or owns, or a link on the path that
// another user owns, would let them put a tree of theirs where the cache is: refused with an
// Error naming the folder. A sticky folder (as /tmp) and a link of the caller's are fine.
TEST_F(KernelCacheTrust, CacheBelowAnUnsafeFolderIsRefused) {
  Program p = program();
  fs::path parent = dir_ / "parent";
  fs::create_directories(parent);
  setenv("UOPS_CACHE_DIR", (parent / "cache").c_str(), 1);
  auto refused = [&](const std::string& why) {
    try {
      compile_c(p);
      ADD_FAILURE() << "used a cache below an unsafe folder: " << why;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  fs::permissions(parent, fs::perms(0777), fs::perm_options::replace);
  refused("its parent " + parent.string() +
          " is writable by group or others without the sticky bit (mode 0777)");
  fs::permissions(parent, fs::perms(0775), fs::perm_options::replace);
  refused("(mode 0775)");
  TensorMap want = interpret(p, input());
  fs::permissions(parent, fs::perms(01777), fs::perm_options::replace);
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p)->run(input()), 1e-5));
  fs::permissions(parent, fs::perms(0755), fs::perm_options::replace);
  fs::path link = dir_ / "link";
  fs::create_directory_symlink(parent, link);
  setenv("UOPS_CACHE_DIR", (link / "cache").c_str(), 1);
  EXPECT_TRUE(testing::same_outputs(want, compile_c(p)->run(input()), 1e-5));
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder and a link to another user";
  ASSERT_EQ(lchown(link.c_str(), 65534, 65534), 0);
  refused(link.string() + " is a symbolic link owned by another user (uid 65534)");
  setenv("UOPS_CACHE_DIR", (parent / "cache").c_str(), 1);
  ASSERT_EQ(chown(parent.c_str(), 65534, 65534), 0);
  refused("its parent " + parent.string() + " belongs to another user (uid 65534)");
}

// Root's cache lies below a folder another user may write (0777, no sticky bit). That user, in a
// loop, swaps the cache's parent for a tree of theirs, by rename and by a symbolic link, while
// root compiles and loads the kernel hundreds of times: their code must never run. (Before the
// whole path was checked and the object loaded from the bytes verified, some runs loaded it.)
TEST_F(KernelCacheTrust, SwappingAttackerNeverRunsItsCode) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run the attacker as another user (nobody)";
  struct passwd* nobody = getpwnam("nobody");
  if (!nobody) GTEST_SKIP() << "no user 'nobody' to run the attacker as";
  uid_t uid = nobody->pw_uid;
  gid_t gid = nobody->pw_gid;
  Program p = program();
  ASSERT_EQ(compile_in_child(p), 0);  // the kernel's files, copied below the open folder
  fs::path shared = dir_ / "shared", real = shared / "p" / "cache";
  fs::create_directories(real);
  fs::permissions(real, fs::perms::owner_all, fs::perm_options::replace);
  for (auto& e : fs::directory_iterator(cache_))
    fs::copy_file(e.path(), real / e.path().filename());
  std::string so_name = cached_object().filename().string();
  fs::permissions(shared, fs::perms::all, fs::perm_options::replace);
  fs::path marker = dir_ / "attacker-code-ran";
  std::string evil = slurp(planted_object(marker));
  std::string p_dir = (shared / "p").string(), theirs = (shared / "q").string(),
              link = (shared / "l").string(), cache = theirs + "/cache",
              planted = cache + "/" + so_name, fresh = cache + "/new";
  pid_t attacker = fork();
  if (attacker == 0) {  // only system calls from here: the parent may have threads
    if (setgid(gid) != 0 || setuid(uid) != 0) _exit(1);
    if (mkdir(theirs.c_str(), 0755) != 0 || mkdir(cache.c_str(), 0755) != 0 ||
        symlink("q", link.c_str()) != 0)
      _exit(1);
    for (;;) {
      // Their object at the kernel's name, again each time (a run may have removed it).
      int fd = open(fresh.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || write(fd, evil.data(), evil.size()) != ssize_t(evil.size())) _exit(1);
      close(fd);
      rename(fresh.c_str(), planted.c_str());
      // Their folder in the place of root's and back, atomically, then their link.
      renameat2(AT_FDCWD, p_dir.c_str(), AT_FDCWD, theirs.c_str(), RENAME_EXCHANGE);
      renameat2(AT_FDCWD, p_dir.c_str(), AT_FDCWD, theirs.c_str(), RENAME_EXCHANGE);
      renameat2(AT_FDCWD, p_dir.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
      renameat2(AT_FDCWD, p_dir.c_str(), AT_FDCWD, link.c_str(), RENAME_EXCHANGE);
    }
  }
  ASSERT_GT(attacker, 0);
  setenv("UOPS_CACHE_DIR", real.c_str(), 1);
  int runs = 300, run = 0, loaded = 0, refused = 0;
  for (; run < runs && !fs::exists(marker); ++run) {
    int rc = compile_in_child(p);
    loaded += rc == 0;
    refused += rc == 2;
  }
  EXPECT_EQ(waitpid(attacker, nullptr, WNOHANG), 0) << "the attacker stopped swapping";
  kill(attacker, SIGKILL);
  waitpid(attacker, nullptr, 0);
  EXPECT_FALSE(fs::exists(marker)) << "the attacker's code ran as root, in run " << run;
  EXPECT_EQ(refused, runs) << loaded << " runs loaded a kernel from below an open folder";
}

// A FIFO at an object or its digest hung every run; a folder there failed every run. Each is now
// replaced by the rebuilt file, and a folder at another cache file (a wavefront's `.times`) too.
TEST_F(KernelCacheTrust, SpecialFilesInTheCacheAreReplaced) {
  Program p = program();
  ASSERT_EQ(compile_in_child(p), 0);
  fs::path so = cached_object(), digest = so.string() + ".sha256";
  for (int how = 0; how < 4; ++how) {
    fs::path at = how % 2 ? digest : so;
    fs::remove(at);
    if (how < 2) {
      ASSERT_EQ(mkfifo(at.c_str(), 0600), 0);
    } else {
      fs::create_directories(at / "inside");
      std::ofstream(at / "inside" / "file") << "x";
    }
    EXPECT_EQ(compile_in_child(p), 0) << "case " << how;
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(at))) << "case " << how;
  }
  fs::path times = cache_ / "key.times";
  fs::create_directories(times / "inside");
  EXPECT_FALSE(read_artifact(times));
  store_artifact(times, "1 2 3\n");
  EXPECT_EQ(read_artifact(times), std::optional<std::string>("1 2 3\n"));
}

// A compiler probe that failed for a reason other than the compiler lacking the feature (a full
// disk, a compiler killed) was cached for good as "no OpenMP, no libmvec". Now it is an Error,
// nothing is stored and the next run probes again; a compiler that lacks OpenMP is still cached.
TEST_F(KernelCacheTrust, FailedProbeIsNotCached) {
  fs::path cc = dir_ / "fake-cc";
  std::ofstream(cc)
      << "#!/bin/sh\n"
         "case \" $* \" in *' --version '*) exec cc \"$@\";; esac\n"
         "dir=$(dirname \"$0\")\n"
         "if [ -e \"$dir/full\" ]; then\n"
         "  echo 'ld: final link failed: No space left on device' >&2; exit 1\n"
         "fi\n"
         "case \" $* \" in *' -fopenmp '*)\n"
         "  if [ -e \"$dir/kill\" ]; then kill -9 $$; fi\n"
         "  if [ -e \"$dir/no-openmp\" ]; then\n"
         "    echo \"cc: error: unrecognized command-line option '-fopenmp'\" >&2; exit 1\n"
         "  fi;;\n"
         "*' -fallow-store-data-races '*)\n"
         "  if [ -e \"$dir/no-races\" ]; then\n"
         "    echo \"cc: error: unrecognized command-line option '-fallow-store-data-races'\" >&2\n"
         "    exit 1\n"
         "  fi;;\n"
         "esac\n"
         "exec cc \"$@\"\n";
  fs::permissions(cc, fs::perms::owner_all, fs::perm_options::replace);
  CCompileOptions o;
  o.compiler = cc.string();
  Program p = program();
  for (const char* failure : {"full", "kill"}) {
    std::ofstream(dir_ / failure) << "";
    EXPECT_EQ(compile_in_child(p, o), 2) << failure;
    EXPECT_TRUE(compiler_ids().empty()) << failure << ": a failed probe was cached";
    if (std::string(failure) == "full") {
      try {
        compile_c(p, o);
        ADD_FAILURE() << "no error on a full disk";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("nothing is cached"), std::string::npos) << e.what();
      }
    }
    fs::remove(dir_ / failure);
  }
  // Space freed, the next run probes again and finds what the compiler can do.
  auto takes = [&](const std::string& flag) {
    std::string probe = "cc " + flag + " -shared -fPIC -x c /dev/null -o '" +
                        (dir_ / "probe.so").string() + "' > /dev/null 2>&1";
    return std::system(probe.c_str()) == 0;
  };
  bool openmp = takes("-fopenmp"), store_races = takes("-fallow-store-data-races");
  EXPECT_EQ(compile_in_child(p, o), 0);
  ASSERT_EQ(compiler_ids().size(), 1u);
  EXPECT_EQ(slurp(cache_ / *compiler_ids().begin())[0], openmp ? '1' : '0');
  EXPECT_EQ(slurp(cache_ / *compiler_ids().begin())[2], store_races ? '1' : '0');

  // A compiler that lacks OpenMP and -fallow-store-data-races (another identity: the script
  // changed) is cached as such, and its kernels compile without them.
  for (auto& id : compiler_ids()) fs::remove(cache_ / id);
  std::ofstream(cc, std::ios::app) << "# another compiler\n";
  std::ofstream(dir_ / "no-openmp") << "";
  std::ofstream(dir_ / "no-races") << "";
  EXPECT_EQ(compile_in_child(p, o), 0);
  ASSERT_EQ(compiler_ids().size(), 1u);
  EXPECT_EQ(slurp(cache_ / *compiler_ids().begin()).substr(0, 3), "000");
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
  o.compiler = "/bin/true";  // exits 0, writes nothing: not even the OpenMP probe
  try {
    compile_c(program(), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot build a shared object"), std::string::npos)
        << e.what();
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
