// uopc: the command-line face of uops (docs/design.md §4).
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "commands.h"
#include "uops/backends/backends.h"
#include "uops/error.h"

namespace {

// Errors are reported on one line, whatever the message holds.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n') c = ' ';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace uops::tools;
  CLI::App app{"uopc: describe, optimize, differentiate, generate and oracle-test tensor ops"};
  app.require_subcommand(1);
  std::vector<std::string> op_libraries;
  app.add_option("--ops", op_libraries,
                 "a shared library of ops to load first (repeatable; see docs/op-libraries.md)");

  app.add_subcommand("list", "name, inputs and params of every op");

  ShowArgs show_args;
  auto* show_cmd = app.add_subcommand("show", "print an op's loop program");
  show_cmd->add_option("op", show_args.op, "op name")->required();
  auto* show_grad = show_cmd->add_flag("--grad", show_args.grad, "the gradient program");
  show_cmd
      ->add_flag("--saved", show_args.saved,
                 "the gradient given its residuals (inputs saved<id>) instead of recomputing them")
      ->needs(show_grad);
  show_cmd->add_option("--stage", show_args.stage, "lowered or optimized")
      ->check(CLI::IsMember({"lowered", "optimized"}));
  show_cmd->add_option("--dump-after", show_args.dump_after, "print after a pass (or all)");

  std::string op;
  bool grad = false, saved = false, json = false;
  auto* stats_cmd = app.add_subcommand("stats", "blocks, loops, temporaries before/after passes");
  stats_cmd->add_option("op", op, "op name")->required();
  stats_cmd->add_flag("--grad", grad, "the gradient program");
  stats_cmd->add_flag("--json", json, "one JSON object");

