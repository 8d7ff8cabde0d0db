// C++ exceptions as Python ones, with the same messages: uops::Error is uops.Error,
// uops::LimitError is uops.LimitError (a uops.Error), uops::InternalError (a bug in uops) is
// uops.InternalError. A KeyboardInterrupt or SystemExit raised inside a callback comes back as
// itself (callbacks.h).
#include <exception>

#include "bindings.h"
#include "callbacks.h"
#include "uops/error.h"

namespace uops::python {

void bind_errors(py::module_& m) {
  static py::exception<Error> error(m, "Error");
  static py::exception<LimitError> limit(m, "LimitError", error.ptr());
  static py::exception<InternalError> internal(m, "InternalError", PyExc_RuntimeError);
  error.doc() = "Bad input to uops: a message naming the culprit, as the C++ uops::Error gives.";
  limit.doc() =
      "Valid input past a resource limit (the memory budget, the size of a case): the oracle "
      "skips such a case.";
  internal.doc() = "A broken invariant inside uops: a bug in uops, not in the input.";
  // A LimitError is an Error: it is caught first.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const LimitError& e) {
      PyErr_SetString(limit.ptr(), e.what());
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    } catch (const InternalError& e) {
      PyErr_SetString(internal.ptr(), e.what());
    } catch (const PythonAbort& a) {
      a.error->restore();
    }
  });
}

}  // namespace uops::python
