#include "uops/backends/c/c_backend.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <thread>

#include "backends/backend_entries.h"
#include "backends/c/c_compiler.h"
#include "backends/c/c_emitter.h"
#include "backends/codegen/kernel_writer.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/passes/packed_variant.h"

namespace uops {

using namespace ir;

namespace {

using KernelFn = int (*)(void* const*, const int64_t*, const int64_t*, int);

// A compiled program and its function, which writes the zeros the program starts from itself
// (cgen::Zeros::by_entry): outputs and temporaries are allocated uninitialized.
struct Compiled {
  Program p;
  KernelFn fn = nullptr;
};

class CKernel : public Executable {
 public:
  CKernel(Program p, KernelFn fn, int threads) : plain_{std::move(p), fn}, threads_(threads) {}
  // With the packed variant (uops/passes/packed_variant.h), run where it pays.
  CKernel(Program p, KernelFn fn, PackedVariant v, KernelFn packed, int threads)
      : plain_{std::move(p), fn},
        packed_{std::move(v.program), packed},
        copies_(std::move(v.copies)),
        threads_(threads) {}

  TensorMap run(const TensorMap& inputs, const ParamMap& params) const override {
    TensorMap out;
    run_into(inputs, out, params);
    return out;
  }
  void run_into(const TensorMap& inputs, TensorMap& outputs,
                const ParamMap& params) const override {
    Binding b = bind(plain_.p, inputs, params);
    if (packed_.fn && packed_variant_pays(copies_, b.env())) {
      std::optional<Binding> with_copies;
      try {
        with_copies = bind(packed_.p, inputs, params);
      } catch (const LimitError&) {
        // The copies do not fit in the memory budget where the program does: run the program.
      }
      if (with_copies) return run_compiled(packed_, *with_copies, inputs, outputs);
    }
    run_compiled(plain_, b, inputs, outputs);
  }
  std::string backend() const override { return "c"; }
  const Program& program() const override { return plain_.p; }

 private:
  void run_compiled(const Compiled& c, const Binding& b, const TensorMap& inputs,
                    TensorMap& outputs) const {
    const Program& p = c.p;
    std::vector<Tensor> temporaries(p.tensors.size());
    std::vector<void*> pointers;
    std::vector<int64_t> sizes;
    pointers.reserve(p.tensors.size());
    sizes.reserve(4 * p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorInfo& info = p.tensors[t];
      sizes.insert(sizes.end(), b.shapes[t].begin(), b.shapes[t].end());
      if (info.role == Role::input) {
        pointers.push_back(const_cast<unsigned char*>(inputs.at(info.name).bytes.data()));
        continue;
      }
      Tensor* dst = &temporaries[t];
      if (info.role == Role::output) {
        dst = &outputs[info.name];
        if (dst->dtype == info.dtype && dst->shape == b.shapes[t] &&
            int64_t(dst->bytes.size()) == dst->numel() * int64_t(dtype_size(info.dtype))) {
          pointers.push_back(dst->bytes.data());
          continue;
        }
      }
      *dst = Tensor::uninitialized(info.dtype, b.shapes[t]);
      pointers.push_back(dst->bytes.data());
    }
    std::vector<int64_t> values;
    for (auto& name : p.params) values.push_back(b.params.at(name));
    if (int rc = c.fn(pointers.data(), sizes.data(), values.data(), threads_))
      throw Error(codegen::kernel_error_message(rc));
  }

  Compiled plain_, packed_;
  std::vector<PackedOnce> copies_;
  int threads_;
};

KernelFn entry(void* handle, const std::string& name) {
  auto fn = reinterpret_cast<KernelFn>(dlsym(handle, name.c_str()));
  UOPS_ASSERT(fn, "compiled kernel lacks its entry point " + name);
  return fn;
}

}  // namespace

std::unique_ptr<Executable> compile_c(Program p, const CCompileOptions& options) {
  auto variant = options.packed_variant ? packed_variant(p) : std::nullopt;
  if (!variant) {
    void* handle = cgen::compile_and_load(emit_c(p, options), options);
    return std::make_unique<CKernel>(std::move(p), entry(handle, "uops_kernel"),
                                     cgen::kernel_threads(options));
  }
  // The functions emit_c prints in one unit, compiled as two units side by side: the variant
  // doubles the source, not the wait.
  void* packed = nullptr;
  std::exception_ptr packed_error;
  std::thread compiler([&] {
    try {
      packed = cgen::compile_and_load(
          cgen::emit_c_unit({&variant->program}, {"uops_kernel_packed"}, cgen::cpu_target(options)),
          options);
    } catch (...) {
      packed_error = std::current_exception();
    }
  });
  void* handle = nullptr;
  try {
    handle = cgen::compile_and_load(
        cgen::emit_c_unit({&p}, {"uops_kernel"}, cgen::cpu_target(options)), options);
  } catch (...) {
    compiler.join();
    throw;
  }
  compiler.join();
  if (packed_error) std::rethrow_exception(packed_error);
  return std::make_unique<CKernel>(std::move(p), entry(handle, "uops_kernel"), std::move(*variant),
                                   entry(packed, "uops_kernel_packed"),
                                   cgen::kernel_threads(options));
}

Backend c_backend() {
  return {"c", "generated C, compiled by the system compiler", [] { return std::string(); },
          [](Program p) { return compile_c(std::move(p)); },
          [](const Program& p) { return emit_c(p); }};
}

std::vector<std::unique_ptr<Executable>> compile_c_batch(std::vector<Program> programs,
                                                         const CCompileOptions& options) {
  // Chunks keep each translation unit small enough that the compiler calls run in parallel.
  constexpr size_t kChunk = 16;
  size_t chunks = (programs.size() + kChunk - 1) / kChunk;
  std::vector<void*> handles(chunks);
  std::vector<std::string> errors(chunks);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t c; (c = next++) < chunks;) {
      std::vector<const Program*> ps;
      std::vector<std::string> entries;
      for (size_t i = c * kChunk; i < std::min(programs.size(), (c + 1) * kChunk); ++i) {
        ps.push_back(&programs[i]);
        entries.push_back("uops_kernel_" + std::to_string(i));
      }
      try {
        handles[c] = cgen::compile_and_load(
            cgen::emit_c_unit(ps, entries, cgen::cpu_target(options)), options);
      } catch (const Error& e) {
        errors[c] = e.what();
      }
    }
  };
  std::vector<std::thread> workers;
  size_t n = std::min<size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  for (size_t i = 0; i < n; ++i) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  for (auto& e : errors)
    if (!e.empty()) throw Error(e);
  std::vector<std::unique_ptr<Executable>> out;
  for (size_t i = 0; i < programs.size(); ++i)
    out.push_back(std::make_unique<CKernel>(
        std::move(programs[i]), entry(handles[i / kChunk], "uops_kernel_" + std::to_string(i)),
        cgen::kernel_threads(options)));
  return out;
}

}  // namespace uops
