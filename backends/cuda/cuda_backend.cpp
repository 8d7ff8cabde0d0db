#include "uops/backends/cuda/cuda_backend.h"

#include <algorithm>

#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_emitter.h"
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

std::string nvrtc_compile(const std::string& source, const std::string& arch, std::string* log) {
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "uops.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw Error("NVRTC could not create a program");
  std::string arch_flag = "--gpu-architecture=" + arch;
  const char* options[] = {arch_flag.c_str(), "--std=c++17"};
  nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
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
  size_t size = 0;
  nvrtcGetPTXSize(prog, &size);
  std::string ptx(size, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  return ptx;
}
#endif

class CudaKernel : public Executable {
 public:
  CudaKernel(Program p, cuda::CudaModule mod, const std::string& ptx)
      : p_(std::move(p)), mod_(std::move(mod)), d_(cuda::driver(nullptr)) {
    cuda::CUmodule module;
    d_->check(d_->cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
    for (auto& k : mod_.plan.kernels) {
      cuda::CUfunction f;
      d_->check(d_->cuModuleGetFunction(&f, module, k.name.c_str()), "cuModuleGetFunction");
      functions_.push_back(f);
    }
  }

  TensorMap run(const TensorMap& inputs, const ParamMap& params) const override {
    Binding b = bind(p_, inputs, params);
    IndexEnv env = b.env();
    std::vector<Tensor> owned(p_.tensors.size());
    std::vector<cuda::CUdeviceptr> buffers(p_.tensors.size(), 0);
    cuda::CUdeviceptr error = 0;
    auto release = [&] {
      for (auto ptr : buffers)
        if (ptr) d_->cuMemFree(ptr);
      if (error) d_->cuMemFree(error);
    };
    try {
      for (size_t t = 0; t < p_.tensors.size(); ++t) {
        const TensorInfo& info = p_.tensors[t];
        size_t bytes = size_t(element_count(b.shapes[t])) * dtype_size(info.dtype);
        d_->check(d_->cuMemAlloc(&buffers[t], std::max<size_t>(bytes, 1)), "cuMemAlloc");
        if (info.role == Role::input)
          d_->check(d_->cuMemcpyHtoD(buffers[t], inputs.at(info.name).bytes.data(), bytes),
                    "copy in");
        else if (mod_.plan.zero_fill[t])
          d_->check(d_->cuMemsetD8(buffers[t], 0, bytes), "cuMemsetD8");
      }
      d_->check(d_->cuMemAlloc(&error, sizeof(int)), "cuMemAlloc");
      d_->check(d_->cuMemsetD8(error, 0, sizeof(int)), "cuMemsetD8");
      for (size_t k = 0; k < functions_.size(); ++k) launch(k, b, env, buffers, error);
      d_->check(d_->cuCtxSynchronize(), "kernel execution");
      int bits = 0;
      d_->check(d_->cuMemcpyDtoH(&bits, error, sizeof bits), "copy out");
      if (bits) throw Error(codegen::kernel_error_message(bits));
      TensorMap out;
      for (int t : p_.outputs()) {
        Tensor x(p_.tensors[t].dtype, b.shapes[t]);
        d_->check(d_->cuMemcpyDtoH(x.bytes.data(), buffers[t], x.bytes.size()), "copy out");
        out[p_.tensors[t].name] = std::move(x);
      }
      release();
      return out;
    } catch (...) {
      release();
      throw;
    }
  }
  std::string backend() const override { return "cuda"; }
  const Program& program() const override { return p_; }

 private:
  void launch(size_t k, const Binding& b, const IndexEnv& env,
              const std::vector<cuda::CUdeviceptr>& buffers, cuda::CUdeviceptr error) const {
    const codegen::KernelPlan& plan = mod_.plan.kernels[k];
    codegen::PackedArgs args = codegen::pack_args(plan, b, buffers, error);
    codegen::LaunchDims dims = codegen::launch_dims(plan, env);
    d_->check(d_->cuLaunchKernel(functions_[k], dims.grid, 1, 1, dims.threads, 1, 1, 0, nullptr,
                                 args.pointers.data(), nullptr),
              "cuLaunchKernel");
  }

  Program p_;
  cuda::CudaModule mod_;
  const cuda::Driver* d_;
  std::vector<cuda::CUfunction> functions_;
};

}  // namespace

std::string compile_cuda_ptx(const Program& p, const std::string& arch, std::string* log) {
#ifdef UOPS_HAVE_NVRTC
  std::string a = arch.empty() ? default_arch() : arch;
  std::string source = emit_cuda(p);
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
  (void)p;
  (void)arch;
  (void)log;
  throw Error("NVRTC not available in this build");
#endif
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

std::unique_ptr<Executable> compile_cuda(Program p) {
  if (std::string why = cuda_unavailable_reason(); !why.empty())
    throw Error("the CUDA backend cannot run: " + why);
  std::string ptx = compile_cuda_ptx(p);
  cuda::CudaModule mod = cuda::emit_cuda_module(p);
  return std::make_unique<CudaKernel>(std::move(p), std::move(mod), ptx);
}

}  // namespace uops
