// The backends, by name: "interp" (the interpreter), "c" (generated C, system compiler) and
// "cuda" (generated CUDA, NVRTC and the driver API). Each registers its name, what it is,
// whether it can run here, how it makes an executable and, for a code generator, the source it
// prints; its entry lives in its own folder and backends/backends.cpp holds the one list, which
// make_backend, the oracle and uopc read. A new backend is its folder and one line there.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uops/backends/executable.h"

namespace uops {

struct Backend {
  std::string name;
  std::string summary;
  std::string (*unavailable)();  // why this build or machine cannot run it; empty when it can
  std::unique_ptr<Executable> (*make)(Program p);
  std::string (*source)(const Program& p);  // the source it prints; null when it prints none
};

// Every backend, in the order interp, c, cuda.
const std::vector<Backend>& backends();
// Throws uops::Error naming every backend when none has that name.
const Backend& find_backend(const std::string& name);

// Throws uops::Error for an unknown name, or for a backend this build or machine cannot run,
// saying why.
std::unique_ptr<Executable> make_backend(const std::string& name, Program p);
// The backends that can run here, in the order of backends().
std::vector<std::string> available_backends();

}  // namespace uops
