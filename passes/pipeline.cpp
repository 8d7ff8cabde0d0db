#include "uops/passes/pipeline.h"

#include <algorithm>
#include <iostream>
#include <iterator>
#include <string_view>

#include "uops/error.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/passes/bounds_check.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/loop_order.h"
#include "uops/passes/simplify.h"
#include "uops/passes/storage_reuse.h"
#include "uops/passes/variable_substitution.h"

namespace uops {

using namespace ir;

namespace {

struct Pass {
  const char* name;
  Program (*run)(Program);
};

// Every pass the pipeline runs, in the order each first runs: optimize(), `dump_after` and
// pass_names() all read this one table.
constexpr Pass kPasses[] = {
    {"dead_code", eliminate_dead_code},
    {"bounds_check", eliminate_bounds_checks},
    {"storage_reuse", reuse_storage},
    {"loop_fusion", fuse_loops},
    {"variable_substitution", substitute_variables},
    {"loop_order", order_loops},
    {"simplify", simplify},
};

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const Pass& pass : kPasses) names.push_back(pass.name);
  return names;
}

Program optimize(Program p, const PipelineOptions& options) {
  auto names = pass_names();
  const std::string& which = options.dump_after;
  if (!which.empty() && which != "all" &&
      std::find(names.begin(), names.end(), which) == names.end()) {
    std::string list;
    for (auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw Error("unknown pass '" + which + "' (passes are " + list + ", or all)");
  }
  std::ostream& dump = options.dump ? *options.dump : std::cerr;
  auto run = [&](std::string_view name) {
    auto pass = std::find_if(std::begin(kPasses), std::end(kPasses),
                             [&](const Pass& q) { return name == q.name; });
    UOPS_ASSERT(pass != std::end(kPasses), "pipeline runs a pass missing from its table");
    p = pass->run(std::move(p));
    if (options.verify) verify_or_throw(p, pass->name);
    if (which == "all" || which == name) dump << "// after " << name << "\n" << print(p);
  };
  run("dead_code");
  // A load proven always outside its tensor reads only its fill: folded first, it no longer
  // counts as a read of that tensor, which would block fusion (`fill(like)`, masks).
  run("bounds_check");
  // Before substitution, which would recompute an expensive temporary at each read.
  run("storage_reuse");
  // Fusion enables substitution, and removing a temporary can enable more fusion.
  for (std::string before; before != print(p);) {
    before = print(p);
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

}  // namespace uops
