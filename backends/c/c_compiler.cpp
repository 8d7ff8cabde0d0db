#include "backends/c/c_compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "backends/kernel_cache.h"
#include "uops/error.h"

namespace uops::cgen {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (auto& a : argv) text += (text.empty() ? "" : " ") + shell_quote(a);
  return text;
}

std::string run_command(const std::vector<std::string>& argv, int* status) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    throw Error("cannot run " + command_text(argv) + ": " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    throw Error("cannot run " + command_text(argv) + ": " + std::strerror(err));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, size_t(n));
  }
  close(pipe_fds[0]);
  int rc = 0;
  while (waitpid(pid, &rc, 0) < 0 && errno == EINTR) {
  }
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return out;
}

namespace {

std::string resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// A compiler command split into words at white space, as make and CMake take CC: a launcher
// and arguments may come with it ("ccache gcc", "gcc -m64"). No shell is involved.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// What identifies a program file: its real path, size and modification time.
std::string file_stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error("C compiler '" + path + "' cannot be read");
  char* real = realpath(path.c_str(), nullptr);
  std::string stamp = std::string(real ? real : path.c_str()) + "|" + std::to_string(st.st_size) +
                      "|" + std::to_string(st.st_mtim.tv_sec) + "." +
                      std::to_string(st.st_mtim.tv_nsec);
  std::free(real);
  return stamp;
}

// Whether the compiler builds the probe into a shared object with `extra`. The answer is cached
// for good, so a failure counts as "no" only when it is the feature's: the compiler exited with
// an error and builds the same probe without `extra` right after. A compiler killed by a signal,
// or one that cannot build the plain probe either (a full disk, an unwritable folder, a broken
// installation), says nothing about the feature: that is an Error, and nothing is cached.
bool accepts(const std::vector<std::string>& command, const std::filesystem::path& probe,
             const std::filesystem::path& out, const std::vector<std::string>& extra) {
  // 0: built; -1: killed by a signal; 1: failed.
  auto build = [&](const std::vector<std::string>& flags, std::string* output) {
    std::vector<std::string> argv = command;
    argv.insert(argv.end(), {"-shared", "-fPIC", "-o", out.string(), probe.string()});
    argv.insert(argv.end(), flags.begin(), flags.end());
    int status = 0;
    *output = run_command(argv, &status);
    std::error_code ec;
    bool built = status == 0 && std::filesystem::file_size(out, ec) > 0 && !ec;
    std::filesystem::remove(out, ec);
    return built ? 0 : status < 0 ? -1 : 1;
  };
  std::string with_output, plain_output;
  int status = build(extra, &with_output);
  if (status == 0) return true;
  std::string feature = command_text(extra);
  if (status < 0)
    throw Error("C compiler " + command_text(command) + " was killed while probing " + feature +
                "; nothing is cached, the next run probes again:\n" + with_output);
  if (build({}, &plain_output) != 0)
    throw Error("C compiler " + command_text(command) + " cannot build a shared object (probing " +
                feature + "); nothing is cached, the next run probes again:\n" + plain_output);
  return false;
}

}  // namespace

