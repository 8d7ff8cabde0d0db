// The launch plan of a program's GPU kernels: everything decided about a kernel before its
// source is printed (how the block maps onto the grid), and everything the host needs to launch
// it (argument order and packing, grid and block sizes, which buffers start at zero, the error
// word). The CUDA printer only prints a plan; the CUDA backend and the CPU emulation of the tests
// launch from the same plan, so the three cannot drift apart.
//
// One kernel per block. The block's loops [0, grid_loops) are flattened into one grid index
// that a grid-stride loop covers; a cooperative kernel gives each grid index a thread block
// whose threads split the remaining loops and combine their partial carried scalars in shared
// memory. Accumulations into `atomic` tensors may collide across threads and use atomics.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "uops/ir/binding.h"
#include "uops/ir/program.h"

namespace uops::codegen {

using namespace ir;

struct KernelArg {
  enum Kind { tensor, size, param } kind = tensor;
  int tensor_id = -1;  // tensor, size
  int axis = 0;        // size
  std::string name;    // param
};

struct KernelPlan {
  std::string name;  // the kernel's symbol: block<N>
  int block = 0;
  // The block as the kernel runs it: exclusive loops first (see exclusive_loops_first).
  Block loops;
  size_t grid_loops = 0;
  bool cooperative = false;
  std::set<int> atomic;             // tensors whose accumulations use atomics
  std::vector<bool> var_read;       // per loop of `loops`: its variable appears in the block
  std::vector<Index> grid_extents;  // end - start of each grid loop
  // The kernel's parameters in order, as the printer used them; then `int *error`.
  std::vector<KernelArg> args;
};

struct LaunchPlan {
  static constexpr unsigned threads_per_block = 256;  // also the shared partial-sum array's size
  static constexpr unsigned max_grid = 65535;
  std::vector<KernelPlan> kernels;
  std::vector<bool> zero_fill;  // per tensor: the buffer must start at zero (inputs: false)
};

// The mapping decisions for every block; `args` stay empty until the printer fills them.
LaunchPlan plan_launch(const Program& p);

struct LaunchDims {
  unsigned grid = 1, threads = 1;
};
LaunchDims launch_dims(const KernelPlan& k, const IndexEnv& env);

// The argument words of one launch, in the kernel's parameter order: a device address per
// tensor, the int64 sizes and parameters, then the error word's address. `pointers` is what a
// launch takes (cuLaunchKernel's kernelParams): one pointer per parameter into `words`.
using DeviceAddress = unsigned long long;  // a CUdeviceptr
struct PackedArgs {
  std::vector<uint64_t> words;
  std::vector<void*> pointers;

  PackedArgs() = default;
  PackedArgs(PackedArgs&&) = default;
  PackedArgs(const PackedArgs&) = delete;  // `pointers` point into `words`
};
PackedArgs pack_args(const KernelPlan& k, const Binding& b,
                     const std::vector<DeviceAddress>& buffers, DeviceAddress error_word);

}  // namespace uops::codegen
