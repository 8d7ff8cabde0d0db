#include "uops/backends/backends.h"

#include "backends/backend_entries.h"
#include "uops/error.h"

namespace uops {

const std::vector<Backend>& backends() {
  static const std::vector<Backend> all = {interpreter_backend(), c_backend(), cuda_backend()};
  return all;
}

const Backend& find_backend(const std::string& name) {
  std::string names;
  for (const Backend& b : backends()) {
    if (b.name == name) return b;
    names += (names.empty() ? "" : ", ") + b.name;
  }
  throw Error("unknown backend '" + name + "' (backends are " + names + ")");
}

std::unique_ptr<Executable> make_backend(const std::string& name, Program p) {
  return find_backend(name).make(std::move(p));
}

std::vector<std::string> available_backends() {
  std::vector<std::string> names;
  for (const Backend& b : backends())
    if (b.unavailable().empty()) names.push_back(b.name);
  return names;
}

}  // namespace uops
