// The randomized oracle harness (DESIGN.md 3.9). `check` runs an implementation of an op on
// random valid cases and compares it with the canonical one (the interpreter on the op's
// lowered uop program), which is itself held to the Eigen reference on every case. A failing
// case is shrunk to a smaller one that still fails and reported with its seed, the worst
// element and a one-line `uopc check` command that reproduces it.
//
//   auto report = oracle::check(find_op("conv2d"), my_conv, {.dtype = DType::f32});
//   if (!report.passed) std::cerr << report.message();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"
#include "uops/oracle/compare.h"
#include "uops/oracle/generator.h"

namespace uops::oracle {

using Implementation = std::function<TensorMap(const TensorMap& inputs, const ParamMap& params)>;

struct CheckOptions {
  DType dtype = DType::f32;
  int trials = 50;
  uint64_t seed = 1;  // trial i runs the case of seed + i
  bool shrink = true;
  bool against_eigen = true;       // also hold the canonical implementation to the Eigen reference
  std::string backend = "interp";  // what the reproduction command names
  std::optional<Case> only;        // run just this case instead of random ones
  std::function<void(int done, int total)> progress;
};

struct CheckReport {
  std::string op, backend;
  DType dtype = DType::f32;
  int cases = 0;
  bool passed = true;
  // Largest errors over the cases, in units of the tolerance: of the implementation against
  // the canonical one, and of the canonical one against Eigen.
  double worst_error = 0.0;
  double reference_error = 0.0;
  double seconds = 0.0;
  // When it failed:
  std::string culprit;  // "implementation", or "uops vs eigen" when the canonical one is wrong
  Case original, shrunk;
  Comparison mismatch;          // on `shrunk`
  std::string error;            // what the implementation threw, if it threw
  std::string repro;            // uopc command line
  std::string message() const;  // all of the above, a few lines
};

// The interpreter on forward_program(op, dtype), prepared once.
Implementation canonical(const OpDef& op, DType dtype);

CheckReport check(const OpDef& op, const Implementation& impl, const CheckOptions& options = {});

}  // namespace uops::oracle
