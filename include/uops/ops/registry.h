// The op library (DESIGN.md 4): every op described only with uops, a few lines each. Each OpDef
// builds the op's uop graph for a float type; lowering it gives the canonical forward program
// that the interpreter runs and every other implementation is checked against.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/graph.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops {

struct OpInput {
  std::string name;
  int rank = 0;
  bool is_index = false;  // an i32 input (gather's idx, cross_entropy's labels)
  bool differentiable = true;
};

struct OpDef {
  std::string name;
  std::vector<OpInput> inputs;
  std::vector<std::string> params;   // "stride", "pad", "dilation", "k" ...
  std::vector<std::string> outputs;  // "z", "y", "c", "loss" ...
  // Declares the params, the inputs (the given float type; i32 for index inputs) and outputs.
  std::function<Graph(DType)> build;
  // The op's default example (what `uopc stats` and the benchmarks measure).
  std::map<std::string, std::vector<int64_t>> example_shapes;
  ParamMap example_params;
};

// Every op of DESIGN.md section 4, in table order.
const std::vector<OpDef>& all_ops();
// Throws uops::Error listing the valid names when `name` is unknown.
const OpDef& find_op(const std::string& name);
// lower(op.build(dtype)), unoptimized.
Program forward_program(const OpDef& op, DType dtype);

}  // namespace uops
