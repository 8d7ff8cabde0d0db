#include "backends/c/c_compiler.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "uops/backends/kernel_cache.h"
#include "uops/error.h"

namespace uops::cgen {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string run_command(const std::string& command, int* status) {
  FILE* f = popen((command + " 2>&1").c_str(), "r");
  if (!f) throw Error("cannot run: " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  int rc = pclose(f);
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
  throw Error("C compiler '" + program +
              "' not found on PATH (set CC or CCompileOptions::compiler)");
}

}  // namespace

CompilerInfo compiler_info(const std::string& compiler) {
  static std::mutex mutex;
  static std::map<std::string, CompilerInfo> known;
  std::string program = compiler;
  if (program.empty()) {
    const char* cc = std::getenv("CC");
    program = cc && *cc ? cc : "cc";
  }
  std::string path = resolve(program);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw Error("C compiler '" + path + "' cannot be read");
  char* real = realpath(path.c_str(), nullptr);
  std::string stamp = std::string(real ? real : path.c_str()) + "|" + std::to_string(st.st_size) +
                      "|" + std::to_string(st.st_mtim.tv_sec) + "." +
                      std::to_string(st.st_mtim.tv_nsec);
  std::free(real);

  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = known.find(stamp); it != known.end()) return it->second;
  CompilerInfo info;
  info.program = path;
  std::filesystem::path id_file =
      kernel_cache_path("compiler-" + kernel_cache_key(stamp, "openmp mvec", ""), ".id");
  if (auto cached = read_file(id_file); cached && cached->size() >= 3) {
    info.openmp = (*cached)[0] == '1';
    info.mvec = (*cached)[1] == '1';
    info.identity = cached->substr(3);
  } else {
    int status = 0;
    info.identity = run_command(shell_quote(path) + " --version", &status);
    if (status != 0) throw Error("C compiler '" + path + "' failed on --version: " + info.identity);
    // OpenMP is used only when the compiler accepts it for a shared object.
    std::filesystem::path probe = kernel_cache_path("openmp-probe", ".c");
    write_file_atomically(probe, "int uops_probe(void) { return 0; }\n");
    std::filesystem::path out = temporary_path_for(kernel_cache_path("openmp-probe", ".so"));
    run_command(shell_quote(path) + " -fopenmp -shared -fPIC -o " + shell_quote(out.string()) +
                    " " + shell_quote(probe.string()),
                &status);
    info.openmp = status == 0;
    if (info.openmp) {
      run_command(shell_quote(path) + " -fopenmp -shared -fPIC -o " + shell_quote(out.string()) +
                      " " + shell_quote(probe.string()) + " -lmvec",
                  &status);
      info.mvec = status == 0;
    }
    std::error_code ec;
    std::filesystem::remove(out, ec);
    write_file_atomically(id_file, std::string(info.openmp ? "1" : "0") + (info.mvec ? "1" : "0") +
                                       "\n" + info.identity);
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

std::vector<std::string> compile_flags(const CompilerInfo& cc, const CCompileOptions& options) {
  // -fno-math-errno lets sqrt compile to one instruction; results do not change. Contraction
  // into fused multiply-adds changes rounding, so only a reassociating build allows it.
  std::vector<std::string> flags = {
      "-std=c99", "-O3",     "-fno-math-errno",
      "-fPIC",    "-shared", options.reassociate ? "-ffp-contract=fast" : "-ffp-contract=off"};
  if (options.target == "native") {
#if defined(__x86_64__) || defined(__i386__)
    flags.push_back("-march=native");
#elif defined(__aarch64__)
    flags.push_back("-mcpu=native");
#endif
  } else if (!options.target.empty()) {
    flags.push_back("-march=" + options.target);
  }
  // GCC's partial redundancy elimination puts code on the latch of the inner loops of blocks
  // sharing an outer loop (layernorm), which then do not vectorize: measured 5x slower.
  if (cc.identity.find("clang") == std::string::npos) flags.push_back("-fno-tree-pre");
  if (options.openmp && cc.openmp) flags.push_back("-fopenmp");
  if (!link_libraries(cc, options).empty()) flags.push_back("-DUOPS_MVEC");
  for (auto& f : options.extra_flags) flags.push_back(f);
  return flags;
}

std::vector<std::string> link_libraries(const CompilerInfo& cc, const CCompileOptions& options) {
  if (options.reassociate && options.vector_math && options.openmp && cc.openmp && cc.mvec)
    return {"-lmvec"};
  return {};
}

void* compile_and_load(const std::string& source, const CCompileOptions& options) {
  CompilerInfo cc = compiler_info(options.compiler);
  std::vector<std::string> flags = compile_flags(cc, options), libs = link_libraries(cc, options);
  std::string flag_text;
  for (auto& f : flags) flag_text += f + " ";
  for (auto& f : libs) flag_text += f + " ";
  if (options.target == "native") flag_text += host_target();
  std::string key = kernel_cache_key(source, cc.identity, flag_text);
  std::filesystem::path so = kernel_cache_path(key, ".so");
  if (!std::filesystem::exists(so)) {
    std::filesystem::path src = kernel_cache_path(key, ".c");
    write_file_atomically(src, source);
    std::filesystem::path tmp = temporary_path_for(so);
    std::string command = shell_quote(cc.program);
    for (auto& f : flags) command += " " + shell_quote(f);
    command += " -o " + shell_quote(tmp.string()) + " " + shell_quote(src.string());
    for (auto& f : libs) command += " " + shell_quote(f);
    int status = 0;
    std::string output = run_command(command, &status);
    if (status != 0) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw Error("C compiler failed (exit status " + std::to_string(status) + "): " + command +
                  "\n" + output + "generated source kept at " + src.string());
    }
    publish(tmp, so);
  }
  // Never unloaded: the OpenMP runtime the object pulls in keeps worker threads alive.
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle)
    throw Error(std::string("cannot load compiled kernel ") + so.string() + ": " + dlerror());
  return handle;
}

}  // namespace uops::cgen
