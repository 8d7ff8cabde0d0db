// A CUDA source compiled for the emulation: the device API (device_api.h) in front of the
// kernel's own text, compiled as host C++ with the access instrumentation, through the kernel
// cache, and loaded. What the emulator needs of it is read from the module itself: its
// shared-memory state, its shared arrays (by their tagged names in the symbol table), its
// mapped ranges and its entry points with their parameter types.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda_emulation/abi.h"

namespace uops::cuda_emulation {

struct Module {
  uops_emu::State* state = nullptr;
  std::string file;   // the source's name, as its lines are reported
  std::string bytes;  // the loaded shared object (for source lines)
  uintptr_t load_bias = 0;
  std::vector<std::pair<uintptr_t, uintptr_t>> segments;  // [begin, end) of each mapping
  struct SharedArray {
    std::string name;               // "softmax_rows::partial"
    uint64_t offset = 0, size = 0;  // in the module's thread-local block
  };
  std::vector<SharedArray> shared;
  uint64_t dynamic_offset = 0;  // of the dynamic shared memory, in the thread-local block
  size_t dynamic_capacity = 0;
  void* (*dynamic_base)() = nullptr;  // its address on the calling thread
  struct Entry {
    std::string name;
    void (*call)(void**) = nullptr;
    std::vector<uops_emu::Param> params;
  };
  std::vector<Entry> entries;

  // "file:line" of a code address in the module, or "" where it has none.
  std::string source_line(const void* pc) const;
};

// Compiles `source` (CUDA C++, named `file` in messages and lines) with entry points `entries`
// (C++ names of __global__ functions or template instances). A compile error is a uops::Error
// with the compiler's message.
std::shared_ptr<const Module> load_module(const std::string& source, const std::string& file,
                                          const std::vector<std::string>& entries);

// The device API's text (abi.h and device_api.h), as compiled in front of every source.
const std::string& device_api_text();

}  // namespace uops::cuda_emulation
