// The commands that look at an op without running it: list, show, stats, emit, dot.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "backends/c/c_compiler.h"
#include "commands.h"
#include "uops/autodiff/graph_gradient.h"
#include "uops/backends/backends.h"
#include "uops/backends/c/c_backend.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/fixed_params.h"
#include "uops/ir/printer.h"
#include "uops/ops/op_gradient.h"
#include "uops/oracle/generator.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/stats.h"

namespace uops::tools {

using namespace ir;

Program op_program(const OpDef& op, DType dtype, bool grad, bool saved) {
  if (!grad) return forward_program(op, dtype);
  if (!saved) return gradient_program(op, dtype);
  Graph g = op.build(dtype);
  std::vector<std::string> wrt = differentiable_inputs(op);
  return gradient(g, wrt, "d", gradient_residuals(g, wrt));
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* what) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw Error(std::string(what) + " '" + text + "' is not of the form NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::optional<int64_t> parse_integer(const std::string& text) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return v;
}

ParamMap parse_params(const std::vector<std::string>& items, const char* what) {
  ParamMap params;
  for (auto& item : items) {
    auto [name, value] = split_assignment(item, what);
    std::optional<int64_t> v = parse_integer(value);
    if (!v) throw Error(std::string(what) + " " + item + ": '" + value + "' is not an integer");
    if (!params.emplace(name, *v).second)
      throw Error(std::string(what) + " " + name + " is given twice");
  }
  return params;
}

void load_op_libraries(const std::vector<std::string>& paths) {
  for (auto& path : paths) load_op_library(path);
}

int list_ops() {
  for (const OpDef& op : all_ops()) {
    std::string inputs, params;
    for (auto& i : op.inputs)
      inputs += (inputs.empty() ? "" : ", ") + i.name + "[" + std::to_string(i.rank) + "]" +
                (i.is_index ? " i32" : "");
    for (auto& p : op.params) params += (params.empty() ? "" : ", ") + p;
    std::printf("%-18s inputs: %-36s params: %s\n", op.name.c_str(), inputs.c_str(),
                params.empty() ? "-" : params.c_str());
  }
  return 0;
}

int show(const ShowArgs& a) {
  const OpDef& op = find_op(a.op);
  Program p = op_program(op, DType::f32, a.grad, a.saved);
  if (!a.dump_after.empty()) {
    PipelineOptions o;
    o.dump_after = a.dump_after;
    o.dump = &std::cout;
    // The C backend's passes run on the optimized program, as its emitter runs them: for the
    // host (the target `emit --target c` prints for).
    plan_cpu(optimize(p, o), cgen::cpu_target(CCompileOptions{}), o);
    return 0;
  }
  if (a.stage == "optimized") p = optimize(p);
  std::cout << print(p);
  return 0;
}

namespace {

// The shapes of every input of `p` at the op's example: forward inputs as given, d<output>
// shaped like the forward outputs.
// An op without an example (a user's may have none) is measured at its first random case.
std::map<std::string, std::vector<int64_t>> example_shapes(const OpDef& op, const Program& p,
                                                           ParamMap& params) {
  Program fwd = forward_program(op, DType::f32);
  Shapes given = op.example_shapes;
  params = op.example_params;
  if (given.size() != op.inputs.size()) {
    oracle::Case c = oracle::random_case(op, DType::f32, 1);
    given = c.shapes;
    params = c.params;
  }
  TensorMap zeros;
  for (auto& i : op.inputs)
    zeros[i.name] = Tensor(i.is_index ? DType::i32 : DType::f32, given.at(i.name));
  Binding b = ir::bind(fwd, zeros, params);
  std::map<std::string, std::vector<int64_t>> all;
  for (size_t t = 0; t < fwd.tensors.size(); ++t) {
    const TensorInfo& info = fwd.tensors[t];
    if (info.role == Role::input) all[info.name] = b.shapes[t];
    if (info.role == Role::output) all["d" + info.name] = b.shapes[t];
  }
  std::map<std::string, std::vector<int64_t>> used;
  for (int t : p.inputs()) used[p.tensors[t].name] = all.at(p.tensors[t].name);
  return used;
}

nlohmann::ordered_json stats_json(const ProgramStats& s) {
  return {{"blocks", s.blocks},
          {"loops", s.loops},
          {"temporaries", s.temporaries},
          {"temporary_bytes", s.temporary_bytes}};
}

}  // namespace

int stats(const std::string& name, bool grad, bool json) {
  const OpDef& op = find_op(name);
  Program lowered = op_program(op, DType::f32, grad);
  Program optimized = optimize(lowered);
  ParamMap params;
  auto shapes = example_shapes(op, lowered, params);
  ProgramStats before = program_stats(lowered, shapes, params);
  ProgramStats after = program_stats(optimized, shapes, params);
  if (json) {
    nlohmann::ordered_json j;
    j["op"] = op.name;
    j["grad"] = grad;
    j["shape"] = nlohmann::ordered_json::object();
    for (auto& [input, dims] : shapes) j["shape"][input] = dims;
    j["before"] = stats_json(before);
    j["after"] = stats_json(after);
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::ostringstream shape_text;
  for (auto& [input, dims] : shapes) {
    shape_text << " " << input << "=[";
    for (size_t a = 0; a < dims.size(); ++a) shape_text << (a ? "," : "") << dims[a];
    shape_text << "]";
  }
  std::printf("%s%s at%s\n", op.name.c_str(), grad ? " (gradient)" : "", shape_text.str().c_str());
  std::printf("%-8s %7s %7s %12s %16s\n", "", "blocks", "loops", "temporaries", "temporary bytes");
  for (auto& [label, s] : {std::pair{"before", before}, std::pair{"after", after}})
    std::printf("%-8s %7d %7d %12d %16lld\n", label, s.blocks, s.loops, s.temporaries,
                static_cast<long long>(s.temporary_bytes));
  return 0;
}

int emit(const std::string& name, const std::string& target, bool grad, bool saved,
         const ParamMap& fixed) {
  Program p = fix_params(optimize(op_program(find_op(name), DType::f32, grad, saved)), fixed);
  std::cout << find_backend(target).source(p);
  return 0;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

}  // namespace

int dot(const std::string& name, bool grad) {
  const OpDef& op = find_op(name);
  Graph g = op.build(DType::f32);
  Program p = op_program(op, DType::f32, grad);
  std::ostringstream os;
  os << "digraph " << quote(op.name) << " {\n  node [fontname=\"monospace\"];\n";
  os << "  subgraph cluster_uops {\n    label=\"uop graph\";\n";
  for (size_t n = 0; n < g.nodes().size(); ++n) {
    const UopNode& u = g.nodes()[n];
    std::string label = uop_kind_name(u.kind);
    if (u.kind == UopKind::input) label += " " + u.name;
    if (u.kind == UopKind::unary) label += std::string(" ") + op_name(u.uop);
    if (u.kind == UopKind::binary) label += std::string(" ") + op_name(u.bop);
    if (u.kind == UopKind::reduce) label += std::string(" ") + op_name(u.rop);
    if (u.kind == UopKind::iota) label += " " + g.index_text(u.index[0]);
    if (u.kind == UopKind::iota || u.kind == UopKind::cast)
      label += std::string(" ") + dtype_name(u.dtype);
    label += "\\n" + g.shape_text(Node{int(n)});
    os << "    u" << n << " [shape=box, label=" << quote(label) << "];\n";
    for (int operand : u.operands) os << "    u" << operand << " -> u" << n << ";\n";
  }
  for (auto& [out, id] : g.outputs()) {
    os << "    out_" << out << " [shape=ellipse, label=" << quote(out) << "];\n";
    os << "    u" << id << " -> out_" << out << ";\n";
  }
  os << "  }\n  subgraph cluster_blocks {\n    label=" << quote(grad ? "gradient blocks" : "blocks")
     << ";\n";
  for (size_t t = 0; t < p.tensors.size(); ++t)
    os << "    t" << t << " [shape=ellipse, label="
       << quote(p.tensors[t].name + "\\n" + role_name(p.tensors[t].role)) << "];\n";
  for (size_t b = 0; b < p.blocks.size(); ++b) {
    os << "    b" << b
       << " [shape=box, label=" << quote("block " + std::to_string(b) + ": " + p.blocks[b].origin)
       << "];\n";
    std::set<int> reads, writes;
    for (const Loop& l : p.blocks[b].loops)
      for (const Stmt& s : l.stmts) {
        if (s.kind != StmtKind::reduce) writes.insert(s.tensor);
        for_each_load(s.value, [&](const ValueNode& v) { reads.insert(v.tensor); });
      }
    for (int t : reads) os << "    t" << t << " -> b" << b << ";\n";
    for (int t : writes) os << "    b" << b << " -> t" << t << ";\n";
  }
  os << "  }\n}\n";
  std::cout << os.str();
  return 0;
}

}  // namespace uops::tools
