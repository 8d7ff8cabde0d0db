#include "uops/ops/registry.h"

#include <dlfcn.h>

#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>

#include "ops/families.h"
#include "uops/error.h"
#include "uops/ir/lower.h"

namespace uops {

using namespace ir;

namespace {

std::recursive_mutex registry_mutex;  // recursive: a library's entry point registers its ops
const std::string* loading_library = nullptr;  // set while load_op_library runs its entry point

std::deque<OpDef>& registry() {
  static std::deque<OpDef> ops = [] {
    std::vector<OpDef> v;
    ops::add_elementwise(v);
    ops::add_linear_algebra(v);
    ops::add_convolution(v);
    ops::add_pooling(v);
    ops::add_normalization(v);
    ops::add_reductions(v);
    ops::add_indexing(v);
    ops::add_losses(v);
    std::deque<OpDef> d;
    for (OpDef& op : v) {
      op.origin = OpOrigin::builtin;
      d.push_back(std::move(op));
    }
    return d;
  }();
  return ops;
}

// The description's lists must say what its graph says: the oracle draws cases from them.
void validate_fields(const OpDef& op, const Program& p) {
  auto fail = [&](const std::string& why) {
    return Error("register_op: op '" + op.name + "' " + why);
  };
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? std::string("none") : out;
  };
  for (const OpInput& i : op.inputs) {
    DType t = p.tensors[p.find_tensor(i.name)].dtype;
    if (t == DType::i32 && !i.is_index)
      throw fail("has an i32 input '" + i.name + "' not marked is_index (an index input)");
    if (t != DType::i32 && i.is_index)
      throw fail("marks input '" + i.name + "' is_index, but its graph declares it " +
                 dtype_name(t) + " (an index input is i32)");
  }
  std::set<std::string> graph_params(p.params.begin(), p.params.end());
  if (graph_params != std::set<std::string>(op.params.begin(), op.params.end()))
    throw fail("lists params [" + joined(op.params) + "], but its graph declares [" +
               joined(p.params) + "]");
  std::vector<std::string> graph_outputs;
  for (int t : p.outputs()) graph_outputs.push_back(p.tensors[t].name);
  if (std::set<std::string>(graph_outputs.begin(), graph_outputs.end()) !=
      std::set<std::string>(op.outputs.begin(), op.outputs.end()))
    throw fail("lists outputs [" + joined(op.outputs) + "], but its graph declares [" +
               joined(graph_outputs) + "]");
  for (auto& [name, range] : op.param_ranges) {
    if (!graph_params.count(name))
      throw fail("gives param_ranges for '" + name + "', which is not one of its params [" +
                 joined(op.params) + "]");
    if (range.lo > range.hi)
      throw fail("gives param '" + name + "' the empty range [" + std::to_string(range.lo) + ", " +
                 std::to_string(range.hi) + "]");
  }
}

}  // namespace

const OpDef& register_op(OpDef op) {
  if (op.name.empty()) throw Error("register_op: the op has no name");
  if (!op.build) throw Error("register_op: op '" + op.name + "' has no build function");
  std::lock_guard<std::recursive_mutex> lock(registry_mutex);
  std::deque<OpDef>& ops = registry();
  for (const OpDef& o : ops)
    if (o.name == op.name) throw Error("register_op: an op named '" + op.name + "' exists");
  Program p;
  try {
    p = forward_program(op, DType::f32);
  } catch (const Error& e) {
    throw Error("register_op: op '" + op.name + "' does not build: " + e.what());
  }
  for (const OpInput& i : op.inputs) {
    int t = p.find_tensor(i.name);
    if (t < 0 || p.tensors[t].role != Role::input || int(p.tensors[t].shape.size()) != i.rank)
      throw Error("register_op: op '" + op.name + "' lists input '" + i.name + "' of rank " +
                  std::to_string(i.rank) + ", which its graph does not declare");
  }
  if (p.inputs().size() != op.inputs.size())
    throw Error("register_op: op '" + op.name + "' has graph inputs it does not list");
  validate_fields(op, p);
  op.origin = loading_library ? OpOrigin::library : OpOrigin::user;
  op.library = loading_library ? *loading_library : "";
  ops.push_back(std::move(op));
  return ops.back();
}

const std::deque<OpDef>& all_ops() {
  return registry();
}

const OpDef& find_op(const std::string& name) {
  std::string names;
  for (const OpDef& op : all_ops()) {
    if (op.name == name) return op;
    names += (names.empty() ? "" : ", ") + op.name;
  }
  throw Error("unknown op '" + name + "'; the ops are: " + names);
}

Program forward_program(const OpDef& op, DType dtype) {
  if (!is_float(dtype))
    throw Error("op '" + op.name + "': the dtype must be f32 or f64, not " + dtype_name(dtype));
  return lower(op.build(dtype));
}

void check_valid(const OpDef& op, const Shapes& shapes, const ParamMap& params) {
  if (!op.invalid) return;
  std::string why = op.invalid(shapes, params);
  if (!why.empty()) throw Error("op '" + op.name + "': " + why);
}

void load_op_library(const std::string& given) {
  std::lock_guard<std::recursive_mutex> lock(registry_mutex);
  // An existing file by its absolute path: dlopen would search the library path for a bare name,
  // and a reproduction command must name the same file from anywhere.
  std::error_code ec;
  std::string path =
      std::filesystem::exists(given, ec) ? std::filesystem::absolute(given, ec).string() : given;
  static std::set<std::string> loaded;
  if (loaded.count(path)) return;  // given twice: its ops are registered already
  // Never closed: the ops' build functions live in it.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string why = ::dlerror();
    // The library takes uops from the program that loads it, which must export its symbols.
    if (why.find("undefined symbol") != std::string::npos)
      why +=
          " (the program loading an op library must export uops' symbols: link it with "
          "-rdynamic, or ENABLE_EXPORTS in CMake; see docs/op-libraries.md)";
    throw Error("cannot load op library: " + why);
  }
  using Entry = int (*)(int);
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, "uops_register_ops"));
  if (!entry)
    throw Error("op library " + path + " does not export uops_register_ops (see op-libraries.md)");
  size_t before = all_ops().size();
  loading_library = &path;
  int rc = 0;
  // The library is the user's input: whatever it throws becomes an Error naming it (a throw
  // that is no std::exception would otherwise end the program).
  std::optional<std::string> thrown;
  try {
    rc = entry(UOPS_OPS_ABI);
  } catch (const Error&) {
    loading_library = nullptr;
    throw;
  } catch (const std::exception& e) {
    thrown = std::string(": ") + e.what();
  } catch (...) {
    thrown = " something that is not a std::exception";
  }
  loading_library = nullptr;
  if (thrown) throw Error("op library " + path + ": uops_register_ops threw" + *thrown);
  if (rc != 0)
    throw Error("op library " + path + ": uops_register_ops(" + std::to_string(UOPS_OPS_ABI) +
                ") returned " + std::to_string(rc) + " (built for another uops version?)");
  if (all_ops().size() == before) throw Error("op library " + path + " registered no op");
  loaded.insert(path);
}

}  // namespace uops
