#include "uops/ir/fixed_params.h"

#include <algorithm>

#include "uops/error.h"

namespace uops {

using namespace ir;

Program fix_params(Program p, const ParamMap& values) {
  for (auto& [name, value] : values) {
    if (std::find(p.params.begin(), p.params.end(), name) == p.params.end()) {
      std::string known;
      for (auto& q : p.params) known += (known.empty() ? "" : ", ") + q;
      throw Error("cannot fix unknown parameter '" + name + "' (parameters are " +
                  (known.empty() ? "none" : known) + ")");
    }
    if (std::optional<int64_t> v = fixed_param(p, name)) {
      if (*v == value) continue;
      throw Error("parameter '" + name + "' is already fixed to " + std::to_string(*v));
    }
    p.equalities.push_back({idx::param(name), idx::constant(value)});
  }
  return p;
}

std::optional<int64_t> fixed_param(const Program& p, const std::string& name) {
  for (auto& eq : p.equalities)
    for (auto [a, b] : {std::pair{eq.a, eq.b}, std::pair{eq.b, eq.a}})
      if (a->kind == IndexKind::Param && a->name == name && b->kind == IndexKind::Const)
        return b->constant;
  return std::nullopt;
}

std::optional<int64_t> fixed_value(const Program& p, const Index& e) {
  if (e->kind == IndexKind::Param) return fixed_param(p, e->name);
  return is_const(e) ? std::optional<int64_t>(e->constant) : std::nullopt;
}

}  // namespace uops
