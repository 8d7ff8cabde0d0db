// uopc run end to end on hand-made .npy files, and its handling of bad input: exit code 2, a
// one-line error and no output file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "npy.h"

namespace uops {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

class Uopc : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("uopc_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string tensor(const std::string& name, DType d, std::vector<int64_t> shape,
                     std::vector<double> values) {
    Tensor t(d, shape);
    for (size_t i = 0; i < values.size(); ++i) t.set(int64_t(i), values[i]);
    npy::write(path(name), t);
    return path(name);
  }

  Result uopc(const std::string& args) {
    std::string cmd =
        std::string(UOPC_PATH) + " " + args + " > " + path("stdout") + " 2> " + path("stderr");
    int status = std::system(cmd.c_str());
    auto slurp = [](const std::string& p) {
      std::ifstream in(p);
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    };
    return {WEXITSTATUS(status), slurp(path("stdout")), slurp(path("stderr"))};
  }

  // Exit code 2, one line on stderr naming `needle`, and no output file.
  void expect_user_error(const std::string& args, const std::string& needle) {
    Result r = uopc(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("out.npy"))) << args;
    for (auto& entry : fs::directory_iterator(dir_))
      EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos);
  }

  fs::path dir_;
};

TEST_F(Uopc, RunMatmulByHand) {
  std::string a = tensor("a.npy", DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string b = tensor("b.npy", DType::f32, {3, 2}, {7, 8, 9, 10, 11, 12});
  for (std::string backend : {"interp", "c"}) {
    Result r = uopc("run matmul --backend " + backend + " --in a=" + a + " --in b=" + b +
                    " --out c=" + path("c.npy"));
    ASSERT_EQ(r.code, 0) << r.err;
    Tensor c = npy::read(path("c.npy"));
    EXPECT_EQ(c.dtype, DType::f32);
    ASSERT_EQ(c.shape, (std::vector<int64_t>{2, 2}));
    // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
    EXPECT_EQ(c.get(0), 58);
    EXPECT_EQ(c.get(1), 64);
    EXPECT_EQ(c.get(2), 139);
    EXPECT_EQ(c.get(3), 154);
  }
}

TEST_F(Uopc, RunGradientOfMatmulByHand) {
  std::string a = tensor("a.npy", DType::f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string b = tensor("b.npy", DType::f64, {3, 2}, {7, 8, 9, 10, 11, 12});
  std::string dc = tensor("dc.npy", DType::f64, {2, 2}, {1, 0, 0, 2});
  Result r = uopc("run matmul --grad --in a=" + a + " --in b=" + b + " --in dc=" + dc +
                  " --out da=" + path("da.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  Tensor da = npy::read(path("da.npy"));
  // da = dc · bᵀ = [1 0; 0 2] · [7 9 11; 8 10 12] = [7 9 11; 16 20 24]
  std::vector<double> got;
  for (int64_t i = 0; i < da.numel(); ++i) got.push_back(da.get(i));
  EXPECT_EQ(got, (std::vector<double>{7, 9, 11, 16, 20, 24}));
}

TEST_F(Uopc, RunConvWithParams) {
  std::string x = tensor("x.npy", DType::f64, {1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::string w = tensor("w.npy", DType::f64, {1, 2, 2, 1}, {1, 1, 1, 1});
  Result r = uopc("run conv2d --param stride=2 --param pad=1 --param dilation=1 --in x=" + x +
                  " --in w=" + w + " --out y=" + path("y.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  Tensor y = npy::read(path("y.npy"));
  // OH = (3 + 2 - 1 - 1) / 2 + 1 = 2; windows start at -1 and 1.
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 2, 2, 1}));
  EXPECT_EQ(y.get(0), 1);
  EXPECT_EQ(y.get(1), 2 + 3);
  EXPECT_EQ(y.get(2), 4 + 7);
  EXPECT_EQ(y.get(3), 5 + 6 + 8 + 9);
}

TEST_F(Uopc, BadInputsAreOneLineErrorsWithExitCode2) {
  std::string a = tensor("a.npy", DType::f32, {2, 3}, {});
  std::string b = tensor("b.npy", DType::f32, {3, 2}, {});
  std::string b64 = tensor("b64.npy", DType::f64, {3, 2}, {});
  std::string b_bad = tensor("bbad.npy", DType::f32, {4, 2}, {});
  std::string rank3 = tensor("r3.npy", DType::f32, {3, 2, 1}, {});
  std::string out = " --out c=" + path("out.npy");
  expect_user_error("run matmul --in a=" + a + out, "missing input 'b'");
  expect_user_error("run matmul --in a=" + a + " --in b=" + b64 + out, "f64");
  expect_user_error("run matmul --in a=" + a + " --in b=" + rank3 + out, "rank");
  expect_user_error("run matmul --in a=" + a + " --in b=" + b_bad + out, "3");
  expect_user_error("run matmul --in a=" + a + " --in b=" + b + " --out z=" + path("out.npy"),
                    "no output 'z'");
  std::ofstream(path("corrupt.npy")) << "garbage";
  expect_user_error("run matmul --in a=" + a + " --in b=" + path("corrupt.npy") + out,
                    "corrupt.npy");
  std::string x = tensor("x.npy", DType::f32, {1, 4, 4, 1}, {});
  std::string w = tensor("w.npy", DType::f32, {1, 2, 2, 1}, {});
  expect_user_error("run conv2d --param stride=1 --param pad=0 --in x=" + x + " --in w=" + w +
                        " --out y=" + path("out.npy"),
                    "dilation");
  expect_user_error("run conv2d --param stride=x --in x=" + x + " --in w=" + w + out,
                    "not an integer");
  expect_user_error("run nope --in x=" + x + out, "unknown op");
  expect_user_error("run gather --in table=" + a + " --in idx=" + b + " --out y=" + path("out.npy"),
                    "i32");
}

// Runs uopc with `args` in a child whose pid is known before it starts: `before(pid)` runs
// first, as an attacker who guesses names from the pid would. Returns the exit status and
// fills the child's peak resident memory in KiB.
int run_child(const std::vector<std::string>& args, const std::function<void(pid_t)>& before,
              long* peak_kib = nullptr) {
  int go[2];
  if (pipe(go) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(go[1]);
    char c;
    if (read(go[0], &c, 1) != 1) _exit(126);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    std::vector<char*> argv = {const_cast<char*>(UOPC_PATH)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(UOPC_PATH, argv.data());
    _exit(127);
  }
  close(go[0]);
  before(pid);
  if (write(go[1], "x", 1) != 1) return -1;
  close(go[1]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  if (peak_kib) *peak_kib = usage.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// `uopc run --out y=DIR/o.npy` wrote DIR/o.npy.tmp.<pid> with a plain open: a link planted at
// that name was followed and its target overwritten. Temporaries are now created exclusively
// under unpredictable names, and the target stays as it was.
TEST_F(Uopc, LinkAtTheTemporaryNameIsNotFollowed) {
  std::string x = tensor("x.npy", DType::f32, {2, 3}, {1, -2, 3, -4, 5, -6});
  fs::path victim = path("victim"), out = path("o.npy");
  std::ofstream(victim) << "precious";
  int code = run_child(
      {"run", "relu", "--in", "x=" + x, "--out", "y=" + out.string()},
      [&](pid_t pid) { fs::create_symlink(victim, out.string() + ".tmp." + std::to_string(pid)); });
  EXPECT_EQ(code, 0);
  std::ifstream in(victim);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "precious");
  EXPECT_EQ(npy::read(out.string()).get(2), 3.0);
}

// With several outputs, none is put in place unless all are written, and no temporary stays.
TEST_F(Uopc, FailedOutputLeavesNoFile) {
  std::string a = tensor("a.npy", DType::f32, {2, 2}, {1, 2, 3, 4});
  std::string b = tensor("b.npy", DType::f32, {2, 2}, {5, 6, 7, 8});
  std::string dy = tensor("dy.npy", DType::f32, {2, 2}, {1, 1, 1, 1});
  Result r = uopc("run matmul --grad --in a=" + a + " --in b=" + b + " --in dc=" + dy +
                  " --out da=" + path("da.npy") + " --out db=" + path("missing/db.npy"));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("No such file or directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("da.npy")));
  for (auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

// A 144-byte file whose header claims 10^9 f32 elements made uopc allocate and zero 3.9 GB
// before it noticed the data was short; the size is now checked first.
TEST_F(Uopc, LyingHeaderAllocatesNothing) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  {
    std::ofstream f(path("lie.npy"), std::ios::binary);
    f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8)
      << header << std::string(16, '\0');
  }
  // Measured against a run on a small valid file, since sanitizers alone take 100 MB or more
  // (a release build peaks at about 40 MB either way).
  std::string x = tensor("x.npy", DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  long base_kib = 0, peak_kib = 0;
  EXPECT_EQ(run_child(
                {"run", "relu", "--in", "x=" + x, "--out", "y=" + path("y.npy")}, [](pid_t) {},
                &base_kib),
            0);
  int code = run_child(
      {"run", "relu", "--in", "x=" + path("lie.npy"), "--out", "y=" + path("z.npy")}, [](pid_t) {},
      &peak_kib);
  EXPECT_EQ(code, 2);
  EXPECT_LT(peak_kib, base_kib + 50 * 1024) << "peak resident memory in KiB";
  EXPECT_LT(peak_kib, 1024 * 1024);
  expect_user_error("run relu --in x=" + path("lie.npy") + " --out y=" + path("out.npy"),
                    "holds 16 bytes of data, [1000000000] f32 needs 4000000000");
}

// pad=100000 asked for a 298 GiB output and died with bad_alloc (exit 3).
TEST_F(Uopc, RunPastTheMemoryBudgetIsAClearError) {
  std::string x = tensor("x.npy", DType::f32, {1, 5, 5, 3}, {});
  std::string w = tensor("w.npy", DType::f32, {2, 3, 3, 3}, {});
  std::string args =
      "run conv2d --param stride=1 --param pad=100000 --param dilation=1 --in x=" + x +
      " --in w=" + w + " --out y=" + path("out.npy");
  expect_user_error(args,
                    "tensor 'y' of shape [1, 200003, 200003, 2] f32 needs 298.0 GiB (the run "
                    "298.0 GiB), past the memory budget");
  // The budget can be lowered (and raised) by an option and by the environment.
  std::string small = "run conv2d --param stride=1 --param pad=10 --param dilation=1 --in x=" + x +
                      " --in w=" + w + " --out y=" + path("out.npy");
  expect_user_error(small + " --memory-budget 1K", "past the memory budget of 1.0 KiB");
  setenv("UOPS_MEMORY_BUDGET", "2K", 1);
  expect_user_error(small, "past the memory budget of 2.0 KiB");
  unsetenv("UOPS_MEMORY_BUDGET");
  EXPECT_EQ(uopc(small).code, 0);
}

TEST_F(Uopc, CheckPrintsATableAndReplaysOneCase) {
  Result r = uopc("check matmul conv2d --backend interp --trials 5 --seed 3");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("conv2d"), std::string::npos);
  EXPECT_NE(r.out.find("4 checks, 0 failed"), std::string::npos) << r.out;
  // Without --backend every backend that can run here is checked: the C backend always can.
  r = uopc("check matmul --trials 2");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("matmul             c "), std::string::npos) << r.out;
  r = uopc(
      "check conv2d --backend interp --dtype f64 --seed 9 --trials 1 --shape x=1,5,4,2 "
      "--shape w=3,2,3,2 "
      "--param stride=2 --param pad=3 --param dilation=2");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 checks, 0 failed"), std::string::npos) << r.out;
  r = uopc(
      "check conv2d --shape x=1,5,4,2 --shape w=3,2,3,3 --param stride=1 --param pad=0 "
      "--param dilation=1");
  EXPECT_EQ(r.code, 2) << r.err;
}

// A hand-written CUDA kernel on the emulation: a correct one passes; a wrong one fails with the
// detector's report and a command that reruns the shrunk case on the same file, which fails again.
TEST_F(Uopc, CheckKernelReportsAndItsReplayCommandReruns) {
  std::string dir = CUDA_KERNELS_DIR;
  std::string rule = " --args x,y,x_n0,x_n1 --grid x_n0 --block 128 --target emulation";
  Result r = uopc("check-kernel softmax --cuda " + dir +
                  "/softmax_warp.cu --entry 'softmax_warp<128>'" + rule + " --trials 20");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cuda-emulation"), std::string::npos) << r.out;
  r = uopc("check-kernel softmax --cuda " + dir +
           "/softmax_shared_one_short.cu --entry 'softmax_warp<128>'" + rule);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("out of bounds: write of shared memory"), std::string::npos) << r.out;
  size_t at = r.out.find("reproduce: uopc ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string again = r.out.substr(at + 16, r.out.find('\n', at) - at - 16);
  Result replayed = uopc(again);
  EXPECT_EQ(replayed.code, 1) << again << "\n" << replayed.out << replayed.err;
  EXPECT_NE(replayed.out.find("out of bounds"), std::string::npos) << replayed.out;
  EXPECT_NE(replayed.out.find("1 checks, 1 failed"), std::string::npos) << replayed.out;
  // A rule that is no expression is the caller's error.
  r = uopc("check-kernel softmax --cuda " + dir + "/softmax_warp.cu --entry 'softmax_warp<128>'" +
           " --args x,y,x_n0,x_n1 --grid 'x_n0 +' --block 128");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("grid"), std::string::npos) << r.err;
}

// A shared library of ops (examples/rmsnorm_ops.cpp) loaded with --ops: every command takes
// its op.
TEST_F(Uopc, OpLibraryOpsWorkInEveryCommand) {
  std::string ops = std::string("--ops ") + OP_LIBRARY_PATH + " ";
  Result r = uopc(ops + "list");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rmsnorm            inputs: x[2], w[1]"), std::string::npos) << r.out;
  r = uopc(ops + "check rmsnorm --backend interp,c --trials 30");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("4 checks, 0 failed"), std::string::npos) << r.out;
  r = uopc(ops +
           "check rmsnorm --backend c --dtype f64 --seed 4 --trials 1 --shape x=3,17 "
           "--shape w=17");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 checks, 0 failed"), std::string::npos) << r.out;
  r = uopc(ops + "check rmsnorm --trials 1 --shape x=3,17 --shape w=16");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("must equal axis x.1"), std::string::npos) << r.err;
  for (auto cmd : {"show rmsnorm", "show rmsnorm --grad", "stats rmsnorm --json",
                   "emit rmsnorm --target c", "dot rmsnorm"}) {
    r = uopc(ops + cmd);
    EXPECT_EQ(r.code, 0) << cmd << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << cmd;
  }
  std::string x = tensor("x.npy", DType::f32, {1, 2}, {3, 4});
  std::string w = tensor("w.npy", DType::f32, {2}, {1, 2});
  r = uopc(ops + "run rmsnorm --in x=" + x + " --in w=" + w + " --out y=" + path("y.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  Tensor y = npy::read(path("y.npy"));
  double rms = std::sqrt((9.0 + 16.0) / 2 + 1e-6);
  EXPECT_NEAR(y.get(0), 3 / rms, 1e-5);
  EXPECT_NEAR(y.get(1), 8 / rms, 1e-5);
  // Given twice, loaded once; without it the op is unknown; a missing library is one line.
  EXPECT_EQ(uopc(ops + ops + "list").code, 0);
  EXPECT_EQ(uopc("show rmsnorm").code, 2);
  r = uopc("--ops " + path("nope.so") + " list");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot load op library"), std::string::npos) << r.err;
  std::ofstream(path("bogus.so")) << "not a library";
  EXPECT_EQ(uopc("--ops " + path("bogus.so") + " list").code, 2);
}

// Issue 18: a case past any sensible size ends at once with a clear message (it used to grow to
// 13 GB while shrinking); --trials 0 and a dilation of 0 are refused with one line.
TEST_F(Uopc, HugeAndInvalidCasesAreRefused) {
  auto start = std::chrono::steady_clock::now();
  Result r = uopc(
      "check conv2d --backend interp --shape x=1,5,5,3 --shape w=2,3,3,3 --param stride=1 "
      "--param pad=1000000000000000 --param dilation=1");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("too large a case"), std::string::npos) << r.err;
  r = uopc("check relu --trials 0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("1 to 1000000000"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("e+308"), std::string::npos) << r.err;
  r = uopc(
      "check conv2d --backend interp --shape x=1,5,5,3 --shape w=2,3,3,3 --param stride=1 "
      "--param pad=0 --param dilation=0");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("dilation must be at least 1, not 0"), std::string::npos) << r.err;
  std::string x = tensor("x.npy", DType::f32, {1, 5, 5, 3}, {});
  std::string w = tensor("w.npy", DType::f32, {2, 3, 3, 3}, {});
  expect_user_error(
      "run conv2d --in x=" + x + " --in w=" + w +
          " --param stride=1 --param pad=0 --param dilation=-1 --out y=" + path("out.npy"),
      "dilation must be at least 1, not -1");
}

TEST_F(Uopc, StatsJsonHasTheDocumentedSchema) {
  Result r = uopc("stats conv2d --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["op"], "conv2d");
  EXPECT_EQ(j["grad"], false);
  EXPECT_EQ(j["shape"]["x"], (std::vector<int64_t>{2, 16, 16, 8}));
  for (auto stage : {"before", "after"})
    for (auto key : {"blocks", "loops", "temporaries", "temporary_bytes"})
      EXPECT_TRUE(j[stage].contains(key)) << stage << "." << key;
  EXPECT_LE(j["after"]["blocks"].get<int>(), j["before"]["blocks"].get<int>());
}

TEST_F(Uopc, ListShowEmitDot) {
  Result r = uopc("list");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("cross_entropy"), std::string::npos);
  r = uopc("show softmax --stage optimized");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("tensor y f32"), std::string::npos);
  r = uopc("show matmul --grad --dump-after all");
  EXPECT_EQ(r.code, 0) << r.err;
  r = uopc("show matmul --dump-after nonsense");
  EXPECT_EQ(r.code, 2);
  r = uopc("emit relu --target c");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("#include <math.h>"), std::string::npos);
  r = uopc("dot conv2d --grad");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("digraph", 0), 0u);
}

// --saved: the gradient given its residuals, which reads them and not x.
TEST_F(Uopc, SavedGradientReadsResidualsNotX) {
  for (const char* cmd :
       {"show softmax --grad --saved", "emit softmax --target c --grad --saved"}) {
    Result r = uopc(cmd);
    EXPECT_EQ(r.code, 0) << cmd << ": " << r.err;
    EXPECT_NE(r.out.find("saved"), std::string::npos) << cmd;
    EXPECT_EQ(r.out.find("expf"), std::string::npos) << cmd;
  }
  Result r = uopc("show softmax --grad");
  EXPECT_NE(r.out.find("tensor x f32"), std::string::npos);
  r = uopc("show softmax --saved");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--saved requires --grad"), std::string::npos) << r.err;
}

TEST_F(Uopc, EmitFixPrintsParametersAsConstants) {
  Result r = uopc("emit avgpool2d --target c --fix k=2 --fix stride=2");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("const int64_t k = 2;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("const int64_t stride = 2;"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("params["), std::string::npos) << r.out;
  r = uopc("emit avgpool2d --target c --fix window=2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot fix unknown parameter 'window'"), std::string::npos) << r.err;
  r = uopc("emit avgpool2d --target c --fix k=two");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--fix k=two: 'two' is not an integer"), std::string::npos) << r.err;
}

// An op library whose uops_register_ops throws an int aborted uopc (SIGABRT, exit 134).
TEST_F(Uopc, OpLibraryThrowingANonExceptionIsAnError) {
  Result r = uopc(std::string("--ops ") + THROWING_OP_LIBRARY_PATH + " list");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(std::string("op library ") + THROWING_OP_LIBRARY_PATH +
                       ": uops_register_ops threw something that is not a std::exception"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace uops

namespace uops {
namespace {

// Issue 29 items 6, 7: a malformed budget is said once (exit 2), not blamed on every case; a
// replay of the f32 check leaves the f64 one alone.
TEST_F(Uopc, CheckEnvironmentIsValidatedAndApplied) {
  setenv("UOPS_MEMORY_BUDGET", "garbage", 1);
  Result r = uopc("check relu --backend interp --trials 2");
  unsetenv("UOPS_MEMORY_BUDGET");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("memory budget 'garbage'"), std::string::npos) << r.err;
  setenv("UOPS_ORACLE_REPLAY", "relu f32 seed=1 x=[1,1]", 1);
  r = uopc("check relu --backend interp --trials 3");
  unsetenv("UOPS_ORACLE_REPLAY");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("relu               interp  f32        4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("relu               interp  f64        3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: replayed UOPS_ORACLE_REPLAY"), std::string::npos) << r.out;
}

// Issue 29 items 4, 10: a folder, a device and an array past the budget are clear errors before
// any data is read.
TEST_F(Uopc, InputsAreReadWithinTheBudget) {
  expect_user_error("run relu --in x=" + dir_.string() + " --out y=" + path("out.npy"),
                    "is a folder");
  expect_user_error("run relu --in x=/dev/zero --out y=" + path("out.npy"), "bad magic");
  // A real 2.5 GB array (sparse on disk): refused by its header, in a few MB.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (25000, 25000), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  {
    std::ofstream f(path("big.npy"), std::ios::binary);
    f << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff) << char(header.size() >> 8)
      << header;
  }
  fs::resize_file(path("big.npy"), 10 + header.size() + 2500000000ull);
  // Measured against a run on a small file: sanitizers alone take 100 MB or more.
  std::string x = tensor("x.npy", DType::f32, {2, 3}, {1, 2, 3, 4, 5, 6});
  long base_kib = 0, peak_kib = 0;
  EXPECT_EQ(run_child(
                {"run", "relu", "--in", "x=" + x, "--out", "y=" + path("y.npy")}, [](pid_t) {},
                &base_kib),
            0);
  EXPECT_EQ(run_child(
                {"run", "relu", "--in", "x=" + path("big.npy"), "--out", "y=" + path("out.npy"),
                 "--memory-budget", "1G"},
                [](pid_t) {}, &peak_kib),
            2);
  EXPECT_LT(peak_kib, base_kib + 50 * 1024) << "peak resident memory in KiB";
  expect_user_error(
      "run relu --in x=" + path("big.npy") + " --out y=" + path("out.npy") + " --memory-budget 1G",
      "[25000, 25000] f32 needs 2.3 GiB, past the memory budget of 1.0 GiB");
  // The same array through a pipe is refused by its header too, never read whole.
  expect_user_error("run relu --in x=/dev/stdin --out y=" + path("out.npy") +
                        " --memory-budget 1G < " + path("big.npy"),
                    "past the memory budget of 1.0 GiB");
}

// Issue 29 item 3: the budget counts what a check holds. x=8000,8000 held 2.5 GB under a 1 GB
// budget (the run's 488 MiB was all it counted); x=30000,30000 (a 6.7 GiB run) went on to
// allocate tens of GB under an 8 GB one and died of bad_alloc.
TEST_F(Uopc, CheckCountsWhatItHolds) {
  auto start = std::chrono::steady_clock::now();
  expect_user_error(
      "check relu --backend interp --dtype f32 --shape x=8000,8000 "
      "--memory-budget 1G",
      "checking it holds 3.6 GiB");
  expect_user_error(
      "check relu --backend interp --dtype f32 --shape x=30000,30000 "
      "--memory-budget 8G",
      "past the memory budget of 8.0 GiB");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
}

// Shards of one campaign run disjoint trials and merge into the whole; the files are written
// atomically (a link at the report's name is replaced, never followed) and parse back.
TEST_F(Uopc, ShardsWriteJsonAndJunitAndMerge) {
  std::string whole = path("whole.json");
  Result r =
      uopc("check relu softmax --backend interp --dtype f32 --trials 12 --seed 5 --json " + whole);
  ASSERT_EQ(r.code, 0) << r.err;
  std::ofstream(path("victim")) << "precious";
  fs::create_symlink(path("victim"), path("s0.json"));
  std::string shards;
  for (int k = 0; k < 3; ++k) {
    std::string file = path("s" + std::to_string(k) + ".json");
    r = uopc("check relu softmax --backend interp --dtype f32 --trials 12 --seed 5 --shard " +
             std::to_string(k) + "/3 --json " + file);
    ASSERT_EQ(r.code, 0) << r.err;
    shards += " " + file;
  }
  EXPECT_FALSE(fs::is_symlink(path("s0.json")));
  {
    std::ifstream in(path("victim"));
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  }
  auto load = [](const std::string& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
  };
  nlohmann::json s1 = load(path("s1.json"));
  EXPECT_EQ(s1["shards"], 3);
  EXPECT_EQ(s1["shard_indexes"], nlohmann::json::array({1}));
  EXPECT_EQ(s1["checks"][0]["cases"], 4);
  r = uopc("merge-reports" + shards + " --json " + path("merged.json") + " --junit " +
           path("merged.xml"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 checks, 0 failed"), std::string::npos) << r.out;
  nlohmann::json merged = load(path("merged.json")), all = load(whole);
  ASSERT_EQ(merged["checks"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(merged["checks"][i]["op"], all["checks"][i]["op"]);
    EXPECT_EQ(merged["checks"][i]["cases"], all["checks"][i]["cases"]);
    EXPECT_EQ(merged["checks"][i]["worst_error"], all["checks"][i]["worst_error"]);
  }
  std::ifstream xml(path("merged.xml"));
  std::string text(std::istreambuf_iterator<char>(xml), {});
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\"", 0), 0u) << text;
  EXPECT_NE(text.find("<testsuite name=\"uopc check\" tests=\"2\" failures=\"0\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("name=\"softmax interp f32\""), std::string::npos) << text;
  // Not one campaign: a shard missing, a shard twice, another seed, not a reports file.
  r = uopc("merge-reports " + path("s0.json") + " " + path("s1.json"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("shard 2 of 3 is missing"), std::string::npos) << r.err;
  r = uopc("merge-reports" + shards + " " + path("s1.json"));
  EXPECT_NE(r.err.find("shard 1 is given twice"), std::string::npos) << r.err;
  r = uopc("merge-reports" + shards + " " + whole);
  EXPECT_NE(r.err.find("not of one campaign"), std::string::npos) << r.err;
  expect_user_error("merge-reports " + path("victim"), "not a `uopc check --json` reports file");
  expect_user_error("check relu --shard 3/3", "expected K/N with 0 <= K < N");
  expect_user_error("check relu --json " + path("no/such/dir/r.json"), "no folder");
}

}  // namespace
}  // namespace uops

namespace uops {
namespace {

// grad:OP is the gradient of OP as an op of its own: uopc check runs the oracle on it.
TEST_F(Uopc, ChecksTheGradientOfAnOpAsAnOp) {
  Result r = uopc("check grad:softmax --backend interp --trials 5");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("grad:softmax"), std::string::npos) << r.out;
  Result unknown = uopc("check grad:nosuchop --backend interp");
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("nosuchop"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace uops
