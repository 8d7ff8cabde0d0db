// The kernel Executable::run_into() calls for a program, called directly: compiled from the same
// source (the kernel cache gives the same object), on the arguments run_into() builds, into
// outputs and temporaries allocated once (the kernel writes the zeros its program starts from
// itself, on every call: cgen::Zeros::by_entry). What run() is measured against (issue 30:
// run() within 5% of its bare kernel). Where the C backend would run the program's packed variant
// (uops/passes/packed_variant.h) for these sizes, it is the variant's entry point.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <vector>

#include "backends/c/c_compiler.h"
#include "backends/c/c_emitter.h"
#include "uops/backends/c/c_backend.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/passes/packed_variant.h"

namespace uops::bench {

class BareKernel {
 public:
  BareKernel(const Program& program, const CCompileOptions& o, const TensorMap& inputs,
             const ParamMap& params)
      : program_(program),
        threads_(o.threads > 0 ? o.threads
                               : std::max(1, int(std::thread::hardware_concurrency()))) {
    const char* entry = "uops_kernel";
    ir::Binding b = ir::bind(program, inputs, params);
    // As run_into() chooses: the variant where its copies pay and fit in the memory budget.
    auto variant = o.packed_variant ? packed_variant(program) : std::nullopt;
    if (variant && packed_variant_pays(variant->copies, b.env())) {
      try {
        b = ir::bind(variant->program, inputs, params);
        program_ = std::move(variant->program);
        entry = "uops_kernel_packed";
      } catch (const LimitError&) {
      }
    }
    void* handle =
        cgen::compile_and_load(cgen::emit_c_unit({&program_}, {entry}, cgen::cpu_target(o)), o);
    fn_ = reinterpret_cast<Fn>(dlsym(handle, entry));
    if (!fn_) std::abort();
    own_.resize(program_.tensors.size());
    for (size_t t = 0; t < program_.tensors.size(); ++t) {
      const ir::TensorInfo& info = program_.tensors[t];
      sizes_.insert(sizes_.end(), b.shapes[t].begin(), b.shapes[t].end());
      if (info.role == ir::Role::input) {
        pointers_.push_back(const_cast<unsigned char*>(inputs.at(info.name).bytes.data()));
      } else {
        own_[t] = Tensor(info.dtype, b.shapes[t]);
        pointers_.push_back(own_[t].bytes.data());
      }
    }
    for (auto& name : program_.params) values_.push_back(b.params.at(name));
  }

  // Aborts on an error bit: the arguments are the ones run_into() accepted.
  void operator()() const {
    if (fn_(pointers_.data(), sizes_.data(), values_.data(), threads_)) std::abort();
  }
  // The program it runs (the packed variant where that runs) and its outputs and temporaries,
  // as allocated (per tensor id; inputs empty).
  const Program& program() const { return program_; }
  const std::vector<Tensor>& buffers() const { return own_; }

 private:
  using Fn = int (*)(void* const*, const int64_t*, const int64_t*, int);
  Program program_;
  Fn fn_ = nullptr;
  int threads_;
  std::vector<Tensor> own_;
  std::vector<void*> pointers_;
  std::vector<int64_t> sizes_, values_;
};

}  // namespace uops::bench
