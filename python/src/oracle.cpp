// The oracle on Python callables: uops.check(op, fn) draws random cases from the op's
// description, calls fn(*inputs, **params) on NumPy arrays, compares what it returns with the
// canonical implementation, and shrinks a failure to a case that replay() reruns on the same fn.
// The check runs with the GIL released; each call of fn takes it (callbacks.h).
//
// A hand-written CUDA kernel (uops/oracle/cuda_kernel.h) is an Implementation object: a C++
// implementation that uops.check and uops.replay run as it is, with no Python in between, and
// that Python may also call on arrays.
#include <pybind11/stl.h>

#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "callbacks.h"
#include "uops/error.h"
#include "uops/oracle/cuda_kernel.h"
#include "uops/oracle/harness.h"

namespace uops::python {

namespace {

using oracle::CheckOptions;
using oracle::CheckReport;

// What fn returned: an array when the op has one output, a tuple or list in output order, or a
// dict by output name.
TensorMap results(const OpDef& op, const py::object& r) {
  TensorMap out;
  if (py::isinstance<py::dict>(r)) {
    for (auto [name, value] : py::reinterpret_borrow<py::dict>(r)) {
      std::string key = py::str(name);
      out[key] = to_tensor(value, "output '" + key + "'");
    }
    return out;
  }
  if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    auto seq = py::reinterpret_borrow<py::sequence>(r);
    if (seq.size() != op.outputs.size())
      throw Error("returned " + std::to_string(seq.size()) + " values; " + op.name + " has " +
                  std::to_string(op.outputs.size()) + " outputs");
    for (size_t i = 0; i < seq.size(); ++i)
      out[op.outputs[i]] = to_tensor(seq[i], "output '" + op.outputs[i] + "'");
    return out;
  }
  if (op.outputs.size() != 1)
    throw Error("returned one value; " + op.name + " has " + std::to_string(op.outputs.size()) +
                " outputs: return a tuple in their order or a dict by name");
  out[op.outputs[0]] = to_tensor(r, "output '" + op.outputs[0] + "'");
  return out;
}

// An implementation in C++ for one op (a CUDA kernel), with the name its reports give it.
struct NativeImplementation {
  OpDef op;
  std::string backend;
  oracle::Implementation run;
};

// What uops.check runs for `fn`: a NativeImplementation as it is (after checking that it is one
// of this op; `backend` becomes its name when the caller gave none), any other callable as
// fn(*inputs, **params) on fresh arrays: fn may keep or modify them without touching the oracle's
// tensors.
oracle::Implementation implementation(const OpDef& op, const py::object& fn, std::string* backend) {
  if (py::isinstance<NativeImplementation>(fn)) {
    const auto& native = py::cast<const NativeImplementation&>(fn);
    if (native.op.name != op.name)
      throw Error("the implementation is one of " + native.op.name + ", not of " + op.name);
    if (backend->empty()) *backend = native.backend;
    return native.run;
  }
  if (!PyCallable_Check(fn.ptr()))
    throw py::type_error("fn must be callable, not " + std::string(py::repr(fn)));
  PyCallable call(fn);
  return [call, &op](const TensorMap& inputs, const ParamMap& params) {
    return with_gil([&] {
      py::tuple args(op.inputs.size());
      for (size_t i = 0; i < op.inputs.size(); ++i)
        args[i] = copy_to_numpy(inputs.at(op.inputs[i].name));
      py::dict kwargs;
      for (auto& [name, value] : params) kwargs[py::str(name)] = value;
      return results(op, call(args, kwargs));
    });
  };
}

CheckOptions options(const py::object& dtype, int trials, uint64_t seed, bool shrink,
                     bool against_eigen, const std::string& backend, int64_t max_elements) {
  CheckOptions o;
  o.dtype = to_dtype(dtype);
  o.trials = trials;
  o.seed = seed;
  o.shrink = shrink;
  o.against_eigen = against_eigen;
  o.backend = backend;
  o.max_elements = max_elements;
  return o;
}

// The keyword arguments check and replay share, with CheckOptions' defaults.
#define UOPS_CHECK_OPTION_ARGS                                                                     \
  py::kw_only(), py::arg("dtype") = CheckOptions{}.dtype,                                          \
                 py::arg("trials") = CheckOptions{}.trials, py::arg("seed") = CheckOptions{}.seed, \
                 py::arg("shrink") = CheckOptions{}.shrink,                                        \
                 py::arg("against_eigen") = CheckOptions{}.against_eigen,                          \
                 py::arg("backend") = CheckOptions{}.backend,                                      \
                 py::arg("max_elements") = CheckOptions{}.max_elements

oracle::Case to_case(const OpDef& op, const py::object& c) {
  if (py::isinstance<py::str>(c)) return oracle::parse_case(op, py::cast<std::string>(c));
  return py::cast<oracle::Case>(c);
}

// A target given as uops.CudaTarget or its name: "auto" (or "automatic"), "device", "emulation".
oracle::CudaTarget to_target(const py::handle& h) {
  if (!py::isinstance<py::str>(h)) return py::cast<oracle::CudaTarget>(h);
  std::string name = py::cast<std::string>(h);
  if (name == "auto" || name == "automatic") return oracle::CudaTarget::automatic;
  if (name == "device") return oracle::CudaTarget::device;
  if (name == "emulation") return oracle::CudaTarget::emulation;
  throw Error("unknown CUDA target '" + name + "' (auto, device, emulation)");
}

// The kernel's outputs for inputs given as fn's are (positional, in the op's order; parameters
// by name): one array for an op of one output, else a dict by output name.
py::object call_native(const NativeImplementation& impl, const py::args& args,
                       const py::kwargs& kwargs) {
  const OpDef& op = impl.op;
  if (args.size() != op.inputs.size())
    throw Error(op.name + " takes " + std::to_string(op.inputs.size()) + " inputs, got " +
                std::to_string(args.size()));
  TensorMap inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i)
    inputs[op.inputs[i].name] = to_tensor(args[i], "input '" + op.inputs[i].name + "'");
  ParamMap params;
  for (auto [name, value] : kwargs) params[py::cast<std::string>(name)] = py::cast<int64_t>(value);
  TensorMap outputs;
  {
    py::gil_scoped_release release;
    outputs = impl.run(inputs, params);
  }
  if (op.outputs.size() == 1) return to_numpy(std::move(outputs.at(op.outputs[0])));
  return to_numpy(std::move(outputs));
}

