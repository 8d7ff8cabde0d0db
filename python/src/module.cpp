// The extension module uops._uops; the package uops (python/uops/__init__.py) re-exports it.
#include "bindings.h"

PYBIND11_MODULE(_uops, m) {
  m.doc() = "uops: describe tensor ops with micro-ops, generate and run kernels, check kernels.";
  uops::python::bind_errors(m);
  uops::python::bind_graph(m);
  uops::python::bind_backends(m);
  uops::python::bind_registry(m);
  uops::python::bind_oracle(m);
}
