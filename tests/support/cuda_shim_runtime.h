// What the emulated kernels and the host share (see cuda_emulation.h): the CUDA built-in
// variables and the host's callbacks. Pasted in front of cuda_shim.inc in every batch, and
// included by the host, so both sides read one definition.
#pragma once

namespace uops_emu {

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};

enum Kind { kRead = 0, kWrite = 1, kAtomic = 2 };

// Filled by the host before any launch (see cuda_emulation.cpp, EmulationRuntime).
struct Runtime {
  Dim3 thread, block, block_dim, grid_dim;
  // Changes with every block of every launch: shared arrays refill with poison when they see a
  // new one, so a read before the block's first write shows.
  unsigned long long block_serial;
  void* self;
  void (*access)(void* self, const void* address, int kind, bool shared);
  void (*barrier)(void* self);
  // Bytes from `address` to the end of its device allocation (0: none).
  long long (*extent)(void* self, const void* address);
  void (*fault)(void* self, const char* what);
};

}  // namespace uops_emu
