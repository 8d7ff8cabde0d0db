#include "uops/backends/cuda_runtime_nodes.h"

#include <set>

#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_device.h"
#include "backends/scheduled/chain_binding.h"
#include "uops/error.h"
#include "uops/ir/binding.h"

namespace uops {

using namespace ir;

struct CudaChainNodes::State {
  struct Step {
    ChainStep chain;
    Binding binding;
    std::vector<cuda::DeviceAddress> buffers;  // per program tensor
    cuda::LoadedProgram loaded;
    cuda::DeviceAddress error = 0;  // the error bits of the step's kernels
  };
  std::shared_ptr<cuda::Device> device;
  TensorTypeMap types;  // per buffer name
  std::map<std::string, cuda::DeviceAddress> addresses;
  std::vector<cuda::DeviceAddress> owned;  // every allocation, buffers and temporaries
  std::vector<Step> steps;

  cuda::DeviceAddress allocate(size_t bytes, const std::string& name, DType dtype) {
    owned.push_back(device->allocate(bytes, name, dtype_size(dtype)));
    return owned.back();
  }
  ~State() {
    for (cuda::DeviceAddress a : owned) device->release(a);
  }
};

namespace {

size_t buffer_bytes(const TensorType& t) {
  return size_t(element_count(t.shape)) * dtype_size(t.dtype);
}

}  // namespace

CudaChainNodes::CudaChainNodes(std::vector<ChainStep> steps, TensorMap inputs)
    : CudaChainNodes(std::move(steps), std::move(inputs), [] {
        std::string why;
        std::shared_ptr<cuda::Device> device = cuda::driver_device(&why);
        if (!device) throw Error("the CUDA glue cannot run: " + why);
        return device;
      }()) {}

CudaChainNodes::CudaChainNodes(std::vector<ChainStep> steps, TensorMap inputs,
                               std::shared_ptr<cuda::Device> device)
    : state_(std::make_shared<State>()) {
  State& s = *state_;
  s.device = std::move(device);
  for (auto& [name, tensor] : inputs) s.types[name] = {tensor.dtype, tensor.shape};

  // Every step binds before anything is allocated, so a misuse leaves nothing behind.
  s.steps.resize(steps.size());
  std::vector<std::vector<std::string>> names;
  for (size_t i = 0; i < steps.size(); ++i) {
    State::Step& step = s.steps[i];
    step.chain = std::move(steps[i]);
    const Program& p = step.chain.program;
    names.push_back(chain::bound_names(step.chain));
    TensorTypeMap step_in = chain::step_inputs(step.chain, names[i], s.types);
    try {
      step.binding = uops::bind(p, step_in, step.chain.params);
    } catch (const Error& e) {
      throw Error("step '" + step.chain.label + "': " + e.what());
    }
    for (int t : p.outputs())
      chain::output_buffer(step.chain, names[i][t], p.tensors[t].dtype, step.binding.shapes[t],
                           s.types);
  }

  for (auto& [name, type] : s.types) {
    s.addresses[name] = s.allocate(buffer_bytes(type), name, type.dtype);
    if (auto it = inputs.find(name); it != inputs.end())
      s.device->copy_to_device(s.addresses[name], it->second.bytes.data(), it->second.bytes.size());
  }
  std::vector<Program> programs;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    State::Step& step = s.steps[i];
    const Program& p = step.chain.program;
    for (size_t t = 0; t < p.tensors.size(); ++t)
      step.buffers.push_back(p.tensors[t].role == Role::temporary
                                 ? s.allocate(cuda::tensor_bytes(p, step.binding, int(t)),
                                              p.tensors[t].name, p.tensors[t].dtype)
                                 : s.addresses.at(names[i][t]));
    step.error = s.allocate(sizeof(int), step.chain.label + ": error word", DType::i32);
    s.device->zero(step.error, sizeof(int), nullptr);
    programs.push_back(p);
  }
  std::vector<cuda::LoadedProgram> loaded = s.device->load(programs);
  for (size_t i = 0; i < s.steps.size(); ++i) s.steps[i].loaded = std::move(loaded[i]);
}

