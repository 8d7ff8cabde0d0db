#include "backends/cuda/cuda_emitter.h"

#include <algorithm>

#include "backends/codegen/kernel_writer.h"
#include "backends/codegen/parallel.h"
#include "uops/backends/cuda/cuda_backend.h"

namespace uops::cuda {

namespace {

using codegen::KernelWriter;
using codegen::Names;
using codegen::pad;

bool bounds_use_vars(const Loop& l) {
  return uses_any_var(l.start) || uses_any_var(l.end);
}

// Whether loop variable `var` appears in the index of any store of the block.
bool indexes_a_store(const Block& b, int var) {
  for (auto& l : b.loops)
    for (auto& s : l.stmts)
      if (s.kind != StmtKind::reduce)
        for (auto& e : s.index)
          if (uses_var(e, var)) return true;
  return false;
}

// How many outer loops go to the grid: each independent (atomics allowed), all but the last
// without statements of their own, so that the flattened index covers them exactly. Once the
// grid holds a loop whose iterations are exclusive, a loop that only reduces (its variable
// indexes no store, like matmul's k) runs per thread instead: on the grid, every one of its
// iterations would be an atomic on the same element.
size_t grid_loops(const Program& p, const Block& b) {
  auto par = codegen::loop_parallelism(p, b);
  size_t m = 0;
  bool exclusive_on_grid = false;
  for (size_t k = 0; k < b.loops.size(); ++k) {
    if (!par[k].with_atomics || bounds_use_vars(b.loops[k])) break;
    if (exclusive_on_grid && !par[k].exclusive && !indexes_a_store(b, b.loops[k].var)) break;
    exclusive_on_grid |= par[k].exclusive && !codegen::runs_once(b.loops[k]);
    m = k + 1;
    if (b.loops[k].is_pivot()) break;
  }
  return m;
}

// A cooperative reduction: the loops after the grid loops only reduce, in the innermost one,
// into scalars the last grid loop owns, with ops whose partial results combine.
bool cooperative(const Block& b, size_t m) {
  if (m == 0 || m >= b.loops.size()) return false;
  const Loop& owner = b.loops[m - 1];
  if (owner.carried.empty()) return false;
  for (size_t k = m; k + 1 < b.loops.size(); ++k)
    if (b.loops[k].is_pivot()) return false;
  const Loop& inner = b.loops.back();
  if (!inner.carried.empty() || inner.stmts.empty()) return false;
  for (auto& s : inner.stmts) {
    if (s.kind != StmtKind::reduce || is_arg_reduce(s.op)) return false;
    bool owned = false;
    for (auto& c : owner.carried) owned |= c.id == s.carried;
    if (!owned) return false;
  }
  for (auto& c : owner.carried)
    if (is_arg_reduce(c.op)) return false;
  return true;
}

void value_vars(const Value& v, std::vector<int>& out) {
  if (!v) return;
  for (auto& e : v->index) collect_vars(e, out);
  if (v->ivalue) collect_vars(v->ivalue, out);
  value_vars(v->a, out);
  value_vars(v->b, out);
  value_vars(v->c, out);
}

bool var_used(const Block& b, int var) {
  std::vector<int> vars;
  for (auto& l : b.loops) {
    collect_vars(l.start, vars);
    collect_vars(l.end, vars);
    for (auto& s : l.stmts) {
      for (auto& e : s.index) collect_vars(e, vars);
      if (s.arg) collect_vars(s.arg, vars);
      value_vars(s.value, vars);
    }
  }
  return std::find(vars.begin(), vars.end(), var) != vars.end();
}

// `const int64_t v1 = start + g % e1;` ... for loops [from, to) flattened into `flat`; loops
// whose variable nothing reads are only counted.
std::string unflatten(KernelWriter& w, const Block& b, size_t from, size_t to,
                      const std::string& flat, const std::string& prefix, int indent) {
  std::string s, rest = flat;
  for (size_t k = to; k-- > from;) {
    const Loop& l = b.loops[k];
    std::string e = prefix + std::to_string(k);
    std::string v = Names::var(l.var);
    std::string start = w.index(l.start);
    std::string pos = k == from ? rest : rest + " % " + e;
    if (var_used(b, l.var))
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

std::string kernel_body(KernelWriter& w, const Block& b, size_t m, bool coop) {
  const Program& p = w.program();
  std::set<int> atomic = codegen::colliding_tensors(p, b, int(m));
  std::string s;
  if (m == 0) {
    // Nothing independent: one thread runs the nest in order.
    s += "  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n";
    w.loop(b, 0, 1, s);
    return s;
  }
  s += extents(w, b, 0, m, "e", "total", 1);
  const Loop& owner = b.loops[m - 1];
  if (!coop) {
    s += "  for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < total;\n"
         "       g += (int64_t)gridDim.x * blockDim.x) {\n";
    s += unflatten(w, b, 0, m, "g", "e", 2);
    w.declare_carried(b, owner, 2, s);
    if (m < b.loops.size()) w.loop(b, m, 2, s, nullptr, atomic);
    w.statements(b, owner, 2, s, atomic);
    return s + "  }\n";
  }
  s += "  __shared__ " + std::string(w.scalar()) + " partial[256];\n";
  s += "  for (int64_t g = blockIdx.x; g < total; g += gridDim.x) {\n";
  s += unflatten(w, b, 0, m, "g", "e", 2);
  w.declare_carried(b, owner, 2, s);
  s += extents(w, b, m, b.loops.size(), "f", "count", 2);
  s += "    for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {\n";
  s += unflatten(w, b, m, b.loops.size(), "r", "f", 3);
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

CudaModule emit_cuda_module(const Program& p) {
  CudaModule mod;
  KernelWriter w(p, codegen::Dialect::cuda);
  std::string kernels;
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    const Block b = codegen::exclusive_loops_first(p, p.blocks[bi]);
    KernelInfo info;
    info.block = int(bi);
    info.name = "block" + std::to_string(bi);
    info.grid_loops = grid_loops(p, b);
    for (size_t l = 0; l < info.grid_loops; ++l)
      info.grid_extents.push_back(idx::sub(b.loops[l].end, b.loops[l].start));
    info.cooperative = cooperative(b, info.grid_loops);
    w.reset_usage();
    std::string body = kernel_body(w, b, info.grid_loops, info.cooperative);
    std::string sig;
    const Names& names = w.names();
    for (int t : w.used_tensors()) {
      const TensorInfo& ti = p.tensors[t];
      std::string type = KernelWriter::element_type(ti.dtype);
      if (ti.role == Role::input) type = "const " + type;
      sig += type + " *__restrict__ " + names.tensors[t] + ", ";
      info.args.push_back({KernelArg::tensor, t, 0, ""});
    }
    for (auto [t, a] : w.used_sizes()) {
      sig += "int64_t " + names.size(t, a) + ", ";
      info.args.push_back({KernelArg::size, t, a, ""});
    }
    for (auto& q : p.params)
      if (w.used_params().count(q)) {
        sig += "int64_t " + names.param(q) + ", ";
        info.args.push_back({KernelArg::param, -1, 0, q});
      }
    kernels += "\n/* block " + std::to_string(bi) + ": " + b.origin +
               (info.cooperative ? " (cooperative reduction)" : "") + " */\n";
    kernels += "extern \"C\" __global__ void " + info.name + "(" + sig + "int *error) {\n";
    if (w.uses_error_flag()) kernels += "  int err = 0;\n";
    kernels += body;
    if (w.uses_error_flag())
      kernels += "  if (err) atomicOr(error, err);\n";
    else
      kernels += "  (void)error;\n";
    kernels += "}\n";
    mod.kernels.push_back(std::move(info));
  }
  mod.source =
      "/* Generated by uops: one kernel per block; see uops/backends/cuda/cuda_backend.h. */\n"
      "typedef long long int64_t;\ntypedef unsigned long long uint64_t;\ntypedef int int32_t;\n"
      "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fffffff)\n\n" +
      codegen::helper_definitions(w.used_helpers(), codegen::Dialect::cuda) + kernels;
  return mod;
}

}  // namespace uops::cuda

namespace uops {

std::string emit_cuda(const Program& p) {
  return cuda::emit_cuda_module(p).source;
}

}  // namespace uops
