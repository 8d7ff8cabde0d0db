// The op library (docs/design.md §4): every op described only with uops, a few lines each. Each
// OpDef builds the op's uop graph for a float type; lowering it gives the canonical forward program
// that the interpreter runs and every other implementation is checked against.
//
// The registry is open: `register_op` adds a user's op, and the built-in ops go through the same
// path, so everything that takes an op (the oracle, gradients, stats, emit, run) takes a user's.
// What the oracle needs to draw random cases comes from the description itself; the optional
// fields below (parameter ranges, a validity rule, value distributions) only sharpen it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "uops/ir/dtype.h"
#include "uops/ir/graph.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

// The version of the op-library ABI (docs/op-libraries.md): what `uops_register_ops` is given.
#define UOPS_OPS_ABI 1

namespace uops {

using Shapes = std::map<std::string, std::vector<int64_t>>;

// An i32 input's values for a case: [lo, hi], given the case's shapes and parameters.
using IndexValues = std::function<std::pair<int64_t, int64_t>(const Shapes&, const ParamMap&)>;

struct OpInput {
  std::string name;
  int rank = 0;
  bool is_index = false;  // an i32 input (gather's idx, cross_entropy's labels)
  bool differentiable = true;
  IndexValues values = {};  // an i32 input's range; unset: [0, 4]
  bool nonzero = false;     // a float input kept away from zero (a divisor): |v| in [0.5, 1.5]
};

// A parameter's range for random cases (not a validity rule: a value outside it may be valid).
struct ParamRange {
  int64_t lo = 0, hi = 3;
};

// How a case's float input values are drawn (one distribution per case, for every float input).
enum class Values {
  uniform,   // in [-2, 2]
  positive,  // in [0.05, 3.05]
  ties,      // small integers: many equal values
  large,     // shifted by +1000 or -800: exp overflows without a max shift
};

enum class OpOrigin { builtin, user, library };

// An error bound: |got - expected| <= abs + rel * |expected| (the oracle's, docs/design.md §3.9).
struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
};

struct OpDef {
  std::string name;
  std::vector<OpInput> inputs;
  std::vector<std::string> params;   // "stride", "pad", "dilation", "k" ...
  std::vector<std::string> outputs;  // "z", "y", "c", "loss" ...
  // Declares the params, the inputs (the given float type; i32 for index inputs) and outputs.
  std::function<Graph(DType)> build;
  // The op's default example (what `uopc stats` and the benchmarks measure).
  Shapes example_shapes;
  ParamMap example_params;

  // Optional, for random cases: each parameter's range (an undeclared one: [0, 3]); why a case
  // is invalid beyond what the description says (empty when valid; also checked by `uopc run`);
  // the value distributions, one drawn per case.
  std::map<std::string, ParamRange> param_ranges;
  std::function<std::string(const Shapes&, const ParamMap&)> invalid;
  std::vector<Values> values = {Values::uniform};
  // The oracle's base tolerance per float type, in place of its default for the type (it still
  // widens with each case's reductions and magnitudes).
  std::map<DType, Tolerance> tolerance;

  // Set by the registry.
  OpOrigin origin = OpOrigin::user;
  std::string library;  // the shared library that registered it (origin == library)
};

// Adds an op to the registry. Throws uops::Error when the name is taken or empty, when the
// description does not build (its graph is built and lowered once here, in f32), or when its
// lists disagree with its graph: inputs (names, ranks, is_index exactly for the i32 ones),
// params, outputs, and param_ranges keys that name no parameter.
const OpDef& register_op(OpDef op);

// Every registered op: the built-in ones of docs/design.md §4 in table order, then the users'
// in registration order. References stay valid when more ops are registered; register before
// other threads look ops up (registration is serialized, lookups are not).
const std::deque<OpDef>& all_ops();
// Throws uops::Error listing the valid names when `name` is unknown.
const OpDef& find_op(const std::string& name);
// lower(op.build(dtype)), unoptimized.
Program forward_program(const OpDef& op, DType dtype);

// Throws uops::Error naming the problem when `op.invalid` refuses the shapes and parameters.
void check_valid(const OpDef& op, const Shapes& shapes, const ParamMap& params);

// Loads a shared library of ops (docs/op-libraries.md): dlopen, then its exported
// `uops_register_ops`. Throws uops::Error saying why when it cannot be loaded or registers none.
void load_op_library(const std::string& path);

}  // namespace uops
