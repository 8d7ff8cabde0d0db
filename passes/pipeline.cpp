#include "uops/passes/pipeline.h"

#include <algorithm>
#include <iostream>
#include <iterator>
#include <string_view>

#include "uops/error.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/passes/accumulator_promotion.h"
#include "uops/passes/asserted_sizes.h"
#include "uops/passes/bounds_check.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/empty_range_tests.h"
#include "uops/passes/epilogue_folding.h"
#include "uops/passes/fill_trimming.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/loop_order.h"
#include "uops/passes/parallel_loops.h"
#include "uops/passes/reduction_tiling.h"
#include "uops/passes/register_tiles.h"
#include "uops/passes/row_local_runs.h"
#include "uops/passes/scatter_tiling.h"
#include "uops/passes/simd_reductions.h"
#include "uops/passes/simplify.h"
#include "uops/passes/storage_reuse.h"
#include "uops/passes/variable_substitution.h"

namespace uops {

using namespace ir;

namespace {

struct Pass {
  const char* name;
  Program (*run)(Program, const CpuTarget&);
};

// A pass whose only argument is the program, and one that regroups floating-point sums, which
// runs only where the target allows it (CpuTarget::reassociate).
template <Program (*F)(Program)>
Program plain(Program p, const CpuTarget&) {
  return F(std::move(p));
}
template <Program (*F)(Program)>
Program reassociating(Program p, const CpuTarget& t) {
  return t.reassociate ? F(std::move(p)) : p;
}

// Every pass, in the order each first runs: optimize() runs the first eight, plan_cpu() the
// rest; `dump_after` and pass_names() read this one table. The tile sizes are the C backend's
// (docs/cpu-kernels.md says why).
constexpr Pass kPasses[] = {
    {"asserted_sizes", plain<use_asserted_sizes>},
    {"dead_code", plain<eliminate_dead_code>},
    {"bounds_check", plain<eliminate_bounds_checks>},
    {"storage_reuse", plain<reuse_storage>},
    {"loop_fusion", plain<fuse_loops>},
    {"variable_substitution", plain<substitute_variables>},
    {"loop_order", [](Program p, const CpuTarget&) { return order_loops(std::move(p)); }},
    {"simplify", plain<simplify>},
    {"tile_dots", [](Program p, const CpuTarget&) { return tile_dots(std::move(p), 4, 4, 16); }},
    {"tile_reductions",
     [](Program p, const CpuTarget&) { return tile_reductions(std::move(p), 512); }},
    {"tile_registers",
     [](Program p, const CpuTarget& t) {
       return tile_registers(std::move(p), 6, 6, 64, 64, t.vector_bytes);
     }},
    {"tile_scatters",
     [](Program p, const CpuTarget& t) {
       return t.reassociate ? tile_scatters(std::move(p), 8, 32, 64, t.vector_bytes) : p;
     }},
    {"tile_copies", [](Program p, const CpuTarget&) { return tile_copies(std::move(p), 16); }},
    {"accumulator_promotion", reassociating<promote_accumulators>},
    {"parallel_loops",
     [](Program p, const CpuTarget& t) {
       return plan_parallel_loops(std::move(p), t.worksharing, t.reassociate && !t.one_thread);
     }},
    {"simd_reductions", reassociating<plan_simd_reductions>},
    {"simd_math", reassociating<plan_simd_math>},
    {"row_local_runs",
     [](Program p, const CpuTarget& t) {
       return t.worksharing ? p : plan_row_local_runs(std::move(p), t.vector_bytes);
     }},
    {"register_tiles", plain<plan_register_tiles>},
    {"fill_trimming", plain<plan_fill_trimming>},
    {"epilogue_folding", plain<plan_epilogue_folding>},
    {"empty_range_tests", plain<plan_empty_range_tests>},
};

// Runs passes by name, each followed by the verifier and the dump that `options` ask for.
class Runner {
 public:
  Runner(const PipelineOptions& options, const CpuTarget& target)
      : options_(options), target_(target), dump_(options.dump ? *options.dump : std::cerr) {
    auto names = pass_names();
    const std::string& which = options.dump_after;
    if (!which.empty() && which != "all" &&
        std::find(names.begin(), names.end(), which) == names.end()) {
      std::string list;
      for (auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw Error("unknown pass '" + which + "' (passes are " + list + ", or all)");
    }
  }

  void run(std::string_view name, Program& p) {
    auto pass = std::find_if(std::begin(kPasses), std::end(kPasses),
                             [&](const Pass& q) { return name == q.name; });
    UOPS_ASSERT(pass != std::end(kPasses), "pipeline runs a pass missing from its table");
    p = pass->run(std::move(p), target_);
    if (options_.verify) verify_or_throw(p, pass->name);
    if (options_.dump_after == "all" || options_.dump_after == name)
      dump_ << "// after " << name << "\n" << print(p);
  }

 private:
  const PipelineOptions& options_;
  CpuTarget target_;
  std::ostream& dump_;
};

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const Pass& pass : kPasses) names.push_back(pass.name);
  return names;
}

Program optimize(Program p, const PipelineOptions& options) {
  Runner runner(options, {});
  auto run = [&](std::string_view name) { runner.run(name, p); };
  // First: bounds that cannot raise are ones the later passes may move.
  run("asserted_sizes");
  run("dead_code");
  // A load proven always outside its tensor reads only its fill: folded first, it no longer
  // counts as a read of that tensor, which would block fusion (`fill(like)`, masks).
  run("bounds_check");
  // Before substitution, which would recompute an expensive temporary at each read.
  run("storage_reuse");
  // Fusion enables substitution, and removing a temporary can enable more fusion.
  for (Program before; !equal(before, p);) {
    before = p;
    run("loop_fusion");
    run("variable_substitution");
    run("dead_code");
  }
  // Last of the structural passes: fusion needs carried scalars and pivots where lowering put them.
  run("loop_order");
  run("bounds_check");
  run("simplify");
  return p;
}

Program plan_cpu(Program p, const CpuTarget& target, const PipelineOptions& options) {
  Runner runner(options, target);
  // The tilings first (they make new loops), then the decisions on the loops they leave.
  for (const char* name :
       {"tile_dots", "tile_reductions", "tile_registers", "tile_scatters", "tile_copies",
        "accumulator_promotion", "parallel_loops", "simd_reductions", "simd_math", "row_local_runs",
        "register_tiles", "fill_trimming", "epilogue_folding", "empty_range_tests"})
    runner.run(name, p);
  return p;
}

}  // namespace uops
