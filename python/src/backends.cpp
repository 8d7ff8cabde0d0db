// Generating and running kernels: emit (C and CUDA text), the backends as Executable objects run
// on NumPy arrays. Long C++ work (compiling, running) runs with the GIL released.
#include "uops/backends/backends.h"

#include <pybind11/stl.h>

#include <memory>

#include "arrays.h"
#include "bindings.h"
#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/executable.h"
#include "uops/error.h"

namespace uops::python {

namespace {

CCompileOptions c_options(const std::string& compiler, bool openmp, int threads, bool reassociate,
                          bool vector_math, const std::string& target,
                          const std::vector<std::string>& extra_flags) {
  CCompileOptions o;
  o.compiler = compiler;
  o.openmp = openmp;
  o.threads = threads;
  o.reassociate = reassociate;
  o.vector_math = vector_math;
  o.target = target;
  o.extra_flags = extra_flags;
  return o;
}

}  // namespace

void bind_backends(py::module_& m) {
  const CCompileOptions kC;  // the defaults of the C options
  py::class_<Executable, std::unique_ptr<Executable>>(
      m, "Executable", "A program prepared by a backend, run on any inputs of matching dtypes.")
      .def(
          "run",
          [](const Executable& exe, const py::dict& inputs, const ParamMap& params) {
            TensorMap tensors = to_tensors(inputs);
            TensorMap out;
            {
              py::gil_scoped_release release;
              out = exe.run(tensors, params);
            }
            return to_numpy(std::move(out));
          },
          py::arg("inputs"), py::arg("params") = ParamMap{},
          R"doc(Runs the program on `inputs` (name -> array) with integer `params`.

Returns the outputs as a dict of NumPy arrays, which own the results (no copy). Inputs are copied
once; a non-contiguous array is made contiguous first. A wrong dtype, rank or size, a missing or
unknown input or parameter raises uops.Error naming it before anything runs; a run past the memory
budget raises uops.LimitError.)doc")
      .def_property_readonly("backend", &Executable::backend, "\"interp\", \"c\" or \"cuda\".")
      .def_property_readonly(
          "program", [](const Executable& exe) { return exe.program(); }, "The program it runs.");

  m.def(
      "compile",
      [](Program p, const std::string& backend) { return make_backend(backend, std::move(p)); },
      py::arg("program"), py::arg("backend") = "interp", py::call_guard<py::gil_scoped_release>(),
      "The program on a backend: \"interp\" (the interpreter), \"c\" (generated C with the "
      "default options) or \"cuda\". Raises uops.Error for a backend this build or machine "
      "cannot run, saying why.");
  m.def(
      "compile_c",
      [](Program p, const std::string& compiler, bool openmp, int threads, bool reassociate,
         bool vector_math, const std::string& target, const std::vector<std::string>& flags) {
        py::gil_scoped_release release;
        return compile_c(std::move(p), c_options(compiler, openmp, threads, reassociate,
                                                 vector_math, target, flags));
      },
      py::arg("program"), py::kw_only(), py::arg("compiler") = kC.compiler,
      py::arg("openmp") = kC.openmp, py::arg("threads") = kC.threads,
      py::arg("reassociate") = kC.reassociate, py::arg("vector_math") = kC.vector_math,
      py::arg("target") = kC.target, py::arg("extra_flags") = kC.extra_flags,
      "The program compiled to C with the given options (uops/backends/c/c_backend.h); with "
      "reassociate=False the results are bit-exact with the interpreter's.");
  m.def(
      "emit",
      [](const Program& p, const std::string& target, const std::string& compiler, bool openmp,
         int threads, bool reassociate, bool vector_math, const std::string& arch,
         const std::vector<std::string>& flags) {
        if (target == "c")
          return emit_c(
              p, c_options(compiler, openmp, threads, reassociate, vector_math, arch, flags));
        if (target == "cuda") return emit_cuda(p);
        throw Error("unknown emit target '" + target + "' (c, cuda)");
      },
      py::arg("program"), py::arg("target") = "c", py::kw_only(), py::arg("compiler") = kC.compiler,
      py::arg("openmp") = kC.openmp, py::arg("threads") = kC.threads,
      py::arg("reassociate") = kC.reassociate, py::arg("vector_math") = kC.vector_math,
      py::arg("arch") = kC.target, py::arg("extra_flags") = kC.extra_flags,
      "The source a backend compiles: target \"c\" (compile_c's options apply; its `target` is "
      "`arch` here) or \"cuda\". Needs no compiler and no GPU.");
  m.def("available_backends", &available_backends,
        "The backends that can run here, in the order interp, c, cuda.");
  m.def("cuda_unavailable_reason", &cuda_unavailable_reason,
        "Why the CUDA backend cannot run here, or \"\" when it can.");
}

}  // namespace uops::python
