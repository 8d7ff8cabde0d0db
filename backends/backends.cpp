#include "uops/backends/backends.h"

#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"

namespace uops {

std::unique_ptr<Executable> make_backend(const std::string& name, Program p) {
  if (name == "interp") return make_interpreter(std::move(p));
  if (name == "c") return compile_c(std::move(p));
  if (name == "cuda") return compile_cuda(std::move(p));
  throw Error("unknown backend '" + name + "' (backends are interp, c, cuda)");
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names = {"interp", "c"};
  if (cuda_unavailable_reason().empty()) names.push_back("cuda");
  return names;
}

}  // namespace uops
