// uops's own CUDA kernels on the product's emulation (backends/cuda_emulation): the generated
// source compiles as it is, each program of a batch in a namespace of its own (its typedefs and
// helpers stay apart) with its kernels renamed by a macro (their C names would clash).
#include "support/cuda_emulation.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <mutex>

#include "backends/cuda/cuda_emitter.h"
#include "backends/cuda/cuda_program.h"
#include "backends/cuda_emulation/emulator.h"
#include "backends/cuda_emulation/module.h"
#include "uops/error.h"

namespace uops::testing {

using namespace ir;

namespace {

// One program's source in namespace `ns`, its kernels `ns`_NAME.
std::string wrapped(const std::string& source, const std::string& ns,
                    const std::vector<std::string>& kernels) {
  std::string s;
  for (const std::string& k : kernels) s += "#define " + k + " " + ns + "_" + k + "\n";
  s += "namespace " + ns + " {\n" + source + "\n}  // namespace " + ns + "\n";
  for (const std::string& k : kernels) s += "#undef " + k + "\n";
  return s;
}

class EmulatedDevice : public cuda::Device {
 public:
  EmulatedDevice(SourceEdit edit, unsigned max_grid)
      : edit_(std::move(edit)), max_grid_(max_grid) {}

  std::string backend() const override { return "cuda-emulation"; }

  std::vector<cuda::LoadedProgram> load(const std::vector<Program>& programs) override {
    std::string source;
    std::vector<std::string> entries;
    std::vector<cuda::LoadedProgram> out(programs.size());
    for (size_t i = 0; i < programs.size(); ++i) {
      cuda::CudaModule mod = cuda::emit_cuda_module(programs[i]);
      std::string ns = "uops_p" + std::to_string(i);
      std::vector<std::string> names;
      for (auto& k : mod.plan.kernels) {
        names.push_back(k.name);
        entries.push_back(ns + "::" + ns + "_" + k.name);
      }
      source += wrapped(edit_ ? edit_(mod.source) : mod.source, ns, names);
      out[i].plan = std::move(mod.plan);
    }
    auto module = cuda_emulation::load_module(source, "<generated>", entries);
    std::lock_guard lock(mutex_);
    size_t e = 0;
    for (auto& p : out)
      for (size_t k = 0; k < p.plan.kernels.size(); ++k) {
        kernels_.push_back({module, &module->entries[e++]});
        p.kernels.push_back(&kernels_.back());
      }
    return out;
  }

  std::vector<const void*> load_source(const std::string& cuda,
                                       const std::vector<std::string>& kernels) override {
    std::vector<std::string> entries;
    for (const std::string& k : kernels) entries.push_back("uops_raw::uops_raw_" + k);
    auto module = cuda_emulation::load_module(
        wrapped(edit_ ? edit_(cuda) : cuda, "uops_raw", kernels), "<generated>", entries);
    std::lock_guard lock(mutex_);
    std::vector<const void*> out;
    for (size_t k = 0; k < kernels.size(); ++k) {
      kernels_.push_back({module, &module->entries[k]});
      out.push_back(&kernels_.back());
    }
    return out;
  }

  codegen::DeviceAddress allocate(size_t bytes, const std::string& name, size_t element) override {
    std::lock_guard lock(mutex_);
    return emu_.allocate(bytes, name, element, 0xff);
  }
  void release(codegen::DeviceAddress address) noexcept override {
    std::lock_guard lock(mutex_);
    emu_.release(uintptr_t(address));
  }
  void copy_to_device(codegen::DeviceAddress to, const void* from, size_t bytes) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memcpy(emu_.host(uintptr_t(to), bytes), from, bytes);
  }
  void copy_to_host(void* to, codegen::DeviceAddress from, size_t bytes) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memcpy(to, emu_.host(uintptr_t(from), bytes), bytes);
  }
  void copy(codegen::DeviceAddress to, codegen::DeviceAddress from, size_t bytes,
            cuda::Stream) override {
    std::lock_guard lock(mutex_);
    if (bytes)
      std::memcpy(emu_.host(uintptr_t(to), bytes), emu_.host(uintptr_t(from), bytes), bytes);
  }
  void zero(codegen::DeviceAddress address, size_t bytes, cuda::Stream) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memset(emu_.host(uintptr_t(address), bytes), 0, bytes);
  }
  void launch(const codegen::KernelPlan& plan, const void* kernel, codegen::LaunchDims dims,
              void** args, cuda::Stream) override {
    std::lock_guard lock(mutex_);
    auto* k = static_cast<const Kernel*>(kernel);
    if (k->entry->params.size() != plan.args.size() + 1)
      throw Error("CUDA emulation: launch plan and kernel disagree on the argument count");
    cuda_emulation::Launch l;
    l.module = k->module.get();
    l.entry = k->entry->call;
    l.args = args;
    l.grid = {max_grid_ > 0 ? std::min(dims.grid, max_grid_) : dims.grid, 1, 1};
    l.block = {dims.threads, 1, 1};
    l.kernel = plan.name;
    l.barriers = plan.cooperative;
    emu_.launch(l);
  }
  void synchronize(cuda::Stream) override {}  // every call above has finished when it returns

 private:
  struct Kernel {
    std::shared_ptr<const cuda_emulation::Module> module;
    const cuda_emulation::Module::Entry* entry;
  };

  SourceEdit edit_;
  unsigned max_grid_;
  std::mutex mutex_;
  cuda_emulation::Emulator emu_;
  std::deque<Kernel> kernels_;  // stable addresses: the handles of LoadedProgram
};

}  // namespace

std::shared_ptr<cuda::Device> emulated_cuda_device(const SourceEdit& edit, unsigned max_grid) {
  return std::make_shared<EmulatedDevice>(edit, max_grid);
}

std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(std::vector<Program> programs,
                                                            const SourceEdit& edit,
                                                            unsigned max_grid) {
  return emulate_cuda_batch(emulated_cuda_device(edit, max_grid), std::move(programs));
}

std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(
    const std::shared_ptr<cuda::Device>& device, std::vector<Program> programs) {
  std::vector<cuda::LoadedProgram> loaded = device->load(programs);
  std::vector<std::unique_ptr<Executable>> out;
  for (size_t i = 0; i < programs.size(); ++i)
    out.push_back(
        std::make_unique<cuda::CudaProgram>(device, std::move(programs[i]), std::move(loaded[i])));
  return out;
}

std::unique_ptr<Executable> emulate_cuda(Program p, const SourceEdit& edit, unsigned max_grid) {
  std::vector<Program> one;
  one.push_back(std::move(p));
  return std::move(emulate_cuda_batch(std::move(one), edit, max_grid).front());
}

}  // namespace uops::testing
