// Describing ops and compiling them: dtypes, the op vocabularies, Graph and Node, Program, and
// lower, optimize, gradient. Index expressions are the C++ API's strings, parsed by it: a
// malformed one raises uops.Error naming the expression and the column.
#include "uops/ir/graph.h"

#include <pybind11/stl.h>

#include <sstream>

#include "bindings.h"
#include "uops/autodiff/forward_mode.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/error.h"
#include "uops/ir/fixed_params.h"
#include "uops/ir/lower.h"
#include "uops/ir/ops.h"
#include "uops/ir/printer.h"
#include "uops/ops/op_gradient.h"
#include "uops/passes/pipeline.h"

namespace uops::python {

DType to_dtype(const py::handle& h) {
  if (py::isinstance<DType>(h)) return py::cast<DType>(h);
  if (py::isinstance<py::str>(h)) {
    std::string name = py::cast<std::string>(h);
    if (name == "f32" || name == "f64" || name == "i32") return dtype_from_name(name);
  }
  py::object numpy_dtype;
  try {
    numpy_dtype = py::module_::import("numpy").attr("dtype")(h);
  } catch (py::error_already_set&) {
    throw Error("not a dtype: " + std::string(py::repr(h)) + " (f32, f64 or i32)");
  }
  std::string name = py::str(numpy_dtype);
  if (name == "float32") return DType::f32;
  if (name == "float64") return DType::f64;
  if (name == "int32") return DType::i32;
  throw Error("uops has no dtype " + name + " (f32, f64 or i32)");
}

namespace {

// An operator given as its enum value or its name (the names valid ones are listed on error).
template <typename Op>
Op to_op_kind(const py::handle& h, Op (*from_name)(const std::string&)) {
  if (py::isinstance<py::str>(h)) return from_name(py::cast<std::string>(h));
  return py::cast<Op>(h);
}

template <typename Op>
void bind_op_enum(py::module_& m, const char* name, const char* doc,
                  std::initializer_list<Op> values) {
  py::enum_<Op> e(m, name, doc);
  for (Op op : values) e.value(op_name(op), op);
}

std::string program_text(const Program& p) {
  return ir::print(p);
}

std::vector<std::string> tensor_names(const Program& p, const std::vector<int>& ids) {
  std::vector<std::string> names;
  for (int id : ids) names.push_back(p.tensors[id].name);
  return names;
}

}  // namespace

void bind_graph(py::module_& m) {
  py::enum_<DType>(m, "DType", "Element types: f32 and f64 carry values, i32 indices.")
      .value("f32", DType::f32)
      .value("f64", DType::f64)
      .value("i32", DType::i32);
  m.attr("f32") = DType::f32;
  m.attr("f64") = DType::f64;
  m.attr("i32") = DType::i32;

  using U = UnaryOp;
  bind_op_enum<U>(m, "UnaryOp", "The unary uop's operators.",
                  {U::neg, U::abs, U::exp, U::log, U::sqrt, U::rsqrt, U::recip, U::tanh, U::sigmoid,
                   U::sin, U::cos, U::floor});
  using B = BinaryOp;
  bind_op_enum<B>(
      m, "BinaryOp", "The binary uop's operators.",
      {B::add, B::sub, B::mul, B::div, B::pow, B::max, B::min, B::eq, B::ne, B::lt, B::le});
  using R = ReduceOp;
  bind_op_enum<R>(m, "ReduceOp", "The reduce uop's operators.",
                  {R::sum, R::prod, R::mean, R::max, R::min, R::argmax, R::argmin});

  py::class_<Node>(m, "Node", "A node of a Graph: the tensor one uop gives.")
      .def_readonly("id", &Node::id, "The node's position in its graph.")
      .def("__repr__", [](const Node& n) { return "<uops.Node " + std::to_string(n.id) + ">"; });

  py::class_<Graph>(m, "Graph", R"doc(A uop graph: how an op is described (docs/design.md 3.3).

Every method checks its arguments and infers the result's shape at once, so a malformed index
expression, an unknown $name or a rank mismatch raises uops.Error where the graph is built.
Shapes and index expressions are strings: "dA1[=dB0]", "i1 * $stride + i3 - $pad".)doc")
      .def(py::init<>())
      .def("param", &Graph::param, py::arg("name"),
           "Declares an integer parameter that expressions may use as `$name`.")
      .def(
          "input",
          [](Graph& g, const std::string& name, int rank, const py::object& dtype) {
            return g.input(name, rank, to_dtype(dtype));
          },
          py::arg("name"), py::arg("rank"), py::arg("dtype") = DType::f32,
          "An input tensor of the given rank and dtype.")
      .def("reindex", &Graph::reindex, py::arg("x"), py::arg("shape"), py::arg("index"),
           py::arg("sources") = std::vector<Node>{}, py::arg("fill") = 0.0,
           "out[i] = x[index(i)], `fill` outside x. `shape` and `index` are expressions over the "
           "output axes iN, the axis sizes dA0, dB1... of `sources` (default: x) and parameters.")
      .def(
          "iota",
          [](Graph& g, const std::vector<std::string>& shape, const std::string& value,
             const std::vector<Node>& sources,
             const py::object& dtype) { return g.iota(shape, value, sources, to_dtype(dtype)); },
          py::arg("shape"), py::arg("value"), py::arg("sources") = std::vector<Node>{},
          py::arg("dtype") = DType::i32,
          "out[i] = value(i), an index expression over the output axes, sizes and parameters.")
      .def(
          "cast",
          [](Graph& g, Node x, const py::object& dtype) { return g.cast(x, to_dtype(dtype)); },
          py::arg("x"), py::arg("dtype"), "x converted to `dtype`.")
      .def(
          "unary",
          [](Graph& g, const py::object& op, Node x) {
            return g.unary(to_op_kind(op, unary_op_from_name), x);
          },
          py::arg("op"), py::arg("x"), "op(x) elementwise; `op` is a UnaryOp or its name.")
      .def(
          "binary",
          [](Graph& g, const py::object& op, Node x, Node y) {
            return g.binary(to_op_kind(op, binary_op_from_name), x, y);
          },
          py::arg("op"), py::arg("x"), py::arg("y"),
          "op(x, y) elementwise over equal shapes; `op` is a BinaryOp or its name.")
      .def("ternary", &Graph::ternary, py::arg("cond"), py::arg("a"), py::arg("b"),
           "cond ? a : b elementwise.")
      .def(
          "reduce",
          [](Graph& g, const py::object& op, std::vector<int> axes, Node x) {
            return g.reduce(to_op_kind(op, reduce_op_from_name), std::move(axes), x);
          },
          py::arg("op"), py::arg("axes"), py::arg("x"),
          "Reduces `axes` of x (they keep size 1); `op` is a ReduceOp or its name.")
      .def("select", &Graph::select, py::arg("axis"), py::arg("x"), py::arg("index"),
           "out[i] = x[i with `axis` replaced by index[i]]; out-of-range indices read 0.")
      .def("fill", &Graph::fill, py::arg("like"), py::arg("value"),
           "A tensor shaped like `like` whose every element is `value`.")
      .def("stop_gradient", &Graph::stop_gradient, py::arg("x"),
           "x's value, through which no gradient flows back (JAX's stop_gradient).")
      .def("squeeze", &Graph::squeeze, py::arg("x"), py::arg("axes"),
           "x without `axes`, each of size 1.")
      .def("assert_equal",
           py::overload_cast<const std::string&, const std::string&, const std::vector<Node>&>(
               &Graph::assert_equal),
           py::arg("a"), py::arg("b"), py::arg("sources") = std::vector<Node>{},
           "Asserts that two shape expressions are equal (checked now or when the program runs).")
      .def("output", &Graph::output, py::arg("name"), py::arg("x"), "Makes x an output.")
      .def("rank", &Graph::rank, py::arg("x"), "The rank of a node.")
      .def(
          "shape_text", [](const Graph& g, Node n) { return g.shape_text(n); }, py::arg("x"),
          "A node's shape over the inputs' sizes: \"[x.0, x.1 + 2]\".")
      .def_property_readonly(
          "outputs",
          [](const Graph& g) {
            std::vector<std::string> names;
            for (auto& [name, id] : g.outputs()) names.push_back(name);
            return names;
          },
          "The output names, in order.")
      .def_property_readonly("params", &Graph::params, "The declared parameters.")
      .def(
          "__len__", [](const Graph& g) { return g.nodes().size(); }, "The number of nodes.");

  py::class_<Program>(m, "Program", "A loop-block program (docs/design.md 3.4).")
      .def("__str__", &program_text, "The program in the printer's text form.")
      .def_property_readonly(
          "inputs", [](const Program& p) { return tensor_names(p, p.inputs()); },
          "The input names, in tensor-table order.")
      .def_property_readonly(
          "outputs", [](const Program& p) { return tensor_names(p, p.outputs()); },
          "The output names, in tensor-table order.")
      .def_readonly("params", &Program::params, "The parameters, in order.")
      .def_property_readonly(
          "blocks", [](const Program& p) { return p.blocks.size(); }, "The number of loop blocks.");

  m.def(
      "lower", [](const Graph& g) { return lower(g); }, py::arg("graph"),
      "The graph's loop program, one block per uop. Raises uops.Error for a graph without "
      "outputs.");
  // Runs a pipeline with the GIL released, then writes what it dumped to `dump` (sys.stderr).
  auto dumping = [](auto run) {
    return [run](Program p, const std::string& dump_after, bool verify, py::object dump) {
      std::ostringstream text;
      Program out;
      {
        py::gil_scoped_release release;
        out = run(std::move(p), PipelineOptions{verify, dump_after, &text});
      }
      if (!dump_after.empty()) {
        if (dump.is_none()) dump = py::module_::import("sys").attr("stderr");
        dump.attr("write")(text.str());
      }
      return out;
    };
  };
  m.def("optimize",
        dumping([](Program p, const PipelineOptions& o) { return optimize(std::move(p), o); }),
        py::arg("program"), py::arg("dump_after") = "", py::arg("verify") = false,
        py::arg("dump") = py::none(),
        "The optimization pipeline. `dump_after` names a pass (or \"all\") after which the "
        "program is written to `dump` (a file-like object; default sys.stderr); `verify` runs the "
        "verifier after every pass.");
  m.def("plan_cpu",
        dumping([](Program p, const PipelineOptions& o) { return plan_cpu(std::move(p), {}, o); }),
        py::arg("program"), py::arg("dump_after") = "", py::arg("verify") = false,
        py::arg("dump") = py::none(),
        "The C backend's passes (tilings, then the decisions its printer prints, shown in the "
        "loops' plans), as the C backend runs them on a program; `dump_after`, `verify` and "
        "`dump` as for optimize.");
  m.def("fix_params", &fix_params, py::arg("program"), py::arg("params"),
        "`program` compiled for these parameter values: each is asserted (a run given another "
        "value is refused) and the C and CUDA backends print it as a constant.");
  m.def("pass_names", &pass_names,
        "The pass names `dump_after` accepts: optimize's, then plan_cpu's.");
  m.def("gradient", &gradient, py::arg("graph"), py::arg("wrt"), py::arg("prefix") = "d",
        py::arg("saved") = std::vector<int>{}, py::call_guard<py::gil_scoped_release>(),
        "The reverse-mode gradient program of `graph` with respect to the inputs named in `wrt`: "
        "it takes d<output> and the forward inputs it reads, and gives d<input> (unoptimized); "
        "`prefix` replaces the d of every gradient's name. The node ids in `saved` are given "
        "as inputs saved<id> instead of recomputed (see gradient_residuals).");
  m.def("gradient_graph", &gradient_graph, py::arg("graph"), py::arg("wrt"),
        py::arg("prefix") = "d", py::arg("saved") = std::vector<int>{},
        py::call_guard<py::gil_scoped_release>(),
        "The reverse-mode gradient as a uop Graph (the graph `gradient` lowers), so it can be "
        "differentiated again, lowered or registered as an op.");
  m.def("gradient_residuals", &gradient_residuals, py::arg("graph"), py::arg("wrt"),
        py::call_guard<py::gil_scoped_release>(),
        "The forward node ids whose values the gradient reads (views aside): what to keep from "
        "the forward pass and pass as `saved`.");
  m.def("with_saved_outputs", &with_saved_outputs, py::arg("graph"), py::arg("saved"),
        py::call_guard<py::gil_scoped_release>(),
        "`graph` with an output saved<id> for every node id in `saved`: the forward pass that "
        "keeps what gradient(..., saved=saved) reads.");
  m.def("jvp", &jvp, py::arg("graph"), py::arg("wrt"), py::arg("prefix") = "t",
        py::call_guard<py::gil_scoped_release>(),
        "Forward mode as a Graph: takes a tangent <prefix><input> per name in `wrt` and gives "
        "<prefix><output> for each output.");
  m.def("hvp", &hvp, py::arg("graph"), py::arg("wrt"), py::call_guard<py::gil_scoped_release>(),
        "The Hessian-vector product as a Graph: forward mode over the reverse-mode gradient.");
  m.def(
      "gradient_program",
      [](const py::object& op, const py::object& dtype) {
        const OpDef& def = to_op(op);
        DType t = to_dtype(dtype);
        py::gil_scoped_release release;
        return gradient_program(def, t);
      },
      py::arg("op"), py::arg("dtype") = DType::f32,
      "The gradient program of a registered op (unoptimized).");
}

}  // namespace uops::python
