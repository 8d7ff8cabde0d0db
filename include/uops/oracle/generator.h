// Random valid cases for every op: sizes, parameters and input values. A case is fully
// determined by (op, dtype, shapes, params, seed), so a shrunk case can be replayed from the
// command line (`uopc check OP --seed S --shape x=2,3 --param k=2`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"

namespace uops::oracle {

using Shapes = std::map<std::string, std::vector<int64_t>>;

struct Case {
  std::string op;
  DType dtype = DType::f32;
  uint64_t seed = 0;                     // picks the sizes and parameters, then the values
  std::map<std::string, int64_t> sizes;  // the op's free sizes ("M", "K", "KH"...)
  ParamMap params;
  Shapes shapes;  // the inputs' shapes, derived from `sizes`
};

// A random valid case: size-1 axes, stride above the kernel, padding at or above the kernel,
// non-square windows, ties and huge values all turn up.
Case random_case(const OpDef& op, DType dtype, uint64_t seed);

// The case with the given shapes and parameters (what a reproduction command names). Throws
// uops::Error when the shapes do not fit the op.
Case fixed_case(const OpDef& op, DType dtype, uint64_t seed, const Shapes& shapes,
                const ParamMap& params);

// Input values for a case; a function of the case alone.
TensorMap make_inputs(const OpDef& op, const Case& c);

// Smaller valid cases than `c` (one size or parameter reduced), most reduced first.
std::vector<Case> shrink_candidates(const OpDef& op, const Case& c);

// "x=2,3 w=4,3" and "k=2 stride=1": the case in command-line form.
std::string shapes_text(const Shapes& shapes, const char* sep = " ");
std::string params_text(const ParamMap& params, const char* sep = " ");

}  // namespace uops::oracle
