// Choosing a backend by name: "interp" (the interpreter), "c" (generated C, system compiler)
// or "cuda" (generated CUDA, NVRTC and the driver API).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uops/backends/executable.h"

namespace uops {

// Throws uops::Error for an unknown name, or for a backend this build or machine cannot run,
// saying why.
std::unique_ptr<Executable> make_backend(const std::string& name, Program p);
// The backends that can run here, in the order interp, c, cuda.
std::vector<std::string> available_backends();

}  // namespace uops