std::string kernel_repr(const oracle::CudaKernel& k) {
  std::string args;
  for (const std::string& a : k.args) args += (args.empty() ? "'" : ", '") + a + "'";
  return "<uops.CudaKernel " + k.entry + " of '" + k.file + "' args=[" + args + "] grid='" +
         k.grid + "' block='" + k.block + "' shared_bytes='" + k.shared_bytes + "'>";
}

}  // namespace

void bind_oracle(py::module_& m) {
  py::class_<oracle::Case>(m, "Case", "One case of an op: shapes, parameters and a seed.")
      .def_readonly("op", &oracle::Case::op, "The op's name.")
      .def_readonly("dtype", &oracle::Case::dtype, "The float dtype.")
      .def_readonly("seed", &oracle::Case::seed, "Picks the sizes and parameters, then values.")
      .def_readonly("shapes", &oracle::Case::shapes, "The inputs' shapes.")
      .def_readonly("params", &oracle::Case::params, "The parameters.")
      .def("__str__", &oracle::case_text, "The case as the text replay() takes.")
      .def("__repr__",
           [](const oracle::Case& c) { return "<uops.Case '" + oracle::case_text(c) + "'>"; });

  py::class_<oracle::Mismatch>(m, "Mismatch", "The worst element of a failed comparison.")
      .def_readonly("output", &oracle::Mismatch::output, "The output's name.")
      .def_readonly("index", &oracle::Mismatch::index, "The element's index.")
      .def_readonly("expected", &oracle::Mismatch::expected, "The canonical value.")
      .def_readonly("got", &oracle::Mismatch::got, "The implementation's value.")
      .def_readonly("abs_error", &oracle::Mismatch::abs_error, "|got - expected|.")
      .def_readonly("scaled_error", &oracle::Mismatch::scaled_error,
                    "The error in units of the tolerance (> 1 fails).");

  py::class_<CheckReport>(m, "CheckReport", "What uops.check found.")
      .def_readonly("op", &CheckReport::op, "The op's name.")
      .def_readonly("backend", &CheckReport::backend, "The implementation's name.")
      .def_readonly("dtype", &CheckReport::dtype, "The dtype checked.")
      .def_readonly("cases", &CheckReport::cases, "Cases run.")
      .def_readonly("skipped", &CheckReport::skipped, "Random cases too large to run.")
      .def_readonly("passed", &CheckReport::passed, "Whether every case passed.")
      .def_readonly("has_reference", &CheckReport::has_reference,
                    "Whether the canonical implementation was held to the Eigen reference.")
      .def_readonly("worst_error", &CheckReport::worst_error,
                    "The largest error against the canonical one, in units of the tolerance.")
      .def_readonly("reference_error", &CheckReport::reference_error,
                    "The largest error of the canonical one against Eigen.")
      .def_readonly("seconds", &CheckReport::seconds, "Time taken.")
      .def_readonly("culprit", &CheckReport::culprit,
                    "\"implementation\", or \"uops vs eigen\" when the description is wrong.")
      .def_readonly("original", &CheckReport::original, "The first failing case.")
      .def_readonly("shrunk", &CheckReport::shrunk, "The smallest case found that still fails.")
      .def_property_readonly(
          "mismatch",
          [](const CheckReport& r) -> std::optional<oracle::Mismatch> {
            if (r.passed || !r.error.empty() || !r.mismatch.problem.empty()) return std::nullopt;
            return r.mismatch.worst;
          },
          "The worst element on the shrunk case, when the failure is a wrong value.")
      .def_property_readonly(
          "problem", [](const CheckReport& r) { return r.mismatch.problem; },
          "A missing output, or a shape or dtype that differs, when that is the failure.")
      .def_readonly("error", &CheckReport::error, "What the implementation raised, if it did.")
      .def_readonly("replay", &CheckReport::replay, "The shrunk case's text, for uops.replay.")
      .def_readonly("repro", &CheckReport::repro, "A uopc command line, when uopc can rerun it.")
      .def("message", &CheckReport::message,
           "The report in a few lines, as the C++ oracle says it.")
      .def("__str__", &CheckReport::message, "The report's message.");

  m.def(
      "check",
      [](const py::object& op, const py::object& fn, const py::object& dtype, int trials,
         uint64_t seed, bool shrink, bool against_eigen, const std::string& backend,
         int64_t max_elements) {
        const OpDef& def = to_op(op);
        CheckOptions o = options(dtype, trials, seed, shrink, against_eigen, backend, max_elements);
        oracle::Implementation impl = implementation(def, fn, &o.backend);
        py::gil_scoped_release release;
        return oracle::check(def, impl, o);
      },
      py::arg("op"), py::arg("fn"), UOPS_CHECK_OPTION_ARGS,
      R"doc(Checks `fn`, any callable taking and returning arrays, against the op on random cases.

`fn` is called as fn(*inputs, **params): the op's inputs as NumPy arrays, in the op's order
(fresh ones, which fn may keep or change), and its integer parameters by name. It returns an
array (one output), a tuple in output order, or a dict by output name, each float32, float64 or
int32 as the op gives it. Values are compared with the canonical implementation under the
oracle's tolerance; a failing case is shrunk and the report holds it, with a replay that
reruns fn on it. An exception fn raises fails the case with its type and message; a
uops.LimitError from fn skips the case. UOPS_ORACLE_REPLAY set to a case of this op runs just
that case. Returns a CheckReport; raises uops.Error for options that make no sense.)doc");
  m.def(
      "replay",
      [](const py::object& op, const py::object& fn, const std::string& case_text,
         const py::object& dtype, int trials, uint64_t seed, bool shrink, bool against_eigen,
         const std::string& backend, int64_t max_elements) {
        const OpDef& def = to_op(op);
        CheckOptions o = options(dtype, trials, seed, shrink, against_eigen, backend, max_elements);
        oracle::Implementation impl = implementation(def, fn, &o.backend);
        py::gil_scoped_release release;
        return oracle::replay(def, impl, case_text, o);
      },
      py::arg("op"), py::arg("fn"), py::arg("case"), UOPS_CHECK_OPTION_ARGS,
      "Reruns one case, given as a report's `replay` text, on `fn` (shrinking it further if it "
      "fails). Raises uops.Error when the text is not a valid case of the op.");
  m.def(
      "case_inputs",
      [](const py::object& op, const py::object& c) {
        const OpDef& def = to_op(op);
        return to_numpy(oracle::make_inputs(def, to_case(def, c)));
      },
      py::arg("op"), py::arg("case"),
      "The input arrays of a case (a Case or its text), as the oracle gives them to fn.");
  py::enum_<oracle::CudaTarget>(
      m, "CudaTarget",
      "Where a CUDA kernel runs: automatic (the GPU where there is one, else the emulation), "
      "device (the GPU, or uops.Error) or emulation (the CPU emulation of CUDA with its "
      "detectors). Functions taking one also take its name, \"auto\" for automatic.")
      .value("automatic", oracle::CudaTarget::automatic)
      .value("device", oracle::CudaTarget::device)
      .value("emulation", oracle::CudaTarget::emulation);

  using oracle::CudaKernel;
  py::class_<CudaKernel>(m, "CudaKernel",
                         R"doc(A hand-written CUDA kernel for an op, with its launch rule.

`args` has one entry per kernel parameter, in order: a tensor of the op ("x", "y": its device
pointer, of the check's dtype) or an integer expression, a 32-bit int unless it ends in a type
(":i64", ":u32", ":u64", ":f32", ":f64"). `grid` and `block` are "X", "X,Y" or "X,Y,Z",
`shared_bytes` the dynamic shared memory in bytes. Expressions are index expressions over the
case: `x_n0` is the size of axis 0 of tensor x, an op parameter is its own name; + - * / %
(floor division), min, max and parentheses. `file` names the source in messages and reports.)doc")
      .def(py::init([](std::string source, std::string file, std::string entry,
                       std::vector<std::string> args, std::string grid, std::string block,
                       std::string shared_bytes) {
             return CudaKernel{std::move(source),      std::move(file), std::move(entry),
                               std::move(args),        std::move(grid), std::move(block),
                               std::move(shared_bytes)};
           }),
           py::kw_only(), py::arg("source") = "", py::arg("file") = "", py::arg("entry") = "",
           py::arg("args") = std::vector<std::string>{}, py::arg("grid") = CudaKernel{}.grid,
           py::arg("block") = CudaKernel{}.block,
           py::arg("shared_bytes") = CudaKernel{}.shared_bytes,
           "A kernel; every field is a keyword argument.")
      .def_readwrite("source", &CudaKernel::source, "The CUDA C++ source.")
      .def_readwrite("file", &CudaKernel::file,
                     "Where the source came from: messages, source lines and the replay.")
      .def_readwrite("entry", &CudaKernel::entry,
                     "The __global__ function's name, or a template's instance (\"f<256>\").")
      .def_readwrite("args", &CudaKernel::args,
                     "One entry per kernel parameter: a tensor's name or an integer expression.")
      .def_readwrite("grid", &CudaKernel::grid, "The grid: \"X\", \"X,Y\" or \"X,Y,Z\".")
      .def_readwrite("block", &CudaKernel::block, "The block: \"X\", \"X,Y\" or \"X,Y,Z\".")
      .def_readwrite("shared_bytes", &CudaKernel::shared_bytes,
                     "The dynamic shared memory (extern __shared__), in bytes.")
      .def("__repr__", &kernel_repr);

  py::class_<NativeImplementation>(m, "Implementation",
                                   R"doc(An implementation of an op in C++, such as a CUDA kernel.

uops.check and uops.replay take it where they take a Python fn and run it as it is, without the
GIL. Called from Python as fn is, impl(*inputs, **params), it returns the outputs: an array for
an op of one output, else a dict by output name.)doc")
      .def_property_readonly(
          "op", [](const NativeImplementation& i) { return i.op.name; }, "The op's name.")
      .def_readonly("backend", &NativeImplementation::backend,
                    "Where it runs: \"cuda\" or \"cuda-emulation\"; the name its reports give.")
      .def("__call__", &call_native,
           "Runs it on the inputs, in the op's order, and the parameters by name.")
      .def("__repr__", [](const NativeImplementation& i) {
        return "<uops.Implementation of " + i.op.name + " on " + i.backend + ">";
      });

  m.def(
      "cuda_kernel",
      [](const py::object& op, const CudaKernel& kernel, const py::object& target) {
        const OpDef& def = to_op(op);
        oracle::CudaTarget t = to_target(target);
        py::gil_scoped_release release;
        std::string backend = oracle::cuda_kernel_backend(t);
        return NativeImplementation{def, backend, oracle::cuda_kernel(def, kernel, t)};
      },
      py::arg("op"), py::arg("kernel"), py::arg("target") = "auto",
      R"doc(The implementation that runs `kernel` for the op, for uops.check and uops.replay.

The launch rule and the arguments are checked here (uops.Error for a malformed one); the source
is compiled on the first run, once (a compile error fails that case with the compiler's message).
On the emulation, outputs start as NaN, so an element the kernel never writes shows, and a
detector's finding (out of bounds, a race, a missed barrier, a read of unwritten shared memory, a
bad warp mask) fails the case with a message starting "CUDA emulation: " that names the block,
the thread and the source line. `target` is a CudaTarget or its name; "device" raises uops.Error
where there is no GPU.)doc");
  m.def(
      "check_cuda_kernel",
      [](const py::object& op, const CudaKernel& kernel, const py::object& target,
         const py::object& dtype, int trials, uint64_t seed, bool shrink, bool against_eigen,
         const std::string& backend, int64_t max_elements) {
        const OpDef& def = to_op(op);
        oracle::CudaTarget t = to_target(target);
        CheckOptions o = options(dtype, trials, seed, shrink, against_eigen, backend, max_elements);
        py::gil_scoped_release release;
        return oracle::check_cuda_kernel(def, kernel, o, t);
      },
      py::arg("op"), py::arg("kernel"), py::arg("target") = "auto", UOPS_CHECK_OPTION_ARGS,
      R"doc(Checks a hand-written CUDA kernel against the op on random cases, as uops.check does fn.

The report's backend says where it ran ("cuda" or "cuda-emulation") unless `backend` names it;
its replay reruns the same kernel with uops.replay(op, uops.cuda_kernel(op, kernel, target),
report.replay). Raises uops.Error for a malformed launch rule or argument, and for options that
make no sense.)doc");
  m.def(
      "cuda_kernel_backend",
      [](const py::object& target) { return oracle::cuda_kernel_backend(to_target(target)); },
      py::arg("target") = "auto",
      "Where a CUDA kernel for `target` runs here: \"cuda\" (the GPU) or \"cuda-emulation\"; "
      "uops.Error for \"device\" where there is no GPU.");
}

}  // namespace uops::python
