#include "uops/backends/cuda/cuda_backend.h"

#include <algorithm>

#include "backends/backend_entries.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_emitter.h"
#include "backends/cuda/cuda_program.h"
#include "backends/kernel_cache.h"
#include "uops/error.h"
#include "uops/ir/binding.h"

#ifdef UOPS_HAVE_NVRTC
#include <nvrtc.h>
#endif

namespace uops {

using namespace ir;

namespace {

#ifdef UOPS_HAVE_NVRTC
// Only the NVRTC build compiles kernels, so only it needs an architecture.
std::string default_arch() {
  std::string why;
  if (const cuda::Driver* d = cuda::driver(&why))
    return "compute_" + std::to_string(d->major) + std::to_string(d->minor);
  return "compute_80";
}

std::string nvrtc_identity() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

// `entry` (with `lowered`): a name expression whose mangled name comes back; a user's source
// may include the toolkit's headers (cooperative_groups.h), found where the build found them.
std::string nvrtc_compile(const std::string& source, const std::string& arch, std::string* log,
                          const std::string& file = "uops.cu", const std::string& entry = "",
                          std::string* lowered = nullptr) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), file.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw Error("NVRTC could not create a program");
  if (!entry.empty()) nvrtcAddNameExpression(prog, entry.c_str());
  std::string arch_flag = "--gpu-architecture=" + arch;
  std::vector<const char*> options = {arch_flag.c_str(), "--std=c++17"};
#ifdef UOPS_CUDA_INCLUDE_DIR
  std::string include = std::string("-I") + UOPS_CUDA_INCLUDE_DIR;
  if (!entry.empty()) options.push_back(include.c_str());
#endif
  nvrtcResult r = nvrtcCompileProgram(prog, int(options.size()), options.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string text(log_size, '\0');
  nvrtcGetProgramLog(prog, text.data());
  while (!text.empty() && (text.back() == '\0' || text.back() == '\n')) text.pop_back();
  if (log) *log = text;
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    throw Error(std::string("NVRTC failed: ") + nvrtcGetErrorString(r) + "\n" + text);
  }
  if (lowered) {
    const char* name = nullptr;
    if (nvrtcGetLoweredName(prog, entry.c_str(), &name) != NVRTC_SUCCESS || !name) {
      nvrtcDestroyProgram(&prog);
      throw Error("NVRTC: no kernel '" + entry + "' in " + file);
    }
    *lowered = name;
  }
  size_t size = 0;
  nvrtcGetPTXSize(prog, &size);
  std::string ptx(size, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  return ptx;
}
#endif

}  // namespace

std::string cuda::compile_ptx(const std::string& source, const std::string& arch,
                              std::string* log) {
#ifdef UOPS_HAVE_NVRTC
  std::string a = arch.empty() ? default_arch() : arch;
  std::string key = kernel_cache_key(source, nvrtc_identity(), a + " --std=c++17");
  std::filesystem::path path = kernel_cache_path(key, ".ptx");
  if (auto cached = read_artifact(path)) {
    if (log) log->clear();
    return *cached;
  }
  std::string ptx = nvrtc_compile(source, a, log);
  store_artifact(path, ptx);
  return ptx;
#else
  (void)source;
  (void)arch;
  (void)log;
  throw Error("NVRTC not available in this build");
#endif
}

std::string cuda::compile_entry_ptx(const std::string& source, const std::string& file,
                                    const std::string& entry, std::string* lowered) {
#ifdef UOPS_HAVE_NVRTC
  std::string a = default_arch();
  // The artifact holds the lowered name, a newline, then the PTX.
  std::string key = kernel_cache_key(source, nvrtc_identity(),
                                     a + " --std=c++17 entry " + entry + " file " + file);
  std::filesystem::path path = kernel_cache_path(key, ".ptx");
  std::optional<std::string> cached = read_artifact(path);
  if (!cached || cached->find('\n') == std::string::npos) {
    std::string name;
    std::string ptx =
        nvrtc_compile(source, a, nullptr, file.empty() ? "kernel.cu" : file, entry, &name);
    cached = name + "\n" + ptx;
    store_artifact(path, *cached);
  }
  size_t newline = cached->find('\n');
  *lowered = cached->substr(0, newline);
  return cached->substr(newline + 1);
#else
  (void)source;
  (void)file;
  (void)entry;
  (void)lowered;
  throw Error("NVRTC not available in this build");
#endif
}

std::string compile_cuda_ptx(const Program& p, const std::string& arch, std::string* log) {
  return cuda::compile_ptx(emit_cuda(p), arch, log);
}

std::string cuda_unavailable_reason() {
#ifndef UOPS_HAVE_NVRTC
  return "NVRTC not available in this build";
#else
  std::string why;
  cuda::driver(&why);
  return why;
#endif
}

Backend cuda_backend() {
  return {"cuda", "generated CUDA, NVRTC and the driver API", cuda_unavailable_reason, compile_cuda,
          emit_cuda};
}

std::unique_ptr<Executable> compile_cuda(Program p) {
  if (std::string why = cuda_unavailable_reason(); !why.empty())
    throw Error("the CUDA backend cannot run: " + why);
  std::shared_ptr<cuda::Device> device = cuda::driver_device(nullptr);
  cuda::LoadedProgram loaded = std::move(device->load({p}).front());
  return std::make_unique<cuda::CudaProgram>(std::move(device), std::move(p), std::move(loaded));
}

void run_on_device(const Executable& executable, const DeviceTensorMap& tensors,
                   const ParamMap& params, void* stream) {
  auto* program = dynamic_cast<const cuda::CudaProgram*>(&executable);
  if (!program)
    throw Error("run_on_device needs an executable of the CUDA backend, not '" +
                executable.backend() + "'");
  program->run_on_device(tensors, params, stream);
}

}  // namespace uops
