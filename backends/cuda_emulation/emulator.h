// The CUDA emulation: kernels compiled as host C++ (module.h) run on the CPU with every global
// and shared access checked (docs/cuda-kernels.md). Blocks run one after another; the threads of
// a block are fibers of one OS thread, switched at barriers, warp intrinsics and now and then
// while one spins, so __syncthreads and the warp intrinsics behave as on a device with
// independent thread scheduling. Warps are 32 consecutive threads of the block (x fastest).
//
// What it finds, each a uops::Error starting "CUDA emulation: " with the kernel, the block and
// thread indices and the source line where the module has one:
// - an access outside every allocation, past the end of a shared array or past the launch's
//   dynamic shared memory ("out of bounds"); the access never happens;
// - two threads touching one element where one makes a plain write (against any other access,
//   atomics included) with no barrier (or __syncwarp of both) between them, or from different
//   blocks ("race");
//   a block's writes followed by its __threadfence count as published to later blocks;
// - a read of shared memory no thread of the block has written ("uninitialised");
// - __syncthreads reached by some threads of a block while others exited ("__syncthreads");
// - a warp intrinsic whose mask names a lane that does not exist, has exited or waits
//   elsewhere, or a shuffle from a lane outside the mask ("mask");
// - an integer division by zero, and a launch running past its time limit.
// Memory the host allocates starts filled with `fill` bytes (0xff: NaN, -1), shared memory with
// 0xff at the start of every block, so a value nobody wrote shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cuda_emulation/abi.h"

namespace uops::cuda_emulation {

struct Module;

struct Launch {
  const Module* module = nullptr;
  void (*entry)(void**) = nullptr;  // the module's call stub of the kernel
  void** args = nullptr;            // one pointer per kernel parameter, to a value of its type
  uops_emu::Dim3 grid, block;
  size_t dynamic_shared = 0;  // bytes
  std::string kernel;         // its name in reports
  // False where the launch plan says the kernel needs no block cooperation: a __syncthreads is
  // then the plan's error (uops's own kernels only).
  bool barriers = true;
};

class Emulator {
 public:
  Emulator();
  ~Emulator();
  Emulator(const Emulator&) = delete;
  Emulator& operator=(const Emulator&) = delete;

  // Device memory: `bytes` (at least one) filled with `fill`; `name` and `element` (bytes per
  // element) label the reports. Far from every other allocation, so an index past the end of
  // one never lands in the next.
  uintptr_t allocate(size_t bytes, const std::string& name, size_t element, unsigned char fill);
  void release(uintptr_t address) noexcept;
  // The host address of `bytes` bytes at `address`; an Error unless they lie in one allocation.
  unsigned char* host(uintptr_t address, size_t bytes);

  // Runs the launch to its end; an Error for the first fault found (the launch stops there).
  void launch(const Launch& launch);

  // Seconds a launch may run before it is stopped (an endless loop, or a spin-wait on another
  // block, which the emulation runs later). Default 60, or $UOPS_EMULATION_TIMEOUT.
  void set_time_limit(double seconds);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uops::cuda_emulation
