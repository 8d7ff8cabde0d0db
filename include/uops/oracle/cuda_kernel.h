// A hand-written CUDA kernel as an oracle implementation (docs/cuda-kernels.md). The user gives
// the kernel's source, its entry point, what each of its parameters is (a tensor of the op or an
// integer from the case's sizes and parameters) and the launch rule (grid, block and dynamic
// shared memory as expressions of the same); uops allocates, copies, launches and copies back.
// It runs on the GPU where one is present (NVRTC and the driver), and otherwise on the CPU
// emulation of CUDA, which checks every global and shared access of the kernel: out of bounds,
// races between threads no barrier orders, a barrier some threads of a block miss, a read of
// shared memory no thread wrote, a warp intrinsic whose mask names a lane that is not there.
//
//   oracle::CudaKernel k;
//   k.source = read("my_softmax.cu");
//   k.file = "my_softmax.cu";
//   k.entry = "softmax_rows";
//   k.args = {"x", "y", "x_n0", "x_n1"};  // float*, float*, int rows, int cols
//   k.grid = "x_n0";
//   k.block = "256";
//   auto report = oracle::check(find_op("softmax"), oracle::cuda_kernel(find_op("softmax"), k));
//
// Expressions are index expressions (docs/design.md §3.1) over names: `T_nA` is the size of axis
// A of tensor T (an input or output of the op), and an op parameter is its own name (`$name` is
// accepted too); `+ - * / %` (floor division), `min(a, b)`, `max(a, b)` and parentheses.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uops/oracle/harness.h"

namespace uops::oracle {

struct CudaKernel {
  std::string source;  // CUDA C++
  std::string file;    // where the source came from: messages, source lines and the replay
  // A __global__ function's name, or a template's instance ("softmax_rows<256>"); C++ names are
  // fine (no extern "C" needed).
  std::string entry;
  // One entry per kernel parameter, in order: a tensor of the op ("x", "y": its device pointer,
  // of the check's dtype), or an integer expression, passed as a 32-bit int unless it ends in a
  // type (":i64", ":u32", ":u64", ":f32", ":f64").
  std::vector<std::string> args;
  // "X", "X,Y" or "X,Y,Z" (missing ones are 1); each an expression.
  std::string grid = "1", block = "1";
  std::string shared_bytes = "0";  // dynamic shared memory (extern __shared__), in bytes
};

enum class CudaTarget {
  automatic,  // the GPU where this build has NVRTC and the machine a device, else the emulation
  device,     // the GPU, or an error saying why there is none
  emulation,  // the CPU emulation with its detectors, wherever it runs
};

// The implementation that runs `kernel` for `op`: compiled once, on first use (a compile error
// is a uops::Error with the compiler's message, lines in terms of `file`). Outputs start filled
// with NaN (0xff bytes) on the emulation, so an element the kernel never writes shows. A
// detector's finding is a uops::Error starting "CUDA emulation: ", naming the kernel, the block
// and thread indices and, where known, the source line; the oracle reports it against the case.
Implementation cuda_kernel(const OpDef& op, const CudaKernel& kernel,
                           CudaTarget target = CudaTarget::automatic);

// Where `target` resolves on this machine: "cuda" (the GPU) or "cuda-emulation"; the reason the
// GPU is not used goes to `why` when it is not.
std::string cuda_kernel_backend(CudaTarget target, std::string* why = nullptr);

// Checks `kernel` against `op` on random cases; the report's backend says where it ran
// ("cuda" or "cuda-emulation"), and its replay reruns the same kernel.
CheckReport check_cuda_kernel(const OpDef& op, const CudaKernel& kernel,
                              const CheckOptions& options = {},
                              CudaTarget target = CudaTarget::automatic);

// A kernel already compiled into your own program (nvcc, a library), launched by your own code
// on device memory uops prepares: inputs copied to the GPU, outputs allocated at the op's shapes
// and filled with NaN bytes, then copied back after `launch` returns and the device is
// synchronized. Addresses are CUdeviceptr values (cudaMalloc's pointers, as integers).
struct DeviceTensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  unsigned long long address = 0;
};
using DeviceTensorMap = std::map<std::string, DeviceTensor>;
using DeviceLaunch = std::function<void(const DeviceTensorMap& inputs,
                                        const DeviceTensorMap& outputs, const ParamMap& params)>;
// Needs a GPU: without one, calling the implementation is a uops::Error saying why.
Implementation on_device(const OpDef& op, DeviceLaunch launch);

}  // namespace uops::oracle
