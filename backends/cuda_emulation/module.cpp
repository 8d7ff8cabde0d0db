#include "backends/cuda_emulation/module.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "backends/c/c_compiler.h"
#include "backends/cuda_emulation/elf_symbols.h"
#include "backends/kernel_cache.h"
#include "uops/error.h"

namespace uops::cuda_emulation {

extern const char* const kAbiText;        // abi.h, embedded by CMake
extern const char* const kDeviceApiText;  // device_api.h, embedded by CMake

namespace {

constexpr const char* kSharedTag = "B11uops_shared";

// The headers a CUDA source includes that the device API already provides: empty files in a
// folder of the kernel cache (ours, checked), so `#include <cuda_runtime.h>` compiles.
std::string include_folder() {
  static std::once_flag once;
  static std::filesystem::path folder;
  std::call_once(once, [] {
    folder = kernel_cache_dir() / "cuda-emulation-include";
    std::error_code ec;
    std::filesystem::create_directory(folder, ec);
    for (const char* h : {"cuda_runtime.h", "cuda.h", "cuda_runtime_api.h",
                          "device_launch_parameters.h", "cooperative_groups.h", "math_constants.h",
                          "device_functions.h", "sm_60_atomic_functions.h"})
      if (!std::filesystem::exists(folder / h)) write_file_atomically(folder / h, "#pragma once\n");
  });
  return folder.string();
}

// "void kern<256>(float const*, int)::partial[abi:uops_shared]" -> "kern<256>::partial".
std::string shared_name(const std::string& mangled) {
  int status = 0;
  char* text = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  std::string s = status == 0 && text ? text : mangled;
  std::free(text);
  if (size_t tag = s.find("[abi:"); tag != std::string::npos) s.erase(tag);
  size_t var = s.rfind("::");
  if (var == std::string::npos) return s;
  std::string function = s.substr(0, var), name = s.substr(var + 2);
  if (size_t paren = function.find('('); paren != std::string::npos) function.erase(paren);
  if (function.rfind("void ", 0) == 0) function.erase(0, 5);
  return function + "::" + name;
}

std::vector<std::string> dynamic_shared_links(const std::string& object) {
  std::vector<std::string> out;
  for (const ElfSymbol& s : elf_symbols(object))
    if (!s.defined && s.name.find(kSharedTag) != std::string::npos && s.name.rfind("_ZTH", 0) != 0)
      out.push_back("-Wl,--defsym=" + s.name + "=uops_emu_dynamic_shared");
  return out;
}

struct Segments {
  uintptr_t bias;
  std::vector<std::pair<uintptr_t, uintptr_t>>* out;
};

}  // namespace

const std::string& device_api_text() {
  static const std::string text = std::string(kAbiText) + "\n" + kDeviceApiText;
  return text;
}

std::shared_ptr<const Module> load_module(const std::string& source, const std::string& file,
                                          const std::vector<std::string>& entries) {
  std::string quoted;
  for (char c : file.empty() ? std::string("<source>") : file) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c == '\n' ? ' ' : c;
  }
  std::string text = device_api_text() + "\n#line 1 \"" + quoted + "\"\n" + source +
                     "\n#line 1 \"<uops entry points>\"\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string n = std::to_string(i);
    text += "UOPS_EMU_EXPORT void uops_emu_call_" + n + "(void** a) { uops_emu::call(&" +
            entries[i] + ", a); }\n";
    text += "UOPS_EMU_EXPORT int uops_emu_describe_" + n +
            "(uops_emu::Param* p, int n) { return uops_emu::describe(&" + entries[i] +
            ", p, n); }\n";
  }
  CCompileOptions options;
  const char* cxx = std::getenv("CXX");
  options.compiler = cxx && *cxx ? cxx : "c++";
  options.openmp = false;
  options.vector_math = false;
  cgen::TwoStepCompile steps;
  steps.object_flags = {"-x", "c++", "-std=c++17", "-O1", "-g", "-w",
                        "-fsanitize=thread,integer-divide-by-zero", "-fno-exceptions",
                        // Hidden: a template's shared array is then no GNU-unique symbol, which
                        // the loader would bind to the first module's copy in the process.
                        "-fvisibility=hidden", "-I", include_folder()};
  steps.link_flags = dynamic_shared_links;
  auto m = std::make_shared<Module>();
  m->file = file;
  void* handle = nullptr;
  try {
    handle = cgen::compile_and_load(text, options, &steps, &m->bytes);
  } catch (const Error& e) {
    std::string what = e.what();
    std::string hint = what.find("no such instruction") != std::string::npos
                           ? "\n(inline PTX, asm(...), is not supported by the emulation)"
                           : "";
    throw Error("CUDA emulation: cannot compile " + (file.empty() ? "the kernel source" : file) +
                " as host C++ for the emulation: " + what + hint);
  }
  m->state = static_cast<uops_emu::State*>(dlsym(handle, "uops_emu_state"));
  m->dynamic_base = reinterpret_cast<void* (*)()>(dlsym(handle, "uops_emu_dynamic_shared_base"));
  if (!m->state || !m->dynamic_base) throw Error("CUDA emulation: the device API is missing");
  link_map* lm = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
    throw Error("CUDA emulation: cannot locate a loaded module");
  m->load_bias = lm->l_addr;
  Segments seg{lm->l_addr, &m->segments};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Segments*>(data);
        if (info->dlpi_addr != s->bias) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_LOAD)
            s->out->push_back(
                {info->dlpi_addr + info->dlpi_phdr[i].p_vaddr,
                 info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz});
        return 1;
      },
      &seg);
  std::map<uint64_t, Module::SharedArray> arrays;  // by offset: a symbol may be in both tables
  for (const ElfSymbol& s : elf_symbols(m->bytes)) {
    if (!s.defined || !s.tls) continue;
    if (s.name == "uops_emu_dynamic_shared") {
      m->dynamic_offset = s.value;
      m->dynamic_capacity = s.size;
    } else if (s.name.find(kSharedTag) != std::string::npos && s.size > 0) {
      arrays[s.value] = {shared_name(s.name), s.value, s.size};
    }
  }
  for (auto& [offset, a] : arrays) m->shared.push_back(a);
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string n = std::to_string(i);
    Module::Entry e;
    e.name = entries[i];
    e.call = reinterpret_cast<void (*)(void**)>(dlsym(handle, ("uops_emu_call_" + n).c_str()));
    auto describe = reinterpret_cast<int (*)(uops_emu::Param*, int)>(
        dlsym(handle, ("uops_emu_describe_" + n).c_str()));
    if (!e.call || !describe) throw Error("CUDA emulation: missing entry point " + entries[i]);
    e.params.resize(256);
    int count = describe(e.params.data(), 256);
    e.params.resize(size_t(std::min(count, 256)));
    m->entries.push_back(std::move(e));
  }
  return m;
}

