// Binding a program to concrete inputs and parameters: the validation every backend runs before
// it touches memory (docs/design.md §3.3, §3.7). Checks the inputs' names, dtypes, ranks and byte
// sizes, that every parameter is given, that every shape is non-negative, and every equality
// assertion; any failure is a uops::Error and nothing has been written.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops::ir {

struct Binding {
  std::vector<std::vector<int64_t>> shapes;  // per tensor id
  ParamMap params;

  IndexEnv env() const;  // resolves Dim and Param leaves (no loop variables)
};

// Also refuses, with a uops::LimitError naming the largest tensor, a run whose outputs and
// temporaries together need more bytes than memory_budget() (uops/ir/memory_budget.h).
Binding bind(const Program& p, const TensorMap& inputs, const ParamMap& params);

// A tensor known by dtype and shape alone, like one in device memory.
struct TensorType {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
};
using TensorTypeMap = std::map<std::string, TensorType>;
// The same checks for inputs given by type (no byte count to check).
Binding bind(const Program& p, const TensorTypeMap& inputs, const ParamMap& params);

}  // namespace uops::ir