CompilerInfo compiler_info(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, CompilerInfo> known;
  std::string text = compiler;
  if (text.empty()) {
    const char* cc = std::getenv("CC");
    text = cc && *cc ? cc : "cc";
  }
  std::vector<std::string> command = words(text);
  if (command.empty()) throw Error("the C compiler command is empty (set CC)");
  command[0] = resolve(command[0]);
  if (command[0].empty())
    throw Error("C compiler '" + words(text)[0] +
                "' not found on PATH (set CC or CCompileOptions::compiler)");
  // Every word that names a program (the compiler behind a launcher) is part of the stamp.
  std::string stamp = file_stamp(command[0]);
  for (size_t i = 1; i < command.size(); ++i) {
    std::string program = command[i][0] == '-' ? "" : resolve(command[i]);
    stamp += "|" + command[i] + (program.empty() ? "" : "=" + file_stamp(program));
  }

  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(stamp); it != known.end()) return it->second;
  CompilerInfo info;
  info.command = command;
  info.stamp = stamp;
  std::filesystem::path id_file = kernel_cache_path(
      "compiler-" + kernel_cache_key(stamp, "openmp mvec store-races", ""), ".id");
  if (auto cached = read_artifact(id_file); cached && cached->size() >= 4) {
    info.openmp = (*cached)[0] == '1';
    info.mvec = (*cached)[1] == '1';
    info.store_races = (*cached)[2] == '1';
    info.identity = cached->substr(4);
  } else {
    int status = 0;
    std::vector<std::string> version = command;
    version.push_back("--version");
    info.identity = run_command(version, &status);
    if (status != 0)
      throw Error("C compiler '" + command_text(command) +
                  "' failed on --version: " + info.identity);
    // OpenMP is used only when the compiler accepts it for a shared object.
    std::filesystem::path probe = kernel_cache_path("openmp-probe", ".c");
    write_file_atomically(probe, "int uops_probe(void) { return 0; }\n");
    std::filesystem::path out = temporary_path_for(kernel_cache_path("openmp-probe", ".so"));
    info.openmp = accepts(command, probe, out, {"-fopenmp"});
    info.mvec = info.openmp && accepts(command, probe, out, {"-fopenmp", "-lmvec"});
    info.store_races = accepts(command, probe, out, {"-fallow-store-data-races"});
    store_artifact(id_file, std::string(info.openmp ? "1" : "0") + (info.mvec ? "1" : "0") +
                                (info.store_races ? "1" : "0") + "\n" + info.identity);
  }
  known[stamp] = info;
  return info;
}

namespace {

// What -march=native resolves to: the lines of /proc/cpuinfo naming the CPU and its features
// (x86 and AArch64 spellings), once each.
std::string host_target() {
  static const std::string host = [] {
    const std::set<std::string> keys = {"vendor_id", "cpu family",      "model",
                                        "flags",     "CPU implementer", "CPU variant",
                                        "CPU part",  "Features",        "CPU architecture"};
    std::set<std::string> lines;
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);) {
      std::string key = line.substr(0, line.find(':'));
      key.erase(key.find_last_not_of(" \t") + 1);
      if (keys.count(key)) lines.insert(line);
    }
    std::string text;
    for (auto& l : lines) text += l + "\n";
    return text;
  }();
  return host;
}

}  // namespace

int target_vector_bytes(const CompilerInfo& cc, const std::string& march) {
  static std::mutex mutex;
  static std::map<std::string, int> known;
  const std::string key = cc.stamp + "|" + march;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::filesystem::path file =
      kernel_cache_path("target-" + kernel_cache_key(key, "vector bytes", ""), ".id");
  int bytes = 0;
  if (auto cached = read_artifact(file);
      cached && (*cached == "16" || *cached == "32" || *cached == "64")) {
    bytes = std::stoi(*cached);
  } else {
    std::vector<std::string> argv = cc.command;
    argv.insert(argv.end(), {"-march=" + march, "-dM", "-E", "-x", "c", "/dev/null"});
    int status = 0;
    std::string macros = run_command(argv, &status);
    if (status != 0) return 64;  // not a target it knows: its compile will say so
    bytes = macros.find("#define __AVX512F__ ") != std::string::npos ? 64
            : macros.find("#define __AVX__ ") != std::string::npos   ? 32
                                                                     : 16;
    store_artifact(file, std::to_string(bytes));
  }
  known[key] = bytes;
  return bytes;
}

