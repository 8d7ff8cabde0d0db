// Errors the runtime reports to its caller: misuse of the builder, cycles, a missing kernel
// for an executor, or a failing driver call. Exceptions thrown by kernels are not wrapped: the
// executor rethrows the kernel's own exception so the caller sees what the kernel said.
#pragma once

#include <stdexcept>
#include <string>

namespace uops::runtime {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error("uops::runtime: " + message) {}
};

}  // namespace uops::runtime
