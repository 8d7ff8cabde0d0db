// The op registry: the built-in ops, ops registered from Python (their build function and
// validity rule are Python callables), and op libraries.
#include "uops/ops/registry.h"

#include <dlfcn.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "callbacks.h"
#include "uops/error.h"
#include "uops/ops/op_gradient.h"

namespace uops::python {

const OpDef& to_op(const py::handle& h) {
  if (py::isinstance<py::str>(h)) return find_op(py::cast<std::string>(h));
  return py::cast<const OpDef&>(h);
}

namespace {

const char* values_name(Values v) {
  switch (v) {
    case Values::uniform:
      return "uniform";
    case Values::positive:
      return "positive";
    case Values::ties:
      return "ties";
    case Values::large:
      return "large";
  }
  return "?";
}

const char* origin_name(OpOrigin o) {
  switch (o) {
    case OpOrigin::builtin:
      return "builtin";
    case OpOrigin::user:
      return "user";
    case OpOrigin::library:
      return "library";
  }
  return "?";
}

Values values_from_name(const std::string& name) {
  for (Values v : {Values::uniform, Values::positive, Values::ties, Values::large})
    if (name == values_name(v)) return v;
  throw Error("unknown value distribution '" + name + "' (uniform, positive, ties, large)");
}

OpInput make_input(const std::string& name, int rank, bool is_index, bool differentiable,
                   bool nonzero, const py::object& values) {
  OpInput in{name, rank, is_index, differentiable, {}, nonzero};
  if (!values.is_none()) {
    PyCallable fn(values);
    in.values = [fn](const Shapes& shapes, const ParamMap& params) {
      return with_gil([&] {
        return py::cast<std::pair<int64_t, int64_t>>(fn(py::make_tuple(shapes, params)));
      });
    };
  }
  return in;
}

OpDef make_op(const std::string& name, const py::object& build, std::vector<OpInput> inputs,
              std::vector<std::string> outputs, std::vector<std::string> params,
              Shapes example_shapes, ParamMap example_params,
              const std::map<std::string, std::pair<int64_t, int64_t>>& param_ranges,
              const py::object& invalid, const std::vector<std::string>& values) {
  OpDef op;
  op.name = name;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.params = std::move(params);
  op.example_shapes = std::move(example_shapes);
  op.example_params = std::move(example_params);
  for (auto& [p, range] : param_ranges) op.param_ranges[p] = ParamRange{range.first, range.second};
  if (!values.empty()) {
    op.values.clear();
    for (auto& v : values) op.values.push_back(values_from_name(v));
  }
  PyCallable build_fn(build);
  op.build = [build_fn, name](DType dtype) {
    return with_gil([&] {
      py::object g = build_fn(py::make_tuple(dtype));
      if (!py::isinstance<Graph>(g))
        throw Error("op '" + name + "': build(" + dtype_name(dtype) + ") returned " +
                    std::string(py::repr(g)) + ", not a uops.Graph");
      return py::cast<Graph>(g);
    });
  };
  if (!invalid.is_none()) {
    PyCallable invalid_fn(invalid);
    op.invalid = [invalid_fn](const Shapes& shapes, const ParamMap& params) {
      return with_gil([&] {
        py::object why = invalid_fn(py::make_tuple(shapes, params));
        return why.is_none() ? std::string() : py::cast<std::string>(why);
      });
    };
  }
  return op;
}

// Op libraries resolve uops' symbols in the global scope (docs/op-libraries.md), where uopc puts
// them. Python loads this module with RTLD_LOCAL, so its symbols are made global first.
void export_uops_symbols() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void*>(&export_uops_symbols), &info) || !info.dli_fname)
    throw Error("cannot find the uops module's own file to export its symbols");
  if (!::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL))
    throw Error(std::string("cannot export the uops module's symbols: ") + ::dlerror());
}

}  // namespace

