// The uopc commands (docs/design.md §4). Each returns the process exit code; user errors are thrown
// as uops::Error and become a one-line message and exit code 2 in main.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "uops/ir/program.h"
#include "uops/ir/tensor.h"
#include "uops/ops/registry.h"
#include "uops/oracle/harness.h"

namespace uops::tools {

struct ShowArgs {
  std::string op;
  bool grad = false, saved = false;
  std::string stage = "lowered";
  std::string dump_after;
};

struct RunArgs {
  std::string op;
  bool grad = false;
  std::string backend = "interp";
  std::vector<std::string> params, inputs, outputs;  // NAME=VALUE
  std::string memory_budget;                         // like UOPS_MEMORY_BUDGET; empty: default
};

struct CheckArgs {
  std::vector<std::string> ops;
  std::string backends;  // empty: every backend that can run here
  std::string dtype = "all";
  int trials = 300;
  uint64_t seed = 1;
  std::vector<std::string> shapes, params;  // replay one case: NAME=D0,D1 and NAME=INT
  std::string memory_budget;                // as uopc run's
  std::string shard;                        // "K/N": trials t with t % N == K
  std::string json, junit;                  // report files to write
};

struct CheckKernelArgs {
  std::string op, file, entry, args, grid = "1", block = "1", shared = "0";
  std::string target = "auto";  // auto, device or emulation
  std::string dtype = "f32";
  int trials = 50;
  uint64_t seed = 1;
  std::string replay;  // a case as a report prints it
  std::string json;
  std::vector<std::string> op_libraries;  // for the replay command
};

struct MergeArgs {
  std::vector<std::string> reports;  // `uopc check --json` files, one per shard
  std::string json, junit;
};

int list_ops();
int show(const ShowArgs& a);
int stats(const std::string& op, bool grad, bool json);
// `fixed`: parameters printed as constants (fix_params).
int emit(const std::string& op, const std::string& target, bool grad, bool saved,
         const ParamMap& fixed = {});
int dot(const std::string& op, bool grad);
int run(const RunArgs& a);
int check(const CheckArgs& a);
int merge_reports(const MergeArgs& a);
int check_kernel(const CheckKernelArgs& a);

// Loads each `--ops` library (registering its ops) before a command runs.
void load_op_libraries(const std::vector<std::string>& paths);

// Shared helpers.
// The op's forward program, or its gradient's; given its residuals (gradient_residuals) as
// inputs saved<id> instead of recomputing them where `saved`.
Program op_program(const OpDef& op, DType dtype, bool grad, bool saved = false);
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* what);
// The whole of `text` read as an integer (std::stoll's syntax), or nullopt.
std::optional<int64_t> parse_integer(const std::string& text);
// NAME=INT items of option `what` ("--param", "--fix").
ParamMap parse_params(const std::vector<std::string>& items, const char* what = "--param");
// The dtypes a `--dtype` names: "all" is f32 and f64.
std::vector<DType> dtypes_named(const std::string& name);
// The oracle's options as `uopc check` and `uopc check-kernel` start from: `trials` cases of
// `dtype` from `seed`, reported as `backend`'s.
oracle::CheckOptions check_options(DType dtype, int trials, uint64_t seed,
                                   const std::string& backend);

}  // namespace uops::tools
