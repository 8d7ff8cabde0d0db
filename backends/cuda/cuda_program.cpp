#include "backends/cuda/cuda_program.h"

#include "backends/codegen/kernel_writer.h"
#include "uops/error.h"

namespace uops::cuda {

using namespace ir;

namespace {

// Device memory released when the scope ends, however it ends.
struct Allocations {
  Device& device;
  std::vector<DeviceAddress> owned;

  DeviceAddress add(size_t bytes, const std::string& name, size_t element) {
    owned.push_back(device.allocate(bytes, name, element));
    return owned.back();
  }
  ~Allocations() {
    for (DeviceAddress a : owned) device.release(a);
  }
};

}  // namespace

CudaProgram::CudaProgram(std::shared_ptr<Device> device, Program p, LoadedProgram loaded)
    : device_(std::move(device)), p_(std::move(p)), loaded_(std::move(loaded)) {}

void CudaProgram::launch_and_check(const Binding& b, const std::vector<DeviceAddress>& buffers,
                                   Stream stream) const {
  Allocations scratch{*device_, {}};
  DeviceAddress error = scratch.add(sizeof(int), "error word", sizeof(int));
  device_->zero(error, sizeof(int), stream);
  launch_program(*device_, p_, loaded_, b, buffers, error, stream);
  device_->synchronize(stream);
  int bits = 0;
  device_->copy_to_host(&bits, error, sizeof bits);
  if (bits) throw Error(codegen::kernel_error_message(bits));
}

TensorMap CudaProgram::run(const TensorMap& inputs, const ParamMap& params) const {
  Binding b = ir::bind(p_, inputs, params);
  Allocations memory{*device_, {}};
  std::vector<DeviceAddress> buffers;
  for (size_t t = 0; t < p_.tensors.size(); ++t) {
    const TensorInfo& info = p_.tensors[t];
    size_t bytes = tensor_bytes(p_, b, int(t));
    buffers.push_back(memory.add(bytes, info.name, dtype_size(info.dtype)));
    if (info.role == Role::input)
      device_->copy_to_device(buffers[t], inputs.at(info.name).bytes.data(), bytes);
  }
  launch_and_check(b, buffers, nullptr);
  TensorMap out;
  for (int t : p_.outputs()) {
    Tensor x = Tensor::uninitialized(p_.tensors[t].dtype, b.shapes[t]);
    device_->copy_to_host(x.bytes.data(), buffers[t], x.bytes.size());
    out[p_.tensors[t].name] = std::move(x);
  }
  return out;
}

void CudaProgram::run_on_device(const DeviceTensorMap& tensors, const ParamMap& params,
                                Stream stream) const {
  TensorTypeMap inputs;
  for (auto& [name, tensor] : tensors) {
    int t = p_.find_tensor(name);
    if (t < 0 || p_.tensors[t].role == Role::temporary)
      throw Error("'" + name + "' is no input or output of the program");
    if (p_.tensors[t].role == Role::input) inputs[name] = {tensor.dtype, tensor.shape};
  }
  Binding b = ir::bind(p_, inputs, params);
  Allocations temporaries{*device_, {}};
  std::vector<DeviceAddress> buffers;
  for (size_t t = 0; t < p_.tensors.size(); ++t) {
    const TensorInfo& info = p_.tensors[t];
    if (info.role == Role::temporary) {
      buffers.push_back(
          temporaries.add(tensor_bytes(p_, b, int(t)), info.name, dtype_size(info.dtype)));
      continue;
    }
    auto it = tensors.find(info.name);
    if (it == tensors.end()) throw Error("missing output '" + info.name + "'");
    const DeviceTensor& given = it->second;
    if (info.role == Role::output && (given.dtype != info.dtype || given.shape != b.shapes[t]))
      throw Error("output '" + info.name + "' is " + dtype_name(given.dtype) + " " +
                  shape_text(given.shape) + ", but the program writes " + dtype_name(info.dtype) +
                  " " + shape_text(b.shapes[t]));
    if (!given.address && tensor_bytes(p_, b, int(t)))
      throw Error("tensor '" + info.name + "' has no device address");
    buffers.push_back(given.address);
  }
  launch_and_check(b, buffers, stream);
}

}  // namespace uops::cuda
