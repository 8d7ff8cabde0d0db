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

// `device_functions`: each kernel is instead a `__device__ void` taking its virtual block index
// and grid size (unsigned vblock, unsigned vgrid) before its parameters, for a kernel that runs
// several kernels' blocks in one launch (backends/scheduled/wavefront.cpp); the plan is the same.
CudaModule emit_cuda_module(const Program& p, bool device_functions = false);

}  // namespace uops::cuda
