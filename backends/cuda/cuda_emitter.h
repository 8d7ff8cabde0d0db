// CUDA source for a program, printed from its launch plan (backends/codegen/kernel_plan.h),
// which comes back with the kernels' argument lists filled in.
#pragma once

#include <string>

#include "backends/codegen/kernel_plan.h"
#include "uops/ir/program.h"

namespace uops::cuda {

struct CudaModule {
  std::string source;
  codegen::LaunchPlan plan;
};

CudaModule emit_cuda_module(const Program& p);

}  // namespace uops::cuda
