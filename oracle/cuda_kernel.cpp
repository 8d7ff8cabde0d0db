#include "uops/oracle/cuda_kernel.h"

#include <cstring>
#include <map>
#include <mutex>

#include "backends/cuda/cuda_device.h"
#include "backends/cuda_emulation/emulator.h"
#include "backends/cuda_emulation/module.h"
#include "uops/ir/binding.h"
#include "uops/parser/parser.h"

namespace uops::oracle {

namespace {

using ir::Index;

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\n"), b = s.find_last_not_of(" \t\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// One kernel parameter as the launch rule gives it.
struct Arg {
  std::string text;
  int tensor = -1;  // program tensor id, or -1 for a scalar
  Index value;      // a scalar's expression
  char kind = 'i';  // 'i' signed, 'u' unsigned, 'f' floating point
  int bytes = 4;
};

Index parse_rule(const std::string& text, const std::string& what) {
  ParseOptions o;
  o.allow_loop_vars = false;
  o.bare_names = true;
  try {
    return parse_index(text, o).expr;
  } catch (const Error& e) {
    throw Error("CUDA kernel launch rule, " + what + ": " + e.what());
  }
}

std::vector<Index> parse_dims(const std::string& text, const std::string& what) {
  std::vector<Index> out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '(') ++depth;
    if (i < text.size() && text[i] == ')') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      out.push_back(parse_rule(trim(text.substr(start, i - start)), what));
      start = i + 1;
    }
  }
  if (out.size() > 3) throw Error("CUDA kernel launch rule: " + what + " has more than 3 axes");
  while (out.size() < 3) out.push_back(ir::idx::constant(1));
  return out;
}

// The kernel as prepared once: the op's program (for output shapes), the parsed rule, and the
// compiled module on the place it runs.
struct Prepared {
  OpDef op;
  CudaKernel kernel;
  CudaTarget target;
  std::string backend;
  std::vector<Arg> args;
  std::vector<Index> grid, block;
  Index shared;
  std::mutex mutex;
  std::map<DType, Program> programs;
  // The emulation:
  std::shared_ptr<const cuda_emulation::Module> module;
  std::unique_ptr<cuda_emulation::Emulator> emulator;
  // The GPU:
  std::shared_ptr<cuda::Device> device;
  const void* function = nullptr;
};

std::shared_ptr<Prepared> prepare(const OpDef& op, const CudaKernel& k, CudaTarget target) {
  auto p = std::make_shared<Prepared>();
  p->op = op;
  p->kernel = k;
  p->target = target;
  p->backend = cuda_kernel_backend(target);
  if (trim(k.entry).empty()) throw Error("CUDA kernel: no entry point given");
  Program prog = forward_program(op, DType::f32);
  for (const std::string& raw : k.args) {
    Arg a;
    a.text = trim(raw);
    for (size_t t = 0; t < prog.tensors.size(); ++t)
      if (prog.tensors[t].role != ir::Role::temporary && prog.tensors[t].name == a.text)
        a.tensor = int(t);
    if (a.tensor < 0) {
      std::string expr = a.text;
      if (size_t colon = expr.rfind(':'); colon != std::string::npos) {
        std::string type = trim(expr.substr(colon + 1));
        static const std::map<std::string, std::pair<char, int>> types = {
            {"i32", {'i', 4}}, {"i64", {'i', 8}}, {"u32", {'u', 4}},
            {"u64", {'u', 8}}, {"f32", {'f', 4}}, {"f64", {'f', 8}}};
        auto it = types.find(type);
        if (it == types.end())
          throw Error("CUDA kernel argument '" + a.text + "': unknown type '" + type +
                      "' (i32, i64, u32, u64, f32, f64)");
        a.kind = it->second.first;
        a.bytes = it->second.second;
        expr = expr.substr(0, colon);
      }
      a.value = parse_rule(trim(expr), "argument '" + a.text + "'");
    }
    p->args.push_back(std::move(a));
  }
  p->grid = parse_dims(k.grid, "grid");
  p->block = parse_dims(k.block, "block");
  p->shared = parse_rule(trim(k.shared_bytes), "shared memory");
  return p;
}