namespace {

// The width of the target's vectors (cpu_target), asking `cc` where the name needs a compiler;
// with none given, the options' own compiler.
int vector_bytes(const CCompileOptions& options, const CompilerInfo* cc) {
  int bytes = 64;
  if (options.target == "native") {
#if defined(__x86_64__) || defined(__i386__)
    // As -march=native: the CPU's features the operating system enables (libgcc checks XCR0).
    bytes = __builtin_cpu_supports("avx512f") ? 64 : __builtin_cpu_supports("avx") ? 32 : 16;
#else
    bytes = 16;
#endif
  } else if (options.target.empty() || options.target == "x86-64" ||
             options.target == "x86-64-v2") {
    bytes = 16;
  } else if (options.target == "x86-64-v3") {
    bytes = 32;
  } else if (options.target == "x86-64-v4") {
    bytes = 64;
  } else {
    // Any other name (haswell, znver3, skylake-avx512...): as the compiler defines it.
    try {
      bytes = target_vector_bytes(cc ? *cc : compiler_info(options.compiler), options.target);
    } catch (const Error&) {
      // No compiler to ask: the widest plan, which its compile would not get to anyway.
    }
  }
  return bytes;
}

}  // namespace

CpuTarget cpu_target(const CCompileOptions& options, bool worksharing) {
  const int bytes = vector_bytes(options, nullptr);
  int64_t stream = options.tile_stream_bytes > 0 ? options.tile_stream_bytes : kStreamBytes;
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (options.tile_stream_bytes <= 0 && options.target == "native")
    stream = std::max(stream, int64_t(sysconf(_SC_LEVEL3_CACHE_SIZE)) / 4);
#endif
  return {options.reassociate, worksharing, bytes, !options.openmp || kernel_threads(options) == 1,
          stream};
}

int kernel_threads(const CCompileOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, int(std::thread::hardware_concurrency()));
}

std::vector<std::string> compile_flags(const CompilerInfo& cc, const CCompileOptions& options) {
  // -fno-math-errno lets sqrt compile to one instruction; results do not change. Contraction
  // into fused multiply-adds changes rounding, so only a reassociating build allows it.
  // -fno-trapping-math (no kernel reads the floating-point exception flags; values do not
  // change) lets GCC compute both arms of a select where the target has no masked operations: a
  // multiply under a condition (vector_expf's range tests) otherwise kept the loop scalar on AVX2
  // (softmax 4096 x 1024 compiled for x86-64-v3: 9.2 -> 2.0 ms; with AVX-512 1.69 -> 1.58).
  std::vector<std::string> flags = {
      "-std=c99",
      "-O3",
      "-fno-math-errno",
      "-fno-trapping-math",
      "-fPIC",
      "-shared",
      options.reassociate ? "-ffp-contract=fast" : "-ffp-contract=off"};
  if (options.target == "native") {
#if defined(__x86_64__) || defined(__i386__)
    flags.push_back("-march=native");
#elif defined(__aarch64__)
    flags.push_back("-mcpu=native");
#endif
  } else if (!options.target.empty()) {
    flags.push_back("-march=" + options.target);
  }
#if defined(__x86_64__) || defined(__i386__)
  // GCC 12 tunes every Intel AVX-512 target to prefer 256-bit vectors: the register tiles, sized
  // for 32 zmm registers (CpuTarget::vector_bytes), then spilled from ymm ones, and the loops it
  // vectorizes on its own ran at half width. With 512 (docs/cpu-kernels.md, Vector width):
  // matmul 512^3 3.2 -> 1.8 ms, layernorm 4096 x 1024 2.0 -> 1.4 ms.
  if (vector_bytes(options, &cc) == 64) flags.push_back("-mprefer-vector-width=512");
#endif
  // GCC's partial redundancy elimination puts code on the latch of the inner loops of blocks
  // sharing an outer loop (layernorm), which then do not vectorize: measured 5x slower.
  if (cc.identity.find("clang") == std::string::npos) flags.push_back("-fno-tree-pre");
  // A register tile's accumulators leave registers once, after its reduction, instead of GCC
  // keeping a flag per accumulator on every exit of the innermost loop to store only those that
  // were written (conv2d 8 x 56 x 56 x 64 10.0 -> 9.6 ms at one thread, 5.1 -> 4.8 at two;
  // depthwise conv2d 1.79 -> 1.67 at one). The stores this may add rewrite a value the same
  // thread read, at an element of its own: a team's threads share only exclusive loops, whose
  // iterations touch disjoint elements (ir/parallelism.h).
  if (cc.store_races) flags.push_back("-fallow-store-data-races");
  if (options.openmp && cc.openmp && kernel_threads(options) == 1) {
    flags.push_back("-fopenmp-simd");
    flags.push_back("-DUOPS_OPENMP_SIMD");
  } else if (options.openmp && cc.openmp) {
    flags.push_back("-fopenmp");
  }
  if (options.reassociate && options.vector_math) flags.push_back("-DUOPS_VECTOR_MATH");
  if (!link_libraries(cc, options).empty()) flags.push_back("-DUOPS_MVEC");
  for (auto& f : options.extra_flags) flags.push_back(f);
  return flags;
}

