// User-facing errors. Anything a caller can get wrong (a malformed index expression, a shape
// mismatch, a missing parameter, a bad file) is a uops::Error with a message that names the
// culprit. Internal invariant violations are different: they are bugs and use UOPS_ASSERT.
#pragma once

#include <stdexcept>
#include <string>

namespace uops {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The input is valid but exceeds a resource limit (a tensor or a run larger than the memory
// budget, an expression past its size limit). Callers that draw random cases (the oracle) treat
// it as an invalid case, never as a failure of the op.
struct LimitError : Error {
  using Error::Error;
};

// A broken internal invariant: a bug in uops, not in the caller's input.
struct InternalError : std::logic_error {
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& what);

}  // namespace uops

#define UOPS_ASSERT(cond, what)                                    \
  do {                                                             \
    if (!(cond)) ::uops::internal_error(__FILE__, __LINE__, what); \
  } while (0)