// Sizes (`x_n0`) and parameters of one case.
ir::IndexEnv case_env(const Program& prog, const ir::Binding& b) {
  ir::IndexEnv env;
  env.param = [&prog, &b](const std::string& name) -> int64_t {
    if (auto it = b.params.find(name); it != b.params.end()) return it->second;
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
      const std::string& n = prog.tensors[t].name;
      if (prog.tensors[t].role == ir::Role::temporary || name.rfind(n + "_n", 0) != 0) continue;
      std::string axis = name.substr(n.size() + 2);
      if (axis.empty() || axis.find_first_not_of("0123456789") != std::string::npos) continue;
      size_t a = std::stoul(axis);
      if (a < b.shapes[t].size()) return b.shapes[t][a];
    }
    throw Error("CUDA kernel launch rule: unknown name '" + name +
                "' (sizes are TENSOR_nAXIS such as x_n0; parameters by their names)");
  };
  return env;
}

// The compiled kernel on its place, made on the first call (and checked against the rule).
void load(Prepared& p) {
  if (p.backend == "cuda") {
    if (p.function) return;
    p.device = cuda::driver_device(nullptr);
    p.function = p.device->load_entry(p.kernel.source, p.kernel.file, p.kernel.entry);
    return;
  }
  if (p.module) return;
  p.module = cuda_emulation::load_module(p.kernel.source, p.kernel.file, {p.kernel.entry});
  p.emulator = std::make_unique<cuda_emulation::Emulator>();
  const auto& params = p.module->entries[0].params;
  if (params.size() != p.args.size())
    throw Error("CUDA kernel " + p.kernel.entry + " takes " + std::to_string(params.size()) +
                " parameters, and the launch rule gives " + std::to_string(p.args.size()));
}

// Checks argument i against the kernel's parameter as the emulation's module declares it.
void check_param(const Prepared& p, size_t i, DType dtype, char kind, int bytes) {
  if (!p.module) return;
  const uops_emu::Param& q = p.module->entries[0].params[i];
  std::string where = "CUDA kernel " + p.kernel.entry + ", parameter " + std::to_string(i + 1) +
                      " ('" + p.args[i].text + "')";
  if (kind == 'p') {
    if (q.kind != 'p')
      throw Error(where + ": the rule passes a tensor, the kernel takes no pointer");
    char want = dtype == DType::i32 ? 'i' : 'f';
    if (q.pointee != 'v' && (q.pointee != want || q.pointee_bytes != dtype_size(dtype)))
      throw Error(where + ": the kernel's pointer is to " + std::to_string(q.pointee_bytes) +
                  "-byte elements of another type than the tensor's " + dtype_name(dtype));
    return;
  }
  if (q.kind == 'p' || q.kind == 's' || q.bytes != bytes || (q.kind == 'f') != (kind == 'f'))
    throw Error(where + ": the kernel takes a " + std::to_string(q.bytes) + "-byte " +
                (q.kind == 'p'   ? "pointer"
                 : q.kind == 'f' ? "floating-point value"
                                 : "value") +
                ", the rule passes a " + std::to_string(bytes) + "-byte " +
                (kind == 'f' ? "floating-point value" : "integer") +
                " (add a type such as ':i64' to the argument)");
}

