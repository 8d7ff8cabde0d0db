#include "uops/passes/pipeline.h"

#include <algorithm>
#include <iostream>

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

std::vector<std::string> pass_names() {
  return {"dead_code",  "loop_fusion",  "variable_substitution",
          "loop_order", "bounds_check", "simplify"};
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
  auto run = [&](const std::string& name, Program (*pass)(Program)) {
    p = pass(std::move(p));
    if (options.verify) verify_or_throw(p, name);
    if (which == "all" || which == name) dump << "// after " << name << "\n" << print(p);
  };
  run("dead_code", eliminate_dead_code);
  // Before substitution, which would recompute an expensive temporary at each read.
  run("storage_reuse", reuse_storage);
  // Fusion enables substitution, and removing a temporary can enable more fusion.
  for (std::string before; before != print(p);) {
    before = print(p);
    run("loop_fusion", fuse_loops);
    run("variable_substitution", substitute_variables);
    run("dead_code", eliminate_dead_code);
  }
  // Last of the structural passes: fusion needs carried scalars and pivots where lowering put them.
  run("loop_order", order_loops);
  run("bounds_check", eliminate_bounds_checks);
  run("simplify", simplify);
  return p;
}

}  // namespace uops
