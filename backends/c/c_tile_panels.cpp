#include "backends/c/c_tile_panels.h"

#include "backends/codegen/kernel_writer.h"
#include "ir/range_prover.h"
#include "uops/ir/analysis.h"
#include "uops/ir/value_expr.h"
#include "uops/parser/index_expr.h"

namespace uops::cgen {

using namespace ir;

namespace {

// Loop l of block b runs at most kTilePanelRows iterations: as the range analysis proves, or as a
// reduction tile's range [s, min(n, s + R)) reads (tile_reductions), R at most that.
bool at_most_panel(const Program& p, const Block& b, const Loop& l) {
  const Index rows = idx::constant(codegen::kTilePanelRows);
  if (RangeProver(p, b).nonnegative(idx::sub(rows, idx::sub(l.end, l.start)))) return true;
  auto tile_end = [&](const Index& e) {
    int64_t r = 0;
    return e->kind == IndexKind::Add && equal(e->a, l.start) && is_const(e->b, &r) &&
           r <= codegen::kTilePanelRows;
  };
  return l.end->kind == IndexKind::Min && (tile_end(l.end->a) || tile_end(l.end->b));
}

}  // namespace

void plan_tile_panels(Program& p, int vector_bytes) {
  for (Block& b : p.blocks) {
    const size_t n = b.loops.size();
    size_t k = 0;
    while (k < n && !b.loops[k].plan.tile) ++k;
    // The tile's loop right outside its rows, which hold whole rows of 16 lanes, or AVX-512's
    // whole rows of 64 columns (that GCC vectorizes).
    const Loop& lanes = b.loops.back();
    int64_t first = -1, last = -1;
    if (k == n || k + 1 + size_t(b.loops[k].plan.tile) != n || !is_const(lanes.start, &first) ||
        first != 0 || !is_const(lanes.end, &last) || lanes.stmts.size() != 1 ||
        !(lanes.plan.tile_width == 16 ? last == 16 && vector_bytes < 64
                                      : !lanes.plan.tile_width && last == 64 && vector_bytes == 64))
      continue;
    bool team = false;
    for (const Loop& l : b.loops) team |= l.plan.starts_team();
    const Loop& step = b.loops[k];
    if (team || may_raise(step.start) || may_raise(step.end) || !at_most_panel(p, b, step))
      continue;
    const TensorSets sets = tensor_sets(b, int(p.tensors.size()));
    for_each_load(lanes.stmts[0].value, [&](const ValueNode& load) {
      if (!b.loops[k].plan.tile_panel.empty() || load.checked || sets.writes[size_t(load.tensor)] ||
          p.tensors[size_t(load.tensor)].dtype != DType::f32 || !reads_row(load.index, lanes.var) ||
          !uses_var(load.index, step.var))
        return;
      for (size_t t = k + 1; t + 1 < n; ++t)
        if (uses_var(load.index, b.loops[t].var)) return;
      for (const Index& e : load.index)
        if (uses_data(e) || may_raise(e)) return;
      b.loops[k].plan.tile_panel.emplace_back(load.tensor, load.index);
    });
  }
}

}  // namespace uops::cgen
