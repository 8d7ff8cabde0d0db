#include "callbacks.h"

#include <utility>

#include "uops/error.h"

namespace uops::python {

PyCallable::PyCallable(py::object fn)
    : fn_(new py::object(std::move(fn)), [](py::object* p) {
        if (!Py_IsInitialized()) return;  // finalized: nothing to release it into
        py::gil_scoped_acquire gil;
        delete p;
      }) {}

py::object PyCallable::operator()(const py::tuple& args, const py::dict& kwargs) const {
  try {
    return (*fn_)(*args, **kwargs);
  } catch (py::error_already_set& e) {
    rethrow_python_error(e);
  }
}

void rethrow_python_error(py::error_already_set& e) {
  if (!e.matches(PyExc_Exception))
    throw PythonAbort{std::make_shared<py::error_already_set>(std::move(e))};
  std::string type = py::str(e.type().attr("__name__"));
  std::string message = py::str(e.value());
  py::object limit = py::module_::import("uops._uops").attr("LimitError");
  if (e.matches(limit)) throw LimitError(message);
  throw Error(type + (message.empty() ? "" : ": " + message));
}

}  // namespace uops::python
