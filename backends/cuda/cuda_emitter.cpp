#include "backends/cuda/cuda_emitter.h"

#include <algorithm>

#include "backends/codegen/kernel_writer.h"
#include "uops/backends/cuda/cuda_backend.h"

namespace uops::cuda {

using namespace ir;

namespace {

using codegen::KernelWriter;
using codegen::Names;
using codegen::pad;

// `const int64_t v1 = start + g % e1;` ... for loops [from, to) flattened into `flat`; loops
// whose variable nothing reads are only counted.
std::string unflatten(KernelWriter& w, const codegen::KernelPlan& kp, size_t from, size_t to,
                      const std::string& flat, const std::string& prefix, int indent) {
  std::string s, rest = flat;
  for (size_t k = to; k-- > from;) {
    const Loop& l = kp.loops.loops[k];
    std::string e = prefix + std::to_string(k);
    std::string v = Names::var(l.var);
    std::string start = w.index(l.start);
    std::string pos = k == from ? rest : rest + " % " + e;
    if (kp.var_read[k])
      s += pad(indent) + "const int64_t " + v + " = " + (start == "0" ? pos : start + " + " + pos) +
           ";\n";
    if (k > from) rest = "(" + rest + " / " + e + ")";
  }
  return s;
}

std::string extents(KernelWriter& w, const Block& b, size_t from, size_t to,
                    const std::string& prefix, const std::string& total, int indent) {
  std::string s, product;
  for (size_t k = from; k < to; ++k) {
    const Loop& l = b.loops[k];
    std::string e = prefix + std::to_string(k);
    s += pad(indent) + "const int64_t " + e + " = " + w.helper("max_i64") + "(" +
         w.index(idx::sub(l.end, l.start)) + ", 0);\n";
    product += (product.empty() ? "" : " * ") + e;
  }
  return s + pad(indent) + "const int64_t " + total + " = " + (product.empty() ? "1" : product) +
         ";\n";
}

std::string combine(KernelWriter& w, ReduceOp op, const std::string& a, const std::string& b) {
  const char* suffix = w.scalar()[0] == 'f' ? "f" : "";
  switch (op) {
    case ReduceOp::prod:
      return a + " * " + b;
    case ReduceOp::max:
      return w.helper(std::string("reduce_max") + suffix) + "(" + a + ", " + b + ")";
    case ReduceOp::min:
      return w.helper(std::string("reduce_min") + suffix) + "(" + a + ", " + b + ")";
    default:
      return a + " + " + b;
  }
}

// `block` and `grid` spell the block index and grid size: blockIdx.x and gridDim.x, or a
// device function's virtual ones.
std::string kernel_body(KernelWriter& w, const codegen::KernelPlan& kp, const std::string& block,
                        const std::string& grid) {
  const Block& b = kp.loops;
  const size_t m = kp.grid_loops;
  const std::set<int>& atomic = kp.atomic;
  std::string s;
  if (m == 0) {
    // Nothing independent: one thread runs the nest in order.
    s += "  if (" + block + " != 0 || threadIdx.x != 0) return;\n";
    w.loop(b, 0, 1, s);
    return s;
  }
  s += extents(w, b, 0, m, "e", "total", 1);
  const Loop& owner = b.loops[m - 1];
  if (!kp.cooperative) {
    s += "  for (int64_t g = (int64_t)" + block + " * blockDim.x + threadIdx.x; g < total;\n" +
         "       g += (int64_t)" + grid + " * blockDim.x) {\n";
    s += unflatten(w, kp, 0, m, "g", "e", 2);
    w.declare_carried(b, owner, 2, s);
    if (m < b.loops.size()) w.loop(b, m, 2, s, nullptr, atomic);
    w.statements(b, owner, 2, s, atomic);
    return s + "  }\n";
  }
  s += "  __shared__ " + std::string(w.scalar()) + " partial[" +
       std::to_string(codegen::LaunchPlan::threads_per_block) + "];\n";
  s += "  for (int64_t g = " + block + "; g < total; g += " + grid + ") {\n";
  s += unflatten(w, kp, 0, m, "g", "e", 2);
  w.declare_carried(b, owner, 2, s);
  s += extents(w, b, m, b.loops.size(), "f", "count", 2);
  s += "    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {\n";
  s += unflatten(w, kp, m, b.loops.size(), "r", "f", 3);
  w.statements(b, b.loops.back(), 3, s);
  s += "    }\n";
  for (auto& c : owner.carried) {
    if (!w.carried_is_read(b, c.id)) continue;
    std::string name = Names::carried(c.id);
    s += "    partial[threadIdx.x] = " + name + ";\n    __syncthreads();\n";
    s += "    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {\n";
    s += "      if (threadIdx.x < half)\n        partial[threadIdx.x] = " +
         combine(w, c.op, "partial[threadIdx.x]", "partial[threadIdx.x + half]") + ";\n";
    s += "      __syncthreads();\n    }\n";
    s += "    " + name + " = partial[0];\n    __syncthreads();\n";
  }
  s += "    if (threadIdx.x == 0) {\n";
  w.statements(b, owner, 3, s, atomic);
  return s + "    }\n  }\n";
}

}  // namespace

CudaModule emit_cuda_module(const Program& p, bool device_functions) {
  CudaModule mod{"", codegen::plan_launch(p)};
  const codegen::Dialect& dialect = codegen::cuda_dialect();
  KernelWriter w(p, dialect);
  std::string kernels;
  for (codegen::KernelPlan& kp : mod.plan.kernels) {
    using codegen::KernelArg;
    w.reset_usage();
    std::string body = device_functions ? kernel_body(w, kp, "vblock", "vgrid")
                                        : kernel_body(w, kp, "blockIdx.x", "gridDim.x");
    std::string sig;
    const Names& names = w.names();
    for (int t : w.used_tensors()) {
      const TensorInfo& ti = p.tensors[t];
      std::string type = KernelWriter::element_type(ti.dtype);
      if (ti.role == Role::input) type = "const " + type;
      sig += type + " *" + dialect.restrict_pointer + " " + names.tensors[t] + ", ";
      kp.args.push_back({KernelArg::tensor, t, 0, ""});
    }
    for (auto [t, a] : w.used_sizes()) {
      sig += "int64_t " + names.size(t, a) + ", ";
      kp.args.push_back({KernelArg::size, t, a, ""});
    }
    std::string constants;  // fixed parameters, which the kernel does not take
    for (auto& q : p.params)
      if (w.used_params().count(q)) {
        std::string fixed = w.fixed_param_declaration(q);
        constants += fixed;
        if (!fixed.empty()) continue;
        sig += "int64_t " + names.param(q) + ", ";
        kp.args.push_back({KernelArg::param, -1, 0, q});
      }
    kernels += "\n/* block " + std::to_string(kp.block) + ": " + kp.loops.origin +
               (kp.cooperative ? " (cooperative reduction)" : "") + " */\n";
    kernels += device_functions
                   ? "__device__ void " + kp.name + "(unsigned vblock, unsigned vgrid, "
                   : "extern \"C\" __global__ void " + kp.name + "(";
    kernels += sig + "int *error) {\n" + constants;
    if (w.uses_error_flag()) kernels += "  int err = 0;\n";
    kernels += body;
    if (w.uses_error_flag())
      kernels += "  if (err) atomicOr(error, err);\n";
    else
      kernels += "  (void)error;\n";
    kernels += "}\n";
  }
  mod.source =
      "/* Generated by uops: one kernel per block; see uops/backends/cuda/cuda_backend.h. */\n"
      "typedef long long int64_t;\ntypedef unsigned long long uint64_t;\ntypedef int int32_t;\n"
      "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n\n" +
      codegen::helper_definitions(w.used_helpers(), w.used_atomics(), dialect) + kernels;
  return mod;
}

}  // namespace uops::cuda

namespace uops {

std::string emit_cuda(const Program& p) {
  return cuda::emit_cuda_module(p).source;
}

}  // namespace uops