std::string Module::source_line(const void* pc) const {
  static std::mutex mutex;
  static std::map<std::pair<const Module*, uintptr_t>, std::string> lines;
  std::lock_guard lock(mutex);
  auto key = std::make_pair(this, uintptr_t(pc));
  if (auto it = lines.find(key); it != lines.end()) return it->second;
  std::string& line = lines[key];
  std::string tool;
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/bin/"})
    if (access((std::string(dir) + "addr2line").c_str(), X_OK) == 0) {
      tool = std::string(dir) + "addr2line";
      break;
    }
  if (tool.empty() || bytes.empty()) return line;
  // The module's bytes in a private file of our own (mkstemp: created, never followed).
  std::string path = (std::filesystem::temp_directory_path() / "uops-emu-XXXXXX").string();
  int fd = mkstemp(path.data());
  if (fd < 0) return line;
  bool ok = write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  close(fd);
  if (ok) {
    char hex[32];
    // A return address: the call is the instruction before it.
    std::snprintf(hex, sizeof hex, "%#lx", (unsigned long)(uintptr_t(pc) - load_bias - 1));
    int status = 0;
    std::string out = cgen::run_command({tool, "-e", path, hex}, &status);
    if (status == 0 && !out.empty() && out[0] != '?') {
      line = out.substr(0, out.find('\n'));
      // A relative file name comes back joined to the folder the compiler ran in: give it
      // back as the user named it.
      if (size_t at = line.rfind(file + ":");
          at != std::string::npos && at > 0 && line[at - 1] == '/')
        line.erase(0, at);
      if (size_t d = line.find(" (discriminator"); d != std::string::npos) line.erase(d);
      if (line.find(":?") != std::string::npos || line.find("<uops entry") != std::string::npos)
        line.clear();
    }
  }
  unlink(path.c_str());
  return line;
}

}  // namespace uops::cuda_emulation
