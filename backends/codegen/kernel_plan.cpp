#include "backends/codegen/kernel_plan.h"

#include <algorithm>

#include "backends/codegen/zero_fill.h"
#include "ir/parallelism.h"
#include "uops/ir/analysis.h"

namespace uops::codegen {

using namespace ir;

namespace {

// Whether loop variable `var` appears in the index of any store of the block.
bool indexes_a_store(const Block& b, int var) {
  for (auto& l : b.loops)
    for (auto& s : l.stmts)
      if (s.kind != StmtKind::reduce)
        for (auto& e : s.index)
          if (uses_var(e, var)) return true;
  return false;
}

// How many outer loops go to the grid: each independent (atomics allowed), all but the last
// without statements of their own, so that the flattened index covers them exactly. Once the
// grid holds a loop whose iterations are exclusive, a loop that only reduces (its variable
// indexes no store, like matmul's k) runs per thread instead: on the grid, every one of its
// iterations would be an atomic on the same element.
size_t grid_loops(const Program& p, const Block& b) {
  auto par = loop_parallelism(p, b);
  size_t m = 0;
  bool exclusive_on_grid = false;
  for (size_t k = 0; k < b.loops.size(); ++k) {
    if (!par[k].with_atomics || bounds_use_vars(b.loops[k])) break;
    if (exclusive_on_grid && !par[k].exclusive && !indexes_a_store(b, b.loops[k].var)) break;
    exclusive_on_grid |= par[k].exclusive && !runs_once(b.loops[k]);
    m = k + 1;
    if (b.loops[k].is_pivot()) break;
  }
  return m;
}

// A cooperative reduction: the loops after the grid loops only reduce, in the innermost one,
// into scalars the last grid loop owns, with ops whose partial results combine.
bool cooperative(const Block& b, size_t m) {
  if (m == 0 || m >= b.loops.size()) return false;
  const Loop& owner = b.loops[m - 1];
  if (owner.carried.empty()) return false;
  for (size_t k = m; k + 1 < b.loops.size(); ++k)
    if (b.loops[k].is_pivot()) return false;
  const Loop& inner = b.loops.back();
  if (!inner.carried.empty() || inner.stmts.empty()) return false;
  for (auto& s : inner.stmts) {
    if (s.kind != StmtKind::reduce || is_arg_reduce(s.op)) return false;
    bool owned = false;
    for (auto& c : owner.carried) owned |= c.id == s.carried;
    if (!owned) return false;
  }
  for (auto& c : owner.carried)
    if (is_arg_reduce(c.op)) return false;
  return true;
}

std::vector<bool> vars_read(const Block& b) {
  std::vector<int> vars;
  visit(b, [&](const Index& e) { collect_vars(e, vars); });
  std::vector<bool> out;
  for (auto& l : b.loops) out.push_back(std::find(vars.begin(), vars.end(), l.var) != vars.end());
  return out;
}

}  // namespace

LaunchPlan plan_launch(const Program& p) {
  LaunchPlan plan;
  plan.zero_fill = needs_zero_fill(p);
  for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
    KernelPlan k;
    k.name = "block" + std::to_string(bi);
    k.block = int(bi);
    k.loops = exclusive_loops_first(p, p.blocks[bi]);
    k.grid_loops = grid_loops(p, k.loops);
    k.cooperative = cooperative(k.loops, k.grid_loops);
    k.atomic = colliding_tensors(p, k.loops, int(k.grid_loops));
    k.var_read = vars_read(k.loops);
    for (size_t l = 0; l < k.grid_loops; ++l)
      k.grid_extents.push_back(idx::sub(k.loops.loops[l].end, k.loops.loops[l].start));
    plan.kernels.push_back(std::move(k));
  }
  return plan;
}

LaunchDims launch_dims(const KernelPlan& k, const IndexEnv& env) {
  int64_t total = 1;
  for (const Index& extent : k.grid_extents) total *= std::max<int64_t>(0, evaluate(extent, env));
  const int64_t threads = LaunchPlan::threads_per_block, most = LaunchPlan::max_grid;
  if (k.cooperative) return {unsigned(std::clamp<int64_t>(total, 1, most)), unsigned(threads)};
  if (k.grid_loops > 0)
    return {unsigned(std::clamp<int64_t>((total + threads - 1) / threads, 1, most)),
            unsigned(threads)};
  return {1, 1};
}

PackedArgs pack_args(const KernelPlan& k, const Binding& b,
                     const std::vector<DeviceAddress>& buffers, DeviceAddress error_word) {
  PackedArgs out;
  for (const KernelArg& a : k.args) {
    if (a.kind == KernelArg::tensor)
      out.words.push_back(buffers.at(size_t(a.tensor_id)));
    else
      out.words.push_back(uint64_t(a.kind == KernelArg::size ? b.shapes[a.tensor_id][a.axis]
                                                             : b.params.at(a.name)));
  }
  out.words.push_back(error_word);
  for (auto& w : out.words) out.pointers.push_back(&w);
  return out;
}

}  // namespace uops::codegen
