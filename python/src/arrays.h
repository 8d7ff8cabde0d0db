// NumPy arrays and uops tensors. A uops Tensor owns its bytes, so:
//   - an array going in (an input of a run, a result of a Python kernel under the oracle) is
//     copied once into a Tensor; a non-contiguous one (a slice, a transpose, Fortran order,
//     negative strides) is made contiguous first. Its dtype and rank are kept as they are, never
//     converted: the C++ binding then refuses a wrong one with its own uops::Error naming the
//     tensor, so no result is ever computed from values the caller did not give;
//   - a Tensor going out (an output of a run) is moved into the array's owner: no copy.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "uops/ir/tensor.h"

namespace uops::python {

namespace py = pybind11;

// numpy.float32, numpy.float64 or numpy.int32.
py::dtype numpy_dtype(DType t);

// `value` (an ndarray, or anything numpy.asarray takes: a list, a CPU torch.Tensor) as a Tensor.
// Throws uops::Error, naming it by `what` ("input 'x'"), for a dtype other than float32,
// float64 and int32 in native byte order.
Tensor to_tensor(const py::handle& value, const std::string& what);
// A mapping of names to arrays, each as an input.
TensorMap to_tensors(const py::dict& values);

// Takes the tensor's bytes: the array owns them from now on.
py::array to_numpy(Tensor&& t);
// A fresh array holding a copy: for tensors the caller keeps.
py::array copy_to_numpy(const Tensor& t);
py::dict to_numpy(TensorMap&& tensors);

}  // namespace uops::python
