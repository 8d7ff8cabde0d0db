#include "backends/cuda/cuda_device.h"

#include <map>
#include <mutex>

#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_context.h"
#include "backends/cuda/cuda_emitter.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/wavefront.h"
#include "uops/error.h"

namespace uops::cuda {

using namespace ir;

namespace {

// The driver's device 0 through its primary context, made current once per calling thread.
class DriverDevice : public Device {
 public:
  explicit DriverDevice(const Driver* d) : d_(d) {}

  std::string backend() const override { return "cuda"; }

  std::vector<LoadedProgram> load(const std::vector<Program>& programs) override {
    std::vector<LoadedProgram> out;
    for (const Program& p : programs) {
      CudaModule mod = emit_cuda_module(p);
      std::vector<std::string> names;
      for (auto& k : mod.plan.kernels) names.push_back(k.name);
      out.push_back({std::move(mod.plan), load_source(mod.source, names)});
    }
    return out;
  }

  std::vector<const void*> load_source(const std::string& source,
                                       const std::vector<std::string>& kernels) override {
    std::string ptx = compile_ptx(source, "", nullptr);
    const Driver& d = current();
    CUmodule module;
    // Modules stay loaded as long as the process: executables share the one device.
    d.check(d.cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
    std::vector<const void*> out;
    for (const std::string& name : kernels) {
      CUfunction f;
      d.check(d.cuModuleGetFunction(&f, module, name.c_str()), "cuModuleGetFunction");
      out.push_back(f);
    }
    return out;
  }

  DeviceAddress allocate(size_t bytes, const std::string&, size_t) override {
    const Driver& d = current();
    CUdeviceptr p = 0;
    d.check(d.cuMemAlloc(&p, std::max<size_t>(bytes, 1)), "cuMemAlloc");
    return p;
  }
  void release(DeviceAddress address) noexcept override {
    if (address) current().cuMemFree(address);
  }
  void copy_to_device(DeviceAddress to, const void* from, size_t bytes) override {
    const Driver& d = current();
    d.check(d.cuCtxSynchronize(), "kernel execution");
    if (bytes) d.check(d.cuMemcpyHtoD(to, from, bytes), "cuMemcpyHtoD");
  }
  void copy_to_host(void* to, DeviceAddress from, size_t bytes) override {
    const Driver& d = current();
    d.check(d.cuCtxSynchronize(), "kernel execution");
    if (bytes) d.check(d.cuMemcpyDtoH(to, from, bytes), "cuMemcpyDtoH");
  }
  void copy(DeviceAddress to, DeviceAddress from, size_t bytes, Stream stream) override {
    const Driver& d = current();
    if (bytes) d.check(d.cuMemcpyDtoDAsync(to, from, bytes, CUstream(stream)), "cuMemcpyDtoDAsync");
  }
  void zero(DeviceAddress address, size_t bytes, Stream stream) override {
    const Driver& d = current();
    if (bytes) d.check(d.cuMemsetD8Async(address, 0, bytes, CUstream(stream)), "cuMemsetD8Async");
  }
  void launch(const codegen::KernelPlan&, const void* kernel, codegen::LaunchDims dims, void** args,
              Stream stream) override {
    const Driver& d = current();
    auto f = static_cast<CUfunction>(const_cast<void*>(kernel));
    d.check(d.cuLaunchKernel(f, dims.grid, 1, 1, dims.threads, 1, 1, 0, CUstream(stream), args,
                             nullptr),
            "cuLaunchKernel");
  }
  const void* load_entry(const std::string& source, const std::string& file,
                         const std::string& entry) override {
    std::string lowered;
    std::string ptx = compile_entry_ptx(source, file, entry, &lowered);
    const Driver& d = current();
    CUmodule module;
    d.check(d.cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
    CUfunction f;
    d.check(d.cuModuleGetFunction(&f, module, lowered.c_str()), "cuModuleGetFunction");
    return f;
  }
  void launch_entry(const void* kernel, const unsigned grid[3], const unsigned block[3],
                    unsigned shared_bytes, void** args, Stream stream) override {
    const Driver& d = current();
    auto f = static_cast<CUfunction>(const_cast<void*>(kernel));
    d.check(d.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                             shared_bytes, CUstream(stream), args, nullptr),
            "cuLaunchKernel");
  }
  void synchronize(Stream stream) override {
    const Driver& d = current();
    d.check(stream ? d.cuStreamSynchronize(CUstream(stream)) : d.cuCtxSynchronize(),
            "kernel execution");
  }

 private:
  const Driver& current() const {
    thread_local bool made_current = false;
    if (!made_current) {
      d_->check(d_->cuCtxSetCurrent(d_->context), "cuCtxSetCurrent");
      made_current = true;
    }
    return *d_;
  }

  const Driver* d_;
};

}  // namespace

const void* Device::load_entry(const std::string&, const std::string&, const std::string&) {
  throw Error("this CUDA device (" + backend() + ") runs uops's own kernels only");
}
void Device::launch_entry(const void*, const unsigned*, const unsigned*, unsigned, void**, Stream) {
  throw Error("this CUDA device (" + backend() + ") runs uops's own kernels only");
}

std::shared_ptr<Device> driver_device(std::string* why) {
  if (std::string reason = cuda_unavailable_reason(); !reason.empty()) {
    if (why) *why = reason;
    return nullptr;
  }
  static std::shared_ptr<Device> device = std::make_shared<DriverDevice>(driver(nullptr));
  return device;
}

void launch_kernel(Device& device, const LoadedProgram& program, size_t kernel, const Binding& b,
                   const std::vector<DeviceAddress>& buffers, DeviceAddress error_word,
                   Stream stream) {
  const codegen::KernelPlan& plan = program.plan.kernels.at(kernel);
  codegen::PackedArgs args = codegen::pack_args(plan, b, buffers, error_word);
  device.launch(plan, program.kernels.at(kernel), codegen::launch_dims(plan, b.env()),
                args.pointers.data(), stream);
}

size_t tensor_bytes(const Program& p, const Binding& b, int t) {
  return size_t(element_count(b.shapes[t])) * dtype_size(p.tensors[t].dtype);
}

void launch_program(Device& device, const Program& p, const LoadedProgram& program,
                    const Binding& b, const std::vector<DeviceAddress>& buffers,
                    DeviceAddress error_word, Stream stream) {
  for (size_t t = 0; t < p.tensors.size(); ++t)
    if (program.plan.zero_fill[t]) device.zero(buffers[t], tensor_bytes(p, b, int(t)), stream);
  for (size_t k = 0; k < program.plan.kernels.size(); ++k)
    launch_kernel(device, program, k, b, buffers, error_word, stream);
}

void run_wavefronts(Device& device, const CudaWavefronts& kernels) {
  std::vector<std::string> names;
  for (const CudaWavefrontKernel& k : kernels.kernels) names.push_back(k.name);
  std::vector<const void*> handles = device.load_source(kernels.source, names);
  std::map<Tensor*, DeviceAddress> addresses;
  DeviceAddress error = 0;
  auto release = [&] {
    for (auto& [t, address] : addresses) device.release(address);
    device.release(error);
  };
  try {
    for (const CudaWavefrontKernel& k : kernels.kernels)
      for (size_t a = 0; a < k.buffers.size(); ++a) {
        Tensor* t = k.buffers[a];
        if (addresses.count(t)) continue;
        addresses[t] = device.allocate(t->bytes.size(), k.names[a], dtype_size(t->dtype));
        device.copy_to_device(addresses[t], t->bytes.data(), t->bytes.size());
      }
    error = device.allocate(sizeof(int), "error word", sizeof(int));
    device.zero(error, sizeof(int), nullptr);
    for (size_t i = 0; i < kernels.kernels.size(); ++i) {
      const CudaWavefrontKernel& k = kernels.kernels[i];
      std::vector<DeviceAddress> words;
      for (Tensor* t : k.buffers) words.push_back(addresses.at(t));
      words.push_back(error);
      std::vector<void*> args;
      for (DeviceAddress& w : words) args.push_back(&w);
      codegen::KernelPlan plan;
      plan.name = k.name;
      plan.cooperative = k.barriers;
      plan.args.resize(k.buffers.size());
      device.launch(plan, handles[i], {k.grid, k.threads}, args.data(), nullptr);
    }
    int bits = 0;
    device.copy_to_host(&bits, error, sizeof bits);
    if (bits) throw Error(codegen::kernel_error_message(bits));
    for (auto& [t, address] : addresses)
      device.copy_to_host(t->bytes.data(), address, t->bytes.size());
  } catch (...) {
    release();
    throw;
  }
  release();
}

}  // namespace uops::cuda