void CudaChainNodes::add_to(runtime::GraphBuilder& builder) const {
  // Each node's work, enqueued on a stream; on the CPU executor, on the default stream and
  // waited for.
  auto add = [&](std::string name, std::function<void(cuda::Stream)> work,
                 std::vector<runtime::BufferId> reads, std::vector<runtime::BufferId> writes) {
    runtime::Node node;
    node.name = std::move(name);
    node.cpu = [work, device = state_->device] {
      work(nullptr);
      device->synchronize(nullptr);
    };
    node.cuda = std::move(work);
    node.reads = std::move(reads);
    node.writes = std::move(writes);
    builder.add(std::move(node));
  };
  for (size_t i = 0; i < state_->steps.size(); ++i) {
    const State::Step& s = state_->steps[i];
    const Program& p = s.chain.program;
    auto id = [&](int t) { return runtime::BufferId(s.buffers[t]); };

    std::vector<runtime::BufferId> zeroed = {runtime::BufferId(s.error)};
    for (size_t t = 0; t < p.tensors.size(); ++t)
      if (s.loaded.plan.zero_fill[t]) zeroed.push_back(id(int(t)));
    add(
        s.chain.label + ": zero",
        [state = state_, i](cuda::Stream stream) {
          const State::Step& s = state->steps[i];
          const Program& p = s.chain.program;
          for (size_t t = 0; t < p.tensors.size(); ++t)
            if (s.loaded.plan.zero_fill[t])
              state->device->zero(s.buffers[t], cuda::tensor_bytes(p, s.binding, int(t)), stream);
          state->device->zero(s.error, sizeof(int), stream);
        },
        {}, zeroed);

    for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
      std::set<int> reads, writes;
      chain::reads_and_writes(p.blocks[bi], reads, writes);
      // The kernels' atomicOr into the error word commute, so it counts as a read: that orders
      // each kernel after the zero node and the next run's zero node after every kernel.
      std::vector<runtime::BufferId> read_ids = {runtime::BufferId(s.error)}, write_ids;
      for (int t : reads) read_ids.push_back(id(t));
      for (int t : writes) write_ids.push_back(id(t));
      std::string name =
          s.chain.label + ": block " + std::to_string(bi) + " (" + p.blocks[bi].origin + ")";
      add(
          name,
          [state = state_, i, bi](cuda::Stream stream) {
            const State::Step& s = state->steps[i];
            cuda::launch_kernel(*state->device, s.loaded, bi, s.binding, s.buffers, s.error,
                                stream);
          },
          read_ids, write_ids);
    }
  }
}

Tensor CudaChainNodes::read(const std::string& buffer) const {
  auto it = state_->types.find(buffer);
  if (it == state_->types.end()) throw Error("no buffer named '" + buffer + "'");
  for (const State::Step& s : state_->steps) {
    int bits = 0;
    state_->device->copy_to_host(&bits, s.error, sizeof bits);
    if (bits) throw Error("step '" + s.chain.label + "': " + codegen::kernel_error_message(bits));
  }
  Tensor out = Tensor::uninitialized(it->second.dtype, it->second.shape);
  state_->device->copy_to_host(out.bytes.data(), state_->addresses.at(buffer), out.bytes.size());
  return out;
}

void CudaChainNodes::write(const std::string& buffer, const Tensor& value) {
  auto it = state_->types.find(buffer);
  if (it == state_->types.end()) throw Error("no buffer named '" + buffer + "'");
  const TensorType& b = it->second;
  if (b.dtype != value.dtype || b.shape != value.shape)
    throw Error("buffer '" + buffer + "' is " + dtype_name(b.dtype) + " " + shape_text(b.shape) +
                ", not " + dtype_name(value.dtype) + " " + value.shape_text());
  state_->device->copy_to_device(state_->addresses.at(buffer), value.bytes.data(),
                                 value.bytes.size());
}

DeviceTensor CudaChainNodes::device_tensor(const std::string& buffer) const {
  auto it = state_->types.find(buffer);
  if (it == state_->types.end()) throw Error("no buffer named '" + buffer + "'");
  return {state_->addresses.at(buffer), it->second.dtype, it->second.shape};
}

}  // namespace uops
