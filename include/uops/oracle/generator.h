// Random valid cases for any op, derived from its description: a size per input axis (one size
// for axes the graph asserts equal), parameters from their declared ranges, input values from
// the declared distributions. A case whose lowered program would give a tensor a non-positive
// size, divide an index by zero, break an equality assertion or the op's rule is redrawn (and
// counted); one over the per-case element budget has its largest axes halved. An assertion
// between expressions (`dA1 = 2 * dB1`) is met by solving for a size it reads alone.
//
// Sizes grow with the trial number, as QuickCheck's do: the largest axis a case may draw starts at
// 16 and doubles every 4 trials, so a long run reaches rows of thousands where the budget allows.
// Half the cases stay small (fast, good shrink targets); a share puts one axis at a valid size
// next to a vector or tile width (8 ... 1024: the nearest sizes the op accepts, so an even-only
// axis gets 14 and 18), or two of an output's axes at once next to 16 or 32 (a corner tile); a
// share draws
// one long axis (half the time one a reduction runs along) or every axis large. What the
// description computes picks the values (see `describe`).
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

// The seed of trial `trial` of a check seeded with `seed`: a hash of both, so that checks with
// different seeds draw disjoint cases (not seed + trial, which makes seeds 1 and 2 share all but
// one case). Below 2^63.
uint64_t trial_seed(uint64_t seed, int trial);

// What an op's description computes, as far as the choice of test values goes.
struct Description {
  bool exponential = false;     // exp, log or pow: meets values past exp's range
  bool sums = false;            // a sum, mean or product: meets large magnitudes
  bool compares = false;        // max, min, argmax or argmin: meets ties
  bool transcendental = false;  // exp, log, pow, tanh, sigmoid, sin or cos
};
Description describe(const Graph& g);

class Generator {
 public:
  // Lowers the op once; throws uops::Error when its description does not build. `max_axis` > 0
  // bounds every drawn size.
  Generator(const OpDef& op, DType dtype, int64_t max_elements = kCaseElements,
            int64_t max_axis = 0);

  // The case of trial `trial` (sizes grow with it; the default is fully grown) whose seed is
  // `seed`. `redrawn`, when given, gets the number of invalid draws thrown away. Throws
  // uops::Error when no valid case turns up in many draws (a description whose ranges never
  // give a valid case).
  static constexpr int kGrown = 1 << 20;
  Case random(uint64_t seed, int trial = kGrown, int* redrawn = nullptr) const;
  // The case with the given shapes and parameters. Throws uops::Error when they do not fit the
  // op (naming why), uops::LimitError when the case is too large to run.
  Case fixed(uint64_t seed, const Shapes& shapes, const ParamMap& params) const;
  // Input values; a function of the case alone.
  TensorMap inputs(const Case& c) const;
  // Valid cases with one size or parameter reduced, none larger than `c`: the smallest valid
  // value first, then halvings and small steps down, smallest first. A case from which none of
  // these still fails is minimal in each axis up to 64 (every smaller value is tried there).
  std::vector<Case> shrink(const Case& c) const;
  // The longest reduction the case's program runs (1 when it reduces nothing).
  int64_t reduction_length(const Case& c) const;
  const Description& description() const;
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
