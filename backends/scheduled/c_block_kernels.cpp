#include "backends/scheduled/c_block_kernels.h"

#include <dlfcn.h>

#include <string>

#include "backends/c/c_compiler.h"
#include "backends/c/c_emitter.h"
#include "uops/error.h"

namespace uops::cgen {

std::string block_entry(size_t program, size_t block) {
  return "uops_block_" + std::to_string(program) + "_" + std::to_string(block);
}

std::string block_kernels_source(const std::vector<Program>& programs, const CpuTarget& target) {
  // The emitter declares only the tensors, sizes and parameters a function uses, so a copy that
  // keeps one block still indexes the full tensor table and sizes array at the same positions.
  std::vector<Program> singles;
  std::vector<std::string> entries;
  for (size_t i = 0; i < programs.size(); ++i)
    for (size_t b = 0; b < programs[i].blocks.size(); ++b) {
      Program single = programs[i];
      single.blocks = {programs[i].blocks[b]};
      singles.push_back(std::move(single));
      entries.push_back(block_entry(i, b));
    }
  std::vector<const Program*> pointers;
  for (const Program& p : singles) pointers.push_back(&p);
  return emit_c_unit(pointers, entries, target, Zeros::by_caller);
}

std::vector<std::vector<BlockFn>> compile_block_kernels(const std::vector<Program>& programs,
                                                        const CCompileOptions& options) {
  std::vector<std::vector<BlockFn>> kernels(programs.size());
  size_t blocks = 0;
  for (const Program& p : programs) blocks += p.blocks.size();
  if (blocks == 0) return kernels;
  void* handle = compile_and_load(block_kernels_source(programs, cpu_target(options)), options);

  for (size_t i = 0; i < programs.size(); ++i)
    for (size_t b = 0; b < programs[i].blocks.size(); ++b) {
      auto fn = reinterpret_cast<BlockFn>(dlsym(handle, block_entry(i, b).c_str()));
      UOPS_ASSERT(fn, "compiled unit lacks its entry point " + block_entry(i, b));
      kernels[i].push_back(fn);
    }
  return kernels;
}

}  // namespace uops::cgen
