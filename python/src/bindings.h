// The Python module's parts, one per area of the C++ API, each adding its classes and functions
// to the module. The binding layer is thin on purpose: every check and every message is the C++
// library's; what lives here is only the conversion between Python and C++ values.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "uops/ir/dtype.h"
#include "uops/ops/registry.h"

namespace uops::python {

namespace py = pybind11;

void bind_errors(py::module_& m);
void bind_graph(py::module_& m);
void bind_backends(py::module_& m);
void bind_registry(py::module_& m);
void bind_oracle(py::module_& m);

// A dtype given as uops.DType, its name ("f32"), or anything numpy.dtype() takes (np.float32,
// "float64"). Throws uops::Error naming the value otherwise.
DType to_dtype(const py::handle& h);
// An op given as an OpDef or its name.
const OpDef& to_op(const py::handle& h);

}  // namespace uops::python