  // The backends' names, from their registry (uops/backends/backends.h).
  std::vector<std::string> names, generators;
  for (const uops::Backend& b : uops::backends()) {
    names.push_back(b.name);
    if (b.source) generators.push_back(b.name);
  }
  auto list = [](const std::vector<std::string>& v, const std::string& sep,
                 const std::string& last) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i)
      out += (i == 0 ? "" : i + 1 == v.size() ? last : sep) + v[i];
    return out;
  };

  std::string target;
  auto* emit_cmd = app.add_subcommand("emit", "generated source on stdout");
  emit_cmd->add_option("op", op, "op name")->required();
  emit_cmd->add_option("--target", target, list(generators, ", ", " or "))
      ->required()
      ->check(CLI::IsMember(generators));
  auto* emit_grad = emit_cmd->add_flag("--grad", grad, "the gradient program");
  emit_cmd
      ->add_flag("--saved", saved,
                 "the gradient given its residuals (inputs saved<id>) instead of recomputing them")
      ->needs(emit_grad);
  std::vector<std::string> fixed;
  emit_cmd->add_option("--fix", fixed,
                       "NAME=INT: print the parameter as this constant (fix_params; a run given "
                       "another value is refused)");

  RunArgs run_args;
  auto* run_cmd = app.add_subcommand("run", "run an op on .npy files");
  run_cmd->add_option("op", run_args.op, "op name")->required();
  run_cmd->add_flag("--grad", run_args.grad, "run the gradient: give d<output>, get d<input>");
  run_cmd->add_option("--backend", run_args.backend, list(names, ", ", " or "));
  run_cmd->add_option("--param", run_args.params, "NAME=INT");
  run_cmd->add_option("--in", run_args.inputs, "NAME=FILE.npy")->required();
  run_cmd->add_option("--out", run_args.outputs, "NAME=FILE.npy")->required();
  run_cmd->add_option("--memory-budget", run_args.memory_budget,
                      "most bytes the run may allocate, like 64G (default: $UOPS_MEMORY_BUDGET, "
                      "else half the physical memory)");

  CheckArgs check_args;
  auto* check_cmd = app.add_subcommand("check", "randomized oracle run (every op when none given)");
  check_cmd->add_option("op", check_args.ops, "op names");
  check_cmd->add_option(
      "--backend", check_args.backends,
      "comma-separated: " + list(names, ",", ",") + " (default: every one that can run here)");
  check_cmd->add_option("--trials", check_args.trials, "random cases per op, backend and dtype")
      ->check(CLI::Range(1, 1000000000));
  check_cmd->add_option("--seed", check_args.seed,
                        "the run's seed: trial i draws the case seeded by a hash of it and i "
                        "(with --shape, the case's own seed)");
  check_cmd->add_option("--dtype", check_args.dtype, "f32, f64 or all")
      ->check(CLI::IsMember({"f32", "f64", "all"}));
  check_cmd->add_option("--shape", check_args.shapes, "replay one case: NAME=D0,D1,...");
  check_cmd->add_option("--param", check_args.params, "replay one case: NAME=INT");
  check_cmd->add_option("--memory-budget", check_args.memory_budget,
                        "most bytes one case's check may hold, like 8G (default: "
                        "$UOPS_MEMORY_BUDGET, else half the physical memory)");
  check_cmd->add_option("--shard", check_args.shard,
                        "K/N: run trials t with t % N == K (disjoint shards of one campaign)");
  check_cmd->add_option("--json", check_args.json, "write the reports as JSON to FILE");
  check_cmd->add_option("--junit", check_args.junit, "write JUnit XML to FILE");

  CheckKernelArgs kernel_args;
  auto* kernel_cmd = app.add_subcommand(
      "check-kernel", "check a hand-written CUDA kernel against an op (GPU, else the emulation)");
  kernel_cmd->add_option("op", kernel_args.op, "op name")->required();
  kernel_cmd->add_option("--cuda", kernel_args.file, "the kernel's .cu file")->required();
  kernel_cmd->add_option("--entry", kernel_args.entry, "its __global__ function, or NAME<ARGS>")
      ->required();
  kernel_cmd
      ->add_option("--args", kernel_args.args,
                   "its parameters, comma-separated: a tensor of the op (x, y) or an "
                   "integer expression over sizes (x_n0) and params, ':i64' etc. for "
                   "other types")
      ->required();
  kernel_cmd->add_option("--grid", kernel_args.grid, "X[,Y[,Z]] expressions (default 1)");
  kernel_cmd->add_option("--block", kernel_args.block, "X[,Y[,Z]] expressions (default 1)");
  kernel_cmd->add_option("--shared", kernel_args.shared, "dynamic shared memory in bytes");
  kernel_cmd->add_option("--target", kernel_args.target, "auto, device or emulation")
      ->check(CLI::IsMember({"auto", "device", "emulation"}));
  kernel_cmd->add_option("--dtype", kernel_args.dtype, "f32, f64 or all")
      ->check(CLI::IsMember({"f32", "f64", "all"}));
  kernel_cmd->add_option("--trials", kernel_args.trials, "random cases")
      ->check(CLI::Range(1, 1000000000));
  kernel_cmd->add_option("--seed", kernel_args.seed, "the run's seed");
  kernel_cmd->add_option("--replay", kernel_args.replay, "rerun one case as a report prints it");
  kernel_cmd->add_option("--json", kernel_args.json, "write the report as JSON to FILE");

  MergeArgs merge_args;
  auto* merge_cmd = app.add_subcommand("merge-reports", "merge the --json reports of shards");
  merge_cmd->add_option("reports", merge_args.reports, "check --json files")->required();
  merge_cmd->add_option("--json", merge_args.json, "write the merged reports as JSON to FILE");
  merge_cmd->add_option("--junit", merge_args.junit, "write JUnit XML to FILE");

  auto* dot_cmd = app.add_subcommand("dot", "Graphviz of the uop graph and of the blocks");
  dot_cmd->add_option("op", op, "op name")->required();
  dot_cmd->add_flag("--grad", grad, "the gradient program's blocks");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "uopc: error: " << e.what() << " (see uopc --help)\n";
    return 2;
  }
  try {
    load_op_libraries(op_libraries);
    if (app.got_subcommand("list")) return list_ops();
    if (show_cmd->parsed()) return show(show_args);
    if (stats_cmd->parsed()) return stats(op, grad, json);
    if (emit_cmd->parsed()) return emit(op, target, grad, saved, parse_params(fixed, "--fix"));
    if (run_cmd->parsed()) return run(run_args);
    if (check_cmd->parsed()) return check(check_args);
    if (merge_cmd->parsed()) return merge_reports(merge_args);
    if (kernel_cmd->parsed()) {
      kernel_args.op_libraries = op_libraries;
      return check_kernel(kernel_args);
    }
    if (dot_cmd->parsed()) return dot(op, grad);
  } catch (const uops::Error& e) {
    std::cerr << "uopc: error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "uopc: internal error: " << one_line(e.what()) << "\n";
    return 3;
  }
  return 2;
}
