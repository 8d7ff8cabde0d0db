// Running the system C compiler on generated source, through the kernel cache, and loading
// the result. CC (or CCompileOptions::compiler) is split into words at white space, so a
// launcher or flags may come with it ("ccache gcc", "gcc -m64"); no shell runs it. The compiler's
// identity (its `--version` text and which of -fopenmp, -lmvec and -fallow-store-data-races it
// takes) is itself cached on disk under the compiler binary's path, size and modification time,
// so a cache hit runs no compiler at all.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "uops/backends/c/c_backend.h"
#include "uops/passes/pipeline.h"

namespace uops::cgen {

struct CompilerInfo {
  std::vector<std::string> command;  // what is run: the resolved program, then CC's other words
  std::string identity;              // the version text
  std::string stamp;                 // its programs' paths, sizes and times (what keys it)
  bool openmp = false;
  bool mvec = false;         // links glibc's libmvec (-lmvec) with OpenMP
  bool store_races = false;  // takes -fallow-store-data-races (GCC 10 and later)
};

CompilerInfo compiler_info(const std::string& compiler);

// The threads a kernel compiled with `options` runs on (CCompileOptions::threads, 0: one per
// core).
int kernel_threads(const CCompileOptions& options);

// The flags a compile uses before the source, and the libraries after it (both part of the
// cache key). A kernel of one thread compiles with OpenMP's SIMD part alone (-fopenmp-simd):
// it enters no OpenMP region, each of which costs a microsecond or more even when its if-clause
// keeps the team from starting (matmul 64^3, 8.5 against 3.2 us).
std::vector<std::string> compile_flags(const CompilerInfo& cc, const CCompileOptions& options);

// The width in bytes of the vectors `cc` compiles for with -march=<march>: 64 where it defines
// __AVX512F__, 32 with __AVX__, else 16. Asked once (`cc -march=<march> -dM -E`), the answer kept
// in the kernel cache under the compiler's stamp, so a kernel found in the cache costs no
// compiler run; 64 where the compiler rejects the name (uncached: its compile will fail).
int target_vector_bytes(const CompilerInfo& cc, const std::string& march);

// What the passes plan a kernel compiled with `options` for (plan_cpu): its reassociation, and
// the width of its target's vectors: for "native" the host's (x86: 64 with AVX-512, 32 with AVX,
// else 16; 16 elsewhere), for "" 16 (the compilers' default x86-64 and AArch64 targets), for
// x86-64-v2/-v3/-v4 16/32/64; any other name as the compiler defines it (target_vector_bytes),
// 64 where no compiler answers (the widest tiles: correct on any target).
CpuTarget cpu_target(const CCompileOptions& options, bool worksharing = false);
std::vector<std::string> link_libraries(const CompilerInfo& cc, const CCompileOptions& options);

// Compiles `source` into a shared object (or finds it in the cache) and dlopens it. Errors
// carry the compiler's message and the path of the kept source file.
void* compile_and_load(const std::string& source, const CCompileOptions& options);

// A compile in two steps, for modules whose link depends on their object (the CUDA emulation):
// the source is compiled with `object_flags` and -c, then linked with the flags `link_flags`
// derives from the object's bytes (a function of them alone, so the key stays the source's).
struct TwoStepCompile {
  std::vector<std::string> object_flags;
  std::function<std::vector<std::string>(const std::string& object)> link_flags;
};
// As above, in two steps when `steps` is given; `loaded` (if given) gets the verified bytes of
// the shared object that was loaded.
void* compile_and_load(const std::string& source, const CCompileOptions& options,
                       const TwoStepCompile* steps, std::string* loaded);
// The kernel-cache key of that compile: the source, the compiler's identity, the flags and, for
// "native", the host CPU.
std::string compile_key(const std::string& source, const CCompileOptions& options);

// Runs argv (argv[0] a path) without a shell, stdin from /dev/null, returning its combined
// stdout and stderr; `status` gets the exit status (-1 when killed by a signal).
std::string run_command(const std::vector<std::string>& argv, int* status);
std::string shell_quote(const std::string& s);
std::string command_text(const std::vector<std::string>& argv);  // quoted, for messages

}  // namespace uops::cgen