void bind_registry(py::module_& m) {
  py::class_<OpInput>(m, "OpInput", "An input of an op: its name, rank and kind.")
      .def(py::init(&make_input), py::arg("name"), py::arg("rank"), py::arg("is_index") = false,
           py::arg("differentiable") = true, py::arg("nonzero") = false,
           py::arg("values") = py::none(),
           "`is_index`: an i32 input, whose values for a case are `values(shapes, params)` -> "
           "(lo, hi) (default [0, 4]); `nonzero`: a float input kept away from zero.")
      .def_readonly("name", &OpInput::name, "The input's name.")
      .def_readonly("rank", &OpInput::rank, "Its rank.")
      .def_readonly("is_index", &OpInput::is_index, "Whether it is an i32 input.")
      .def_readonly("differentiable", &OpInput::differentiable, "Whether it gets a gradient.")
      .def_readonly("nonzero", &OpInput::nonzero, "Whether its values are kept away from zero.")
      .def("__repr__", [](const OpInput& in) {
        return "<uops.OpInput " + in.name + " rank " + std::to_string(in.rank) + ">";
      });

  py::class_<OpDef>(m, "OpDef", "A registered op (read-only): its description and example.")
      .def_readonly("name", &OpDef::name, "The op's name.")
      .def_readonly("inputs", &OpDef::inputs, "Its inputs, in order.")
      .def_readonly("outputs", &OpDef::outputs, "Its output names, in order.")
      .def_readonly("params", &OpDef::params, "Its parameter names.")
      .def_readonly("example_shapes", &OpDef::example_shapes, "The example's input shapes.")
      .def_readonly("example_params", &OpDef::example_params, "The example's parameters.")
      .def_property_readonly(
          "origin", [](const OpDef& op) { return origin_name(op.origin); },
          "\"builtin\", \"user\" or \"library\".")
      .def_readonly("library", &OpDef::library, "The op library that registered it, if any.")
      .def_property_readonly(
          "values",
          [](const OpDef& op) {
            std::vector<std::string> names;
            for (Values v : op.values) names.push_back(values_name(v));
            return names;
          },
          "The value distributions random cases draw from.")
      .def(
          "build",
          [](const OpDef& op, const py::object& dtype) { return op.build(to_dtype(dtype)); },
          py::arg("dtype") = DType::f32, "The op's uop graph for a float dtype.")
      .def("__repr__", [](const OpDef& op) { return "<uops.OpDef " + op.name + ">"; });

  m.def(
      "register_op",
      [](const std::string& name, const py::object& build, std::vector<OpInput> inputs,
         std::vector<std::string> outputs, std::vector<std::string> params, Shapes example_shapes,
         ParamMap example_params,
         const std::map<std::string, std::pair<int64_t, int64_t>>& param_ranges,
         const py::object& invalid, const std::vector<std::string>& values) -> const OpDef& {
        return register_op(make_op(name, build, std::move(inputs), std::move(outputs),
                                   std::move(params), std::move(example_shapes),
                                   std::move(example_params), param_ranges, invalid, values));
      },
      py::arg("name"), py::arg("build"), py::arg("inputs"), py::arg("outputs"),
      py::arg("params") = std::vector<std::string>{}, py::arg("example_shapes") = Shapes{},
      py::arg("example_params") = ParamMap{},
      py::arg("param_ranges") = std::map<std::string, std::pair<int64_t, int64_t>>{},
      py::arg("invalid") = py::none(), py::arg("values") = std::vector<std::string>{},
      py::return_value_policy::reference,
      R"doc(Registers an op described in Python; from then on everything that takes an op takes it.

`build(dtype)` returns its uops.Graph for a float dtype (declaring `params`, `inputs` and
`outputs`); it is called here once (f32) and again whenever uops needs the op's program.
`param_ranges` maps a parameter to its (lo, hi) for random cases; `invalid(shapes, params)`
returns why a case is invalid, or None/""; `values` names the float value distributions
("uniform", "positive", "ties", "large"). Raises uops.Error when the name is taken or the
description does not build. Registration is for the life of the process.)doc");
  m.def("find_op", &find_op, py::arg("name"), py::return_value_policy::reference,
        "The registered op of that name; uops.Error lists the valid names otherwise.");
  m.def(
      "all_ops",
      [] {
        std::vector<const OpDef*> ops;
        for (const OpDef& op : all_ops()) ops.push_back(&op);
        return ops;
      },
      py::return_value_policy::reference,
      "Every registered op: the built-in ones, then the users' in registration order.");
  m.def(
      "forward_program",
      [](const py::object& op, const py::object& dtype) {
        return forward_program(to_op(op), to_dtype(dtype));
      },
      py::arg("op"), py::arg("dtype") = DType::f32,
      "The op's canonical forward program (lowered, unoptimized).");
  m.def(
      "differentiable_inputs",
      [](const py::object& op) { return differentiable_inputs(to_op(op)); }, py::arg("op"),
      "The inputs of the op that get a gradient, in order.");
  m.def(
      "load_op_library",
      [](const std::string& path) {
        export_uops_symbols();
        py::gil_scoped_release release;
        load_op_library(path);
      },
      py::arg("path"),
      "Loads a shared library of ops (docs/op-libraries.md) and registers its ops. Raises "
      "uops.Error saying why when it cannot be loaded or registers none. Load only libraries "
      "you trust: their code runs in this process.");
}

}  // namespace uops::python
