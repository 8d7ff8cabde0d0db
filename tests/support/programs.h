// The programs the backend tests run: every op's forward and gradient program, in f32 and f64,
// as lowered and as optimized, each with inputs at the op's example shapes.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "support/compare.h"
#include "uops/ir.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"

namespace uops::testing {

using namespace ir;

struct OpCase {
  std::string label;  // "conv2d grad f64 optimized"
  Program program;
  TensorMap inputs;
  ParamMap params;
};

// `max_extent` > 0 caps every axis of the example shapes (equal axes stay equal), for backends
// whose per-element cost is high (the CUDA emulation).
inline std::vector<OpCase> op_cases(int64_t max_extent = 0) {
  std::vector<OpCase> out;
  uint64_t seed = 1;
  for (const OpDef& op : all_ops()) {
    std::map<std::string, std::vector<int64_t>> examples = op.example_shapes;
    if (max_extent > 0)
      for (auto& [name, shape] : examples)
        for (auto& n : shape) n = std::min(n, max_extent);
    for (DType dt : {DType::f32, DType::f64}) {
      Program fwd = forward_program(op, dt);
      TensorMap fin = random_inputs(fwd, examples, seed++);
      std::map<std::string, std::vector<int64_t>> shapes = examples;
      for (auto& [name, t] : interpret(fwd, fin, op.example_params)) shapes["d" + name] = t.shape;
      Program grad = gradient_program(op, dt);
      TensorMap gin = random_inputs(grad, shapes, seed++);
      for (bool opt : {false, true}) {
        std::string suffix = std::string(" ") + dtype_name(dt) + (opt ? " optimized" : " lowered");
        out.push_back({op.name + suffix, opt ? optimize(fwd) : fwd, fin, op.example_params});
        out.push_back(
            {op.name + " grad" + suffix, opt ? optimize(grad) : grad, gin, op.example_params});
      }
    }
  }
  return out;
}

}  // namespace uops::testing
