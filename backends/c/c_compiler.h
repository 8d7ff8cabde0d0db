// Running the system C compiler on generated source, through the kernel cache, and loading
// the result. The compiler's identity (its `--version` text and whether it takes -fopenmp) is
// itself cached on disk under the compiler binary's path, size and modification time, so a
// cache hit runs no compiler at all.
#pragma once

#include <string>
#include <vector>

#include "uops/backends/c/c_backend.h"

namespace uops::cgen {

struct CompilerInfo {
  std::string program;   // what is run
  std::string identity;  // the version text
  bool openmp = false;
  bool mvec = false;  // links glibc's libmvec (-lmvec) with OpenMP
};

CompilerInfo compiler_info(const std::string& compiler);

// The flags a compile uses before the source, and the libraries after it (both part of the
// cache key).
std::vector<std::string> compile_flags(const CompilerInfo& cc, const CCompileOptions& options);
std::vector<std::string> link_libraries(const CompilerInfo& cc, const CCompileOptions& options);

// Compiles `source` into a shared object (or finds it in the cache) and dlopens it. Errors
// carry the compiler's message and the path of the kept source file.
void* compile_and_load(const std::string& source, const CCompileOptions& options);

// Runs a shell command, returning its combined output; `status` gets the exit status.
std::string run_command(const std::string& command, int* status);
std::string shell_quote(const std::string& s);

}  // namespace uops::cgen
