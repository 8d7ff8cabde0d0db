// Python callables inside C++ std::functions (an oracle Implementation, an op's build function,
// its validity rule). The C++ side may run them with the GIL released and copy them freely, so:
//   - the callable is held through a shared_ptr whose copies touch no Python reference count and
//     whose last owner drops it under the GIL (or leaks it once the interpreter is gone: the op
//     registry outlives the interpreter);
//   - each call takes the GIL;
//   - an Exception the callable raises becomes a C++ uops::Error with the Python type and message
//     ("ValueError: ..."), uops::LimitError for uops.LimitError, so the oracle reports it as the
//     implementation's failure; a BaseException that is not an Exception (KeyboardInterrupt,
//     SystemExit) becomes PythonAbort, which no uops code catches, and is raised again in Python
//     when it reaches the binding.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "uops/error.h"

namespace uops::python {

namespace py = pybind11;

struct PythonAbort {
  std::shared_ptr<py::error_already_set> error;
};

// Translates a Python exception as said above.
[[noreturn]] void rethrow_python_error(py::error_already_set& e);

class PyCallable {
 public:
  explicit PyCallable(py::object fn);
  // Calls it; the caller holds the GIL (with_gil). Python exceptions are translated.
  py::object operator()(const py::tuple& args, const py::dict& kwargs = {}) const;

 private:
  std::shared_ptr<py::object> fn_;
};

// Runs `body` with the GIL held, translating the Python exceptions it raises, and a value of the
// wrong type it converts (a callback that returned something else than documented) into a
// uops::Error.
template <typename F>
auto with_gil(F&& body) -> decltype(body()) {
  py::gil_scoped_acquire gil;
  try {
    return body();
  } catch (py::error_already_set& e) {
    rethrow_python_error(e);
  } catch (const py::cast_error& e) {
    throw Error(std::string("a Python callback returned a value of the wrong type: ") + e.what());
  }
}

}  // namespace uops::python
