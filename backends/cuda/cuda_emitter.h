// CUDA source for a program plus what the launcher needs to know about each kernel.
#pragma once

#include <string>
#include <vector>

#include "uops/ir/program.h"

namespace uops::cuda {

struct KernelArg {
  enum Kind { tensor, size, param } kind = tensor;
  int tensor_id = -1;  // tensor, size
  int axis = 0;        // size
  std::string name;    // param
};

struct KernelInfo {
  std::string name;
  int block = 0;
  bool cooperative = false;  // one thread block per grid element, threads share the reduction
  // The loops mapped to the grid, and for a cooperative kernel the loops its threads split.
  size_t grid_loops = 0;
  // end - start of each grid loop, in the order the kernel runs them (which may differ from the
  // block's: see codegen::exclusive_loops_first).
  std::vector<Index> grid_extents;
  std::vector<KernelArg> args;  // then `int *error`
};

struct CudaModule {
  std::string source;
  std::vector<KernelInfo> kernels;
};

CudaModule emit_cuda_module(const Program& p);

}  // namespace uops::cuda
