// Identifiers of generated code: tensors keep their program names where those are valid and
// free, sizes are `<tensor>_n<axis>`, loop variables `v<N>` and carried scalars `c<N>` as in the
// printer, so generated source reads like the printed program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "uops/ir/program.h"

namespace uops::codegen {

struct Names {
  std::vector<std::string> tensors;           // per tensor id
  std::map<std::string, std::string> params;  // parameter name -> identifier

  std::string size(int tensor, int axis) const {
    return tensors[tensor] + "_n" + std::to_string(axis);
  }
  const std::string& param(const std::string& name) const { return params.at(name); }
  static std::string var(int v) { return "v" + std::to_string(v); }
  static std::string carried(int c) { return "c" + std::to_string(c); }
  static std::string arg(int c) { return "c" + std::to_string(c) + "_arg"; }
};

Names make_names(const Program& p);

}  // namespace uops::codegen
