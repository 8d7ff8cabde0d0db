// What a kernel module compiled for the CUDA emulation and the host share: the built-in
// variables and the host's callbacks. Compiled into every module (device_api.h pastes it in
// front of the kernel's source) and included by the host, so both read one definition. Plain C++
// with no includes: the module's compile sees it as text.
#pragma once

namespace uops_emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

enum Access { kRead = 0, kWrite = 1, kAtomic = 2 };

enum WarpOp { kShfl, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll, kSyncWarp, kActiveMask };

// A kernel parameter's type as the module sees it: the host checks a launch's arguments against
// it. kind: 'p' pointer (pointee: 'f' floating, 'i' signed, 'u' unsigned, 'v' void or other, of
// `pointee_bytes`), 'i' signed integer, 'u' unsigned, 'f' floating point, 's' anything else.
struct Param {
  char kind = 's', pointee = 'v';
  unsigned short bytes = 0, pointee_bytes = 0;
};

// One per module (`uops_emu_state`); the host fills the indices before it resumes a thread.
struct State {
  Dim3 thread, block, block_dim, grid_dim;
  void* host = nullptr;
  // Every global and shared access of the kernel's own code, before it happens. A fault never
  // returns: the host abandons the launch.
  void (*access)(void* host, const void* address, unsigned long bytes, int kind, const void* pc);
  // __syncthreads and its counting forms: gives the number of threads whose `predicate` was
  // non-zero.
  int (*barrier)(void* host, int predicate, const void* pc);
  // A warp intrinsic; `value` holds the bits of the lane's operand, `operand` the source lane,
  // delta or lane mask. Gives the bits of the result.
  unsigned long long (*warp)(void* host, int op, unsigned mask, unsigned long long value,
                             int operand, int width, const void* pc);
  void (*fence)(void* host);
  void (*yield)(void* host);
  void (*fault)(void* host, const char* what, const void* pc);
};

}  // namespace uops_emu
