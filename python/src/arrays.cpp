#include "arrays.h"

#include <cstring>
#include <memory>
#include <utility>

#include "uops/error.h"

namespace uops::python {

py::dtype numpy_dtype(DType t) {
  switch (t) {
    case DType::f32:
      return py::dtype::of<float>();
    case DType::f64:
      return py::dtype::of<double>();
    case DType::i32:
      return py::dtype::of<int32_t>();
  }
  throw InternalError("numpy_dtype: unknown dtype");
}

Tensor to_tensor(const py::handle& value, const std::string& what) {
  // numpy.asarray at C level: the array itself, or a conversion (a list, a torch.Tensor).
  py::array a = py::array::ensure(value);
  if (!a) throw Error(what + " is not an array: " + std::string(py::repr(value)));
  // (numpy.ascontiguousarray would make a 0-d array 1-d.)
  if (!(a.flags() & py::array::c_style)) a = a.attr("copy")("C");
  // array_t<T>::check_ compares dtypes at C level, byte order included.
  DType dtype = DType::f32;
  if (py::array_t<float>::check_(a)) {
    dtype = DType::f32;
  } else if (py::array_t<double>::check_(a)) {
    dtype = DType::f64;
  } else if (py::array_t<int32_t>::check_(a)) {
    dtype = DType::i32;
  } else {
    throw Error(what + " has dtype " + std::string(py::str(a.dtype())) +
                ", which uops has no type for (float32, float64 and int32, native byte order)");
  }
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  Tensor t = Tensor::uninitialized(dtype, shape);
  if (!t.bytes.empty()) std::memcpy(t.bytes.data(), a.data(), t.bytes.size());
  return t;
}

TensorMap to_tensors(const py::dict& values) {
  TensorMap tensors;
  for (auto [name, value] : values) {
    std::string key = py::cast<std::string>(name);
    tensors[key] = to_tensor(value, "input '" + key + "'");
  }
  return tensors;
}

py::array to_numpy(Tensor&& t) {
  auto* owner = new Tensor(std::move(t));
  py::capsule base(owner, [](void* p) { delete static_cast<Tensor*>(p); });
  std::vector<py::ssize_t> shape(owner->shape.begin(), owner->shape.end());
  return py::array(numpy_dtype(owner->dtype), shape, owner->bytes.data(), base);
}

py::array copy_to_numpy(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  py::array a(numpy_dtype(t.dtype), shape);
  if (!t.bytes.empty()) std::memcpy(a.mutable_data(), t.bytes.data(), t.bytes.size());
  return a;
}

py::dict to_numpy(TensorMap&& tensors) {
  py::dict out;
  for (auto& [name, t] : tensors) out[py::str(name)] = to_numpy(std::move(t));
  return out;
}

}  // namespace uops::python