TensorMap run_case(Prepared& p, const TensorMap& inputs, const ParamMap& params) {
  std::lock_guard lock(p.mutex);
  DType dtype = inputs.empty() ? DType::f32 : inputs.begin()->second.dtype;
  for (auto& [name, t] : inputs)
    if (t.dtype != DType::i32) dtype = t.dtype;
  auto it = p.programs.find(dtype);
  if (it == p.programs.end()) it = p.programs.emplace(dtype, forward_program(p.op, dtype)).first;
  const Program& prog = it->second;
  ir::Binding b = ir::bind(prog, inputs, params);
  ir::IndexEnv env = case_env(prog, b);
  load(p);
  auto dim = [&](const std::vector<Index>& d, const char* what) {
    uops_emu::Dim3 out;
    unsigned* xyz[3] = {&out.x, &out.y, &out.z};
    for (int i = 0; i < 3; ++i) {
      int64_t v = ir::evaluate(d[size_t(i)], env);
      if (v < 1 || v > (int64_t(1) << 31) - 1)
        throw Error(std::string("CUDA kernel launch rule: the ") + what + "'s " + "xyz"[i] +
                    " is " + std::to_string(v) + " for this case");
      *xyz[i] = unsigned(v);
    }
    return out;
  };
  uops_emu::Dim3 grid = dim(p.grid, "grid"), block = dim(p.block, "block");
  int64_t shared = ir::evaluate(p.shared, env);
  if (shared < 0) throw Error("CUDA kernel launch rule: negative shared memory");
  // Device buffers: inputs copied in, outputs filled with 0xff (NaN) so an element the kernel
  // never writes shows.
  std::vector<uintptr_t> buffers(prog.tensors.size(), 0);
  auto allocate = [&](size_t t, size_t bytes) -> uintptr_t {
    size_t element = dtype_size(prog.tensors[t].dtype);
    if (p.emulator) return p.emulator->allocate(bytes, prog.tensors[t].name, element, 0xff);
    uintptr_t a = p.device->allocate(bytes, prog.tensors[t].name, element);
    return a;
  };
  auto release = [&] {
    for (uintptr_t a : buffers)
      if (a) p.emulator ? p.emulator->release(a) : p.device->release(a);
  };
  TensorMap out;
  try {
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
      const ir::TensorInfo& info = prog.tensors[t];
      if (info.role == ir::Role::input) {
        const Tensor& in = inputs.at(info.name);
        buffers[t] = allocate(t, in.bytes.size());
        if (p.emulator)
          std::memcpy(p.emulator->host(buffers[t], in.bytes.size()), in.bytes.data(),
                      in.bytes.size());
        else
          p.device->copy_to_device(buffers[t], in.bytes.data(), in.bytes.size());
      } else if (info.role == ir::Role::output) {
        out.emplace(info.name, Tensor::uninitialized(info.dtype, b.shapes[t]));
        size_t bytes = out.at(info.name).bytes.size();
        buffers[t] = allocate(t, bytes);
        if (!p.emulator) {
          std::vector<unsigned char> nan(bytes, 0xff);
          p.device->copy_to_device(buffers[t], nan.data(), bytes);
        }
      }
    }
    // Argument values, each of its declared size, and a pointer to each.
    std::vector<std::array<unsigned char, 8>> words(p.args.size());
    std::vector<void*> pointers;
    for (size_t i = 0; i < p.args.size(); ++i) {
      const Arg& a = p.args[i];
      unsigned char* w = words[i].data();
      if (a.tensor >= 0) {
        if (!buffers[size_t(a.tensor)])
          throw Error("CUDA kernel argument '" + a.text + "' is neither an input nor an output");
        check_param(p, i, prog.tensors[size_t(a.tensor)].dtype, 'p', 8);
        std::memcpy(w, &buffers[size_t(a.tensor)], 8);
      } else {
        check_param(p, i, dtype, a.kind, a.bytes);
        int64_t v = ir::evaluate(a.value, env);
        if (a.kind == 'f') {
          double d = double(v);
          float f = float(v);
          a.bytes == 8 ? std::memcpy(w, &d, 8) : std::memcpy(w, &f, 4);
        } else if (a.bytes == 8) {
          std::memcpy(w, &v, 8);
        } else {
          if (v < INT32_MIN || v > (a.kind == 'u' ? int64_t(UINT32_MAX) : INT32_MAX))
            throw Error("CUDA kernel argument '" + a.text + "' is " + std::to_string(v) +
                        ", which does not fit 32 bits (give it a type such as ':i64')");
          auto v32 = uint32_t(v);
          std::memcpy(w, &v32, 4);
        }
      }
      pointers.push_back(w);
    }
    if (p.emulator) {
      cuda_emulation::Launch l;
      l.module = p.module.get();
      l.entry = p.module->entries[0].call;
      l.args = pointers.data();
      l.grid = grid;
      l.block = block;
      l.dynamic_shared = size_t(shared);
      l.kernel = p.kernel.entry;
      p.emulator->launch(l);
    } else {
      unsigned g[3] = {grid.x, grid.y, grid.z}, bl[3] = {block.x, block.y, block.z};
      p.device->launch_entry(p.function, g, bl, unsigned(shared), pointers.data(), nullptr);
    }
    for (size_t t = 0; t < prog.tensors.size(); ++t) {
      const ir::TensorInfo& info = prog.tensors[t];
      if (info.role != ir::Role::output) continue;
      Tensor& o = out.at(info.name);
      if (p.emulator)
        std::memcpy(o.bytes.data(), p.emulator->host(buffers[t], o.bytes.size()), o.bytes.size());
      else
        p.device->copy_to_host(o.bytes.data(), buffers[t], o.bytes.size());
    }
  } catch (...) {
    release();
    throw;
  }
  release();
  return out;
}

}  // namespace

