#include "uops/passes/packed_variant.h"

#include <algorithm>

#include "uops/error.h"
#include "uops/ir/analysis.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/loop_order.h"
#include "uops/passes/simplify.h"

namespace uops {

std::optional<PackedVariant> packed_variant(const ir::Program& p) {
  PackedVariant v;
  v.program = simplify(order_loops(split_row_reductions(p), &v.copies));
  // The lengths are evaluated before the kernel runs, where a plain kernel might never evaluate
  // them: none may raise an error.
  for (auto& c : v.copies)
    if (ir::may_raise(c.reuse) || ir::may_raise(c.reduction)) return std::nullopt;
  if (v.copies.empty()) return std::nullopt;
  UOPS_ASSERT(v.program.tensors.size() > p.tensors.size() &&
                  std::equal(p.tensors.begin(), p.tensors.end(), v.program.tensors.begin(),
                             [](const ir::TensorInfo& a, const ir::TensorInfo& b) {
                               return a.name == b.name && a.role == b.role && a.dtype == b.dtype;
                             }),
              "packed variant must keep the program's tensors and append its copies");
  return v;
}

bool packed_variant_pays(const std::vector<PackedOnce>& copies, const ir::IndexEnv& env) {
  return std::all_of(copies.begin(), copies.end(), [&](const PackedOnce& c) {
    int64_t reuse = ir::evaluate(c.reuse, env);
    return reuse >= (ir::evaluate(c.reduction, env) <= kPackedShortReduction ? kPackedReuseShort
                                                                             : kPackedReuseLong);
  });
}

}  // namespace uops
