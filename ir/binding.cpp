#include "uops/ir/binding.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#include "uops/error.h"

namespace uops {

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

std::atomic<int64_t> budget_override{0};

}  // namespace

int64_t parse_byte_size(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  int shift = 0;
  if (end && *end) {
    std::string suffix = end;
    shift = suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : suffix == "T" ? 40 : -1;
  }
  if (end == text.c_str() || errno || v <= 0 || shift < 0 || v > (INT64_MAX >> shift))
    throw Error("memory budget '" + text +
                "' is not a positive number of bytes (like 8G, 512M or 1000000)");
  return int64_t(v) << shift;
}

std::string byte_size_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

int64_t memory_budget() {
  if (int64_t b = budget_override.load()) return b;
  if (const char* env = std::getenv("UOPS_MEMORY_BUDGET"); env && *env) return parse_byte_size(env);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t(1) << 34;
  return int64_t(pages) * page / 2;
}

void set_memory_budget(int64_t bytes) {
  budget_override = bytes > 0 ? bytes : 0;
}

namespace {

// Host tensors also say how many bytes they hold; tensors known by type alone do not.
template <class Input>
Binding bind_inputs(const Program& p, const std::map<std::string, Input>& inputs,
                    const ParamMap& params) {
  Binding b;
  b.shapes.resize(p.tensors.size());
  std::vector<std::string> input_names;
  for (int t : p.inputs()) input_names.push_back(p.tensors[t].name);
  for (auto& [name, tensor] : inputs) {
    int t = p.find_tensor(name);
    if (t < 0 || p.tensors[t].role != Role::input)
      throw Error("unknown input '" + name + "' (inputs are " + list(input_names) + ")");
  }
  for (int t : p.inputs()) {
    const TensorInfo& info = p.tensors[t];
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
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorInfo& info = p.tensors[t];
    if (info.role == Role::input) continue;
    for (size_t a = 0; a < info.shape.size(); ++a) {
      int64_t d = evaluate(info.shape[a], env);
      if (d < 0)
        throw Error("tensor '" + info.name + "' would have size " + std::to_string(d) +
                    " on axis " + std::to_string(a) + " (" + index_text(p, info.shape[a]) + ")");
      b.shapes[t].push_back(d);
    }
  }
  // Every size is checked before a backend allocates anything.
  int64_t budget = memory_budget(), total = 0, largest = 0;
  size_t which = 0;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    if (p.tensors[t].role == Role::input) continue;
    int64_t n = 1, bytes = 0;
    for (int64_t d : b.shapes[t])
      if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
    if (__builtin_mul_overflow(n, int64_t(dtype_size(p.tensors[t].dtype)), &bytes))
      bytes = INT64_MAX;
    if (bytes >= largest) largest = bytes, which = t;
    if (__builtin_add_overflow(total, bytes, &total)) total = INT64_MAX;
  }
  if (total > budget) {
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

}  // namespace uops