std::vector<std::string> link_libraries(const CompilerInfo& cc, const CCompileOptions& options) {
  if (options.reassociate && options.vector_math && options.openmp && cc.openmp && cc.mvec)
    return {"-lmvec"};
  return {};
}

namespace {

// Compiles into a temporary, stores the result with its digest and returns its bytes.
std::string compile(const CompilerInfo& cc, const std::vector<std::string>& flags,
                    const std::vector<std::string>& libs, const std::string& source,
                    const std::string& key, const std::filesystem::path& so,
                    const TwoStepCompile* steps) {
  std::filesystem::path src = kernel_cache_path(key, ".c");
  write_file_atomically(src, source);
  std::filesystem::path tmp = temporary_path_for(so);
  std::filesystem::path object = temporary_path_for(kernel_cache_path(key, ".o"));
  std::vector<std::string> argv = cc.command;
  argv.insert(argv.end(), flags.begin(), flags.end());
  std::vector<std::string> link = argv;
  int status = 0;
  std::string output;
  std::error_code ec;
  auto fail = [&](const std::string& what) {
    throw Error("C compiler " + what + ": " + command_text(argv) + "\n" + output +
                "generated source kept at " + src.string());
  };
  if (steps) {
    argv.insert(argv.end(), steps->object_flags.begin(), steps->object_flags.end());
    for (auto& a : {std::string("-c"), std::string("-o"), object.string(), src.string()})
      argv.push_back(a);
    output = run_command(argv, &status);
    std::optional<std::string> bytes;
    if (status == 0) bytes = read_cache_file(object);
    std::filesystem::remove(object, ec);
    if (status != 0) fail("failed (exit status " + std::to_string(status) + ")");
    if (!bytes) fail("exited 0 but wrote no " + object.string());
    argv = link;
    if (steps->link_flags)
      for (std::string& f : steps->link_flags(*bytes)) argv.push_back(f);
    // The object again, as written: the linker reads the file, not the bytes looked at above.
    write_file_atomically(object, *bytes);
    for (auto& a :
         {std::string("-o"), tmp.string(), std::string("-x"), std::string("none"), object.string()})
      argv.push_back(a);
  } else {
    for (auto& a : {std::string("-o"), tmp.string(), src.string()}) argv.push_back(a);
  }
  argv.insert(argv.end(), libs.begin(), libs.end());
  output = run_command(argv, &status);
  std::optional<std::string> bytes;
  if (status == 0) bytes = read_cache_file(tmp);
  std::filesystem::remove(tmp, ec);
  if (steps) std::filesystem::remove(object, ec);
  if (status != 0) fail("failed (exit status " + std::to_string(status) + ")");
  if (!bytes) fail("exited 0 but wrote no " + tmp.string());
  if (bytes->empty()) fail("exited 0 but wrote an empty " + tmp.string());
  store_artifact(so, *bytes);
  return *bytes;
}

// A name for /proc/self/fd/`fd` that no earlier dlopen was given: glibc hands back the object
// it loaded before under the same name, and descriptor numbers repeat. The n-th load puts one
// "/." (bit set) or "/" (bit clear) per bit of n between "/proc" and "self": the same file,
// a different string.
std::string fresh_fd_name(int fd, uint64_t n) {
  std::string bits;
  for (; n; n >>= 1) bits.insert(0, n & 1 ? "/." : "/");
  return "/proc" + bits + "/self/fd/" + std::to_string(fd);
}

// Loads `bytes`, verified against their digest, as a shared object. They are copied into a
// sealed memory file that dlopen maps through /proc/self/fd: what is mapped is the very bytes
// that were hashed, and the seals forbid anyone, even the caller, to change them afterwards.
// (dlopen of the cache path would look the path up again, so a parent swapped in between would
// load another file; loading the cache file's own descriptor would map the verified inode, but
// its owner could still rewrite it, and the pages not yet read would show the change.) Identical
// bytes are mapped once per process.
void* load(const std::string& bytes, std::string* error) {
  static std::mutex mutex;
  static std::map<std::string, void*> loaded;  // by SHA-256
  static uint64_t loads = 0;
  std::string digest = sha256_hex(bytes);
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(digest); it != loaded.end()) return it->second;
  // MFD_EXEC: where vm.memfd_noexec asks for it (Linux 6.3 and later); older kernels refuse the
  // flag, and their memory files are executable anyway.
  constexpr unsigned kExec = 0x10;
  int fd = memfd_create("uops-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING | kExec);
  if (fd < 0 && errno == EINVAL) fd = memfd_create("uops-kernel", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    *error = std::string("cannot create a memory file to load it from: ") + std::strerror(errno) +
             (errno == EACCES ? " (vm.memfd_noexec is 2?)" : "");
    return nullptr;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += size_t(n);
  }
  if (done != bytes.size() ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    *error = std::string("cannot fill the memory file to load it from: ") + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  // Never unloaded: the OpenMP runtime the object pulls in keeps worker threads alive.
  void* handle = dlopen(fresh_fd_name(fd, loads++).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  close(fd);
  if (!handle) *error = dlerror();
  if (handle) loaded[digest] = handle;
  return handle;
}

}  // namespace

std::string compile_key(const std::string& source, const CCompileOptions& options) {
  CompilerInfo cc = compiler_info(options.compiler);
  std::string flag_text;
  for (auto& f : compile_flags(cc, options)) flag_text += f + " ";
  for (auto& f : link_libraries(cc, options)) flag_text += f + " ";
  if (options.target == "native") flag_text += host_target();
  return kernel_cache_key(source, cc.identity, flag_text);
}

void* compile_and_load(const std::string& source, const CCompileOptions& options) {
  return compile_and_load(source, options, nullptr, nullptr);
}

void* compile_and_load(const std::string& source, const CCompileOptions& options,
                       const TwoStepCompile* steps, std::string* loaded) {
  CompilerInfo cc = compiler_info(options.compiler);
  std::vector<std::string> flags = compile_flags(cc, options), libs = link_libraries(cc, options);
  std::string key = compile_key(source, options);
  if (steps) {
    std::string step_text = "two steps:";
    for (auto& f : steps->object_flags) step_text += " " + f;
    key = kernel_cache_key(key, cc.identity, step_text);
  }
  std::filesystem::path so = kernel_cache_path(key, ".so");
  // A cached object that fails verification is deleted by read_artifact; one that verifies but
  // does not load (written by an older, broken run) is deleted here; either is rebuilt once.
  std::optional<std::string> bytes = read_artifact(so);
  std::string error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!bytes) bytes = compile(cc, flags, libs, source, key, so, steps);
    if (void* handle = load(*bytes, &error)) {
      if (loaded) *loaded = *bytes;
      return handle;
    }
    remove_artifact(so);
    bytes.reset();
  }
  throw Error("cannot load compiled kernel " + so.string() + ": " + error);
}

}  // namespace uops::cgen
