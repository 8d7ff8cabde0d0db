#include "uops/ir/binding.h"

#include <type_traits>

#include "uops/error.h"
#include "uops/ir/memory_budget.h"

namespace uops::ir {

IndexEnv Binding::env() const {
  IndexEnv env;
  env.dim = [this](int t, int a) { return shapes[t][a]; };
  env.param = [this](const std::string& n) { return params.at(n); };
  return env;
}

namespace {

std::string list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s.empty() ? "none" : s;
}

}  // namespace

namespace {

// Host tensors also say how many bytes they hold; tensors known by type alone do not.
template <class Input>
Binding bind_inputs(const Program& p, const std::map<std::string, Input>& inputs,
                    const ParamMap& params) {
  Binding b;
  b.shapes.resize(p.tensors.size());
  // Allocates nothing where the inputs are right: run() binds on every call.
  for (auto& [name, tensor] : inputs) {
    int t = p.find_tensor(name);
    if (t >= 0 && p.tensors[t].role == Role::input) continue;
    std::vector<std::string> names;
    for (int i : p.inputs()) names.push_back(p.tensors[i].name);
    throw Error("unknown input '" + name + "' (inputs are " + list(names) + ")");
  }
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorInfo& info = p.tensors[t];
    if (info.role != Role::input) continue;
    auto it = inputs.find(info.name);
    if (it == inputs.end()) throw Error("missing input '" + info.name + "'");
    const Input& x = it->second;
    if (x.dtype != info.dtype)
      throw Error("input '" + info.name + "' has dtype " + dtype_name(x.dtype) + ", expected " +
                  dtype_name(info.dtype));
    if (x.shape.size() != info.shape.size())
      throw Error("input '" + info.name + "' has rank " + std::to_string(x.shape.size()) +
                  " (shape " + shape_text(x.shape) + "), expected rank " +
                  std::to_string(info.shape.size()));
    int64_t n = element_count(x.shape);
    if constexpr (std::is_same_v<Input, Tensor>) {
      if (x.bytes.size() != size_t(n) * dtype_size(x.dtype))
        throw Error("input '" + info.name + "' holds " + std::to_string(x.bytes.size()) +
                    " bytes, but shape " + shape_text(x.shape) + " needs " +
                    std::to_string(size_t(n) * dtype_size(x.dtype)));
    }
    b.shapes[t] = x.shape;
  }
  for (auto& [name, value] : params) {
    bool known = false;
    for (auto& q : p.params) known |= q == name;
    if (!known)
      throw Error("unknown parameter '" + name + "' (parameters are " + list(p.params) + ")");
  }
  for (auto& name : p.params) {
    auto it = params.find(name);
    if (it == params.end()) throw Error("missing parameter '" + name + "'");
    b.params[name] = it->second;
  }
  IndexEnv env = b.env();
  for (auto& eq : p.equalities) {
    int64_t x = evaluate(eq.a, env), y = evaluate(eq.b, env);
    if (x != y)
      throw Error("equal assertion failed: " + index_text(p, eq.a) + " = " + std::to_string(x) +
                  " but " + index_text(p, eq.b) + " = " + std::to_string(y));
  }
  // Every size is checked before a backend allocates anything.
  int64_t total = 0, largest = 0;
  size_t which = 0;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorInfo& info = p.tensors[t];
    if (info.role == Role::input) continue;
    b.shapes[t].resize(info.shape.size());
    for (size_t a = 0; a < info.shape.size(); ++a) {
      int64_t d = b.shapes[t][a] = evaluate(info.shape[a], env);
      if (d < 0)
        throw Error("tensor '" + info.name + "' would have size " + std::to_string(d) +
                    " on axis " + std::to_string(a) + " (" + index_text(p, info.shape[a]) + ")");
    }
    int64_t n = 1, bytes = 0;
    for (int64_t d : b.shapes[t])
      if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
    if (__builtin_mul_overflow(n, int64_t(dtype_size(p.tensors[t].dtype)), &bytes))
      bytes = INT64_MAX;
    if (bytes >= largest) largest = bytes, which = t;
    if (__builtin_add_overflow(total, bytes, &total)) total = INT64_MAX;
  }
  if (int64_t budget = memory_budget(); total > budget) {
    const TensorInfo& info = p.tensors[which];
    std::string shape;
    for (int64_t d : b.shapes[which]) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    throw LimitError("tensor '" + info.name + "' of shape [" + shape + "] " +
                     dtype_name(info.dtype) + " needs " + byte_size_text(largest) +
                     (total > largest ? " (the run " + byte_size_text(total) + ")" : "") +
                     ", past the memory budget of " + byte_size_text(budget) +
                     " (raise it with UOPS_MEMORY_BUDGET, e.g. UOPS_MEMORY_BUDGET=64G)");
  }
  return b;
}

}  // namespace

Binding bind(const Program& p, const TensorMap& inputs, const ParamMap& params) {
  return bind_inputs(p, inputs, params);
}

Binding bind(const Program& p, const TensorTypeMap& inputs, const ParamMap& params) {
  return bind_inputs(p, inputs, params);
}

}  // namespace uops::ir
