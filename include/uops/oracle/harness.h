// The randomized oracle harness (docs/design.md §3.9). `check` runs an implementation of an op (a
// built-in one or one the user registered) on random valid cases and compares it with the
// canonical one (the interpreter on the op's lowered uop program), which for the built-in ops is
// itself held to the Eigen reference on every case. A failing case is shrunk to a smaller one
// that still fails and reported with its seed, the worst element and a replay: a case string
// that `oracle::replay` (or the UOPS_ORACLE_REPLAY environment variable) reruns on the user's
// own implementation, plus a `uopc check` command when the implementation is a backend uopc runs.
// A case too large to run (uops::LimitError) is not a failure: it is skipped; that includes a case
// whose check would hold more than the memory budget (inputs, both outputs, the f64 reference).
//
// Cases replayed before the random ones (a UOPS_ORACLE_REPLAY case of this op and dtype, the
// failure database's cases) never replace them: a leftover replay costs one case, not coverage,
// and the report says what it replayed.
//
//   auto report = oracle::check(find_op("conv2d"), my_conv, {.dtype = DType::f32});
//   if (!report.passed) std::cerr << report.message();
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "uops/error.h"
#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"
#include "uops/oracle/compare.h"
#include "uops/oracle/generator.h"
#include "uops/oracle/tolerance.h"

namespace uops::oracle {

using Implementation = std::function<TensorMap(const TensorMap& inputs, const ParamMap& params)>;

struct CheckOptions {
  DType dtype = DType::f32;
  int trials = 50;
  uint64_t seed = 1;  // trial i runs the case of trial_seed(seed, i)
  // Of trials 0 .. trials-1, this check runs those t with t % shards == shard: the shards of a
  // campaign (processes, CI jobs, a Slurm array) run disjoint cases whose union is the whole.
  int shard = 0, shards = 1;
  bool shrink = true;
  bool against_eigen = true;  // also hold the canonical implementation to the Eigen reference
  // The implementation's name in the report and in the failure database.
  std::string backend = {};
  // Set only when the implementation is uopc's own backend `backend` ("interp", "c", "cuda") on
  // the op's program: the report then also gives a `uopc check` command. A user's kernel (the
  // default) gets only the replay, whatever its name.
  bool uopc_backend = false;
  int64_t max_elements = kCaseElements;  // per random case (see generator.h)
  int64_t max_axis = 0;                  // > 0: no random size past it
  // Replaces the op's base tolerance (`OpDef::tolerance`) or the dtype's (tolerance.h).
  std::optional<Tolerance> tolerance = {};
  // Run just this case instead of random ones. Also set from UOPS_ORACLE_REPLAY when it holds a
  // case of this op (see `replay`).
  // Its sizes may be left empty (they are derived from the shapes).
  std::optional<Case> only = {};
  // A failure database folder (see failure_db.h); empty: $UOPS_ORACLE_DB, else none.
  std::string database = {};
  std::function<void(int done, int total)> progress = {};
};

struct CheckReport {
  std::string op, backend;
  DType dtype = DType::f32;
  int cases = 0;
  int skipped = 0;              // random cases too large to run (uops::LimitError)
  int replayed = 0;             // of `cases`, those replayed before the random ones
  int distinct = 0;             // cases of distinct shapes and parameters
  int redrawn = 0;              // random draws thrown away as invalid (or over the budget)
  bool mostly_invalid() const;  // over two in three draws redrawn: message() warns
  int shard = 0, shards = 1;
  uint64_t seed = 1;
  std::vector<std::string> notes;  // what was replayed, database warnings
  bool passed = true;
  bool has_reference = false;  // whether the canonical one was held to an Eigen reference
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
  std::string replay;           // case_text(shrunk)
  std::string repro;            // uopc command line, empty when uopc cannot rerun it
  std::string message() const;  // all of the above, a few lines
};

// The interpreter on forward_program(op, dtype), prepared once.
Implementation canonical(const OpDef& op, DType dtype);

// Throws uops::Error for options that make no sense (trials < 1, a shard outside 0 .. shards-1,
// a malformed memory budget), or when the only case to run is too large (uops::LimitError).
CheckReport check(const OpDef& op, const Implementation& impl, const CheckOptions& options = {});

// Reruns one case, given as a report's `replay` text, on `impl` (shrinking it further if it
// fails). Throws uops::Error when the text is not a valid case of `op`.
CheckReport replay(const OpDef& op, const Implementation& impl, const std::string& case_text,
                   CheckOptions options = {});

}  // namespace uops::oracle