std::string cuda_kernel_backend(CudaTarget target, std::string* why) {
  if (target == CudaTarget::emulation) return "cuda-emulation";
  std::string reason;
  if (cuda::driver_device(&reason)) return "cuda";
  if (target == CudaTarget::device) throw Error("no CUDA device to run the kernel on: " + reason);
  if (why) *why = reason;
  return "cuda-emulation";
}

Implementation on_device(const OpDef& op, DeviceLaunch launch) {
  struct State {
    OpDef op;
    DeviceLaunch launch;
    std::mutex mutex;
    std::map<DType, Program> programs;
  };
  auto st = std::make_shared<State>();
  st->op = op;
  st->launch = std::move(launch);
  return [st](const TensorMap& inputs, const ParamMap& params) {
    std::lock_guard lock(st->mutex);
    std::string why;
    std::shared_ptr<cuda::Device> device = cuda::driver_device(&why);
    if (!device) throw Error("no CUDA device for the device-pointer implementation: " + why);
    DType dtype = DType::f32;
    for (auto& [name, t] : inputs)
      if (t.dtype != DType::i32) dtype = t.dtype;
    auto it = st->programs.find(dtype);
    if (it == st->programs.end())
      it = st->programs.emplace(dtype, forward_program(st->op, dtype)).first;
    const Program& prog = it->second;
    ir::Binding b = ir::bind(prog, inputs, params);
    DeviceTensorMap in, outs;
    TensorMap out;
    std::vector<uintptr_t> buffers;
    auto release = [&] {
      for (uintptr_t a : buffers) device->release(a);
    };
    try {
      for (size_t t = 0; t < prog.tensors.size(); ++t) {
        const ir::TensorInfo& info = prog.tensors[t];
        if (info.role == ir::Role::temporary) continue;
        DeviceTensor d{info.dtype, b.shapes[t], 0};
        if (info.role == ir::Role::input) {
          const Tensor& src = inputs.at(info.name);
          d.address = device->allocate(src.bytes.size(), info.name, dtype_size(info.dtype));
          buffers.push_back(d.address);
          device->copy_to_device(d.address, src.bytes.data(), src.bytes.size());
          in.emplace(info.name, d);
        } else {
          Tensor o = Tensor::uninitialized(info.dtype, b.shapes[t]);
          d.address = device->allocate(o.bytes.size(), info.name, dtype_size(info.dtype));
          buffers.push_back(d.address);
          std::vector<unsigned char> nan(o.bytes.size(), 0xff);
          device->copy_to_device(d.address, nan.data(), nan.size());
          outs.emplace(info.name, d);
          out.emplace(info.name, std::move(o));
        }
      }
      st->launch(in, outs, params);
      for (auto& [name, d] : outs) {
        Tensor& o = out.at(name);
        device->copy_to_host(o.bytes.data(), d.address, o.bytes.size());  // synchronizes
      }
    } catch (...) {
      release();
      throw;
    }
    release();
    return out;
  };
}

Implementation cuda_kernel(const OpDef& op, const CudaKernel& kernel, CudaTarget target) {
  std::shared_ptr<Prepared> p = prepare(op, kernel, target);
  return
      [p](const TensorMap& inputs, const ParamMap& params) { return run_case(*p, inputs, params); };
}

CheckReport check_cuda_kernel(const OpDef& op, const CudaKernel& kernel,
                              const CheckOptions& options, CudaTarget target) {
  CheckOptions o = options;
  std::string where = cuda_kernel_backend(target);
  if (o.backend.empty()) o.backend = where;
  return check(op, cuda_kernel(op, kernel, target), o);
}

}  // namespace uops::oracle
