// Every block of a program as its own C entry point, so that a scheduler can run a program's
// blocks as separate nodes and order them by the tensors each one touches.
//
// Block b of program i is the C function of a copy of program i that keeps only block b: it has
// the ABI of uops/backends/c/c_backend.h over the whole program's tensor table (a block touches
// a few of the tensors; the rest of the table is passed and ignored). All blocks of all programs
// go into one translation unit and one compiler call, through the kernel cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uops/backends/c/c_backend.h"
#include "uops/ir/program.h"
#include "uops/passes/pipeline.h"

namespace uops::cgen {

using namespace ir;

using BlockFn = int (*)(void* const* tensors, const int64_t* sizes, const int64_t* params,
                        int threads);

// result[i][b] runs block b of programs[i]. A function returns 0 or the error bits of
// c_backend.h (codegen::kernel_error_message turns them into the interpreter's words).
std::vector<std::vector<BlockFn>> compile_block_kernels(const std::vector<Program>& programs,
                                                        const CCompileOptions& options);

// The unit compile_block_kernels compiles, planned for `target` (its `worksharing`: see
// cgen::emit_c_unit), and the name of block b of program i in it.
std::string block_kernels_source(const std::vector<Program>& programs, const CpuTarget& target);
std::string block_entry(size_t program, size_t block);

}  // namespace uops::cgen
