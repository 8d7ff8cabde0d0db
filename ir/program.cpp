#include "uops/ir/program.h"

namespace uops::ir {

const char* role_name(Role r) {
  switch (r) {
    case Role::input:
      return "input";
    case Role::output:
      return "output";
    case Role::temporary:
      return "temp";
  }
  return "?";
}

std::vector<int> Program::inputs() const {
  std::vector<int> out;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].role == Role::input) out.push_back(int(i));
  return out;
}

std::vector<int> Program::outputs() const {
  std::vector<int> out;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].role == Role::output) out.push_back(int(i));
  return out;
}

int Program::find_tensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return int(i);
  return -1;
}

DType Program::value_type() const {
  for (auto& t : tensors)
    if (t.dtype == DType::f64) return DType::f64;
  return DType::f32;
}

std::string dim_name(const Program& p, int tensor, int axis) {
  std::string name = tensor >= 0 && tensor < int(p.tensors.size()) ? p.tensors[tensor].name
                                                                   : "#" + std::to_string(tensor);
  return name + "." + std::to_string(axis);
}

std::string index_text(const Program& p, const Index& e) {
  return to_string(e, [&](const IndexNode& n) -> std::string {
    switch (n.kind) {
      case IndexKind::Var:
        return "v" + std::to_string(n.var);
      case IndexKind::Dim:
        return dim_name(p, n.tensor, n.axis);
      default:
        return n.tensor >= 0 && n.tensor < int64_t(p.tensors.size())
                   ? p.tensors[n.tensor].name
                   : "#" + std::to_string(n.tensor);
    }
  });
}

}  // namespace uops::ir
