// Random valid cases for any op, derived from its description: a size per input axis (one size
// for axes the graph asserts equal), parameters from their declared ranges, input values from
// the declared distributions. A case whose lowered program would give a tensor a non-positive
// size, divide an index by zero, break an equality assertion or exceed the per-case element
// budget is redrawn. Most cases are small (fast, good shrink targets); a share puts one axis
// around a vector or tile width (15-17, 31-33, 63-65, 127-129) and a share draws larger shapes.
//
// A case is fully determined by (op, dtype, shapes, params, seed), so a shrunk case can be
// replayed from its text (`case_text`, `parse_case`) or from the command line.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"

namespace uops::oracle {

using uops::Shapes;

struct Case {
  std::string op = {};
  DType dtype = DType::f32;
  uint64_t seed = 0;  // picks the sizes and parameters, then the values
  std::map<std::string, int64_t> sizes =
      {};  // one per class of equal axes, named by its first ("x.1")
  ParamMap params = {};
  Shapes shapes = {};  // the inputs' shapes, derived from `sizes`
};

// The default per-case budget: elements summed over every tensor of the op's lowered program.
constexpr int64_t kCaseElements = int64_t(1) << 14;
// A case given by hand (a replay) is refused with uops::LimitError past this many elements.
constexpr int64_t kMaxCaseElements = int64_t(1) << 32;

class Generator {
 public:
  // Lowers the op once; throws uops::Error when its description does not build.
  Generator(const OpDef& op, DType dtype, int64_t max_elements = kCaseElements);

  // Throws uops::Error when no valid case turns up in many draws (a description whose ranges
  // never give a valid case).
  Case random(uint64_t seed) const;
  // The case with the given shapes and parameters. Throws uops::Error when they do not fit the
  // op (naming why), uops::LimitError when the case is too large to run.
  Case fixed(uint64_t seed, const Shapes& shapes, const ParamMap& params) const;
  // Input values; a function of the case alone.
  TensorMap inputs(const Case& c) const;
  // Valid cases with one size or parameter reduced, most reduced first, none larger than `c`.
  std::vector<Case> shrink(const Case& c) const;
  // Elements over every tensor of the lowered program (saturates at INT64_MAX).
  int64_t elements(const Case& c) const;

  struct Derived;

 private:
  std::shared_ptr<const Derived> d_;
};

// One-shot forms of the above (each lowers the op).
Case random_case(const OpDef& op, DType dtype, uint64_t seed);
Case fixed_case(const OpDef& op, DType dtype, uint64_t seed, const Shapes& shapes,
                const ParamMap& params);
TensorMap make_inputs(const OpDef& op, const Case& c);
std::vector<Case> shrink_candidates(const OpDef& op, const Case& c);

// "rmsnorm f32 seed=5 x=[3,17] w=[17] eps=2": a case as one string, and back. parse_case throws
// uops::Error when the text is malformed, names another op, or is not a valid case.
std::string case_text(const Case& c);
Case parse_case(const OpDef& op, const std::string& text);

// "x=2,3 w=4,3" and "k=2 stride=1": the case in command-line form.
std::string shapes_text(const Shapes& shapes, const char* sep = " ");
std::string params_text(const ParamMap& params, const char* sep = " ");

}  // namespace uops::oracle
