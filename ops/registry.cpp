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
  if (!handle) throw Error(std::string("cannot load op library: ") + ::dlerror());
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
