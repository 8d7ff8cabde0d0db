#include "uops/ir/program.h"

#include <algorithm>
#include <iterator>

namespace uops::ir {

// Indexed by the enum, as uop_kind_name is.
const char* role_name(Role r) {
  static constexpr const char* kNames[] = {"input", "output", "temp"};
  static_assert(std::size(kNames) == size_t(Role::temporary) + 1);
  return size_t(r) < std::size(kNames) ? kNames[size_t(r)] : "?";
}

static std::vector<int> with_role(const std::vector<TensorInfo>& tensors, Role role) {
  std::vector<int> out;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].role == role) out.push_back(int(i));
  return out;
}

std::vector<int> Program::inputs() const {
  return with_role(tensors, Role::input);
}
std::vector<int> Program::outputs() const {
  return with_role(tensors, Role::output);
}

int Program::find_tensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name) return int(i);
  return -1;
}

DType Program::value_type() const {
  for (auto& t : tensors)
    if (t.dtype == DType::f64) return DType::f64;
  return DType::f32;
}

std::string dim_name(const Program& p, int tensor, int axis) {
  std::string name = tensor >= 0 && tensor < int(p.tensors.size()) ? p.tensors[tensor].name
                                                                   : "#" + std::to_string(tensor);
  return name + "." + std::to_string(axis);
}

std::string index_text(const Program& p, const Index& e) {
  return to_string(e, [&](const IndexNode& n) -> std::string {
    switch (n.kind) {
      case IndexKind::Var:
        return "v" + std::to_string(n.var);
      case IndexKind::Dim:
        return dim_name(p, n.tensor, n.axis);
      default:
        return n.tensor >= 0 && n.tensor < int64_t(p.tensors.size())
                   ? p.tensors[n.tensor].name
                   : "#" + std::to_string(n.tensor);
    }
  });
}

namespace {

template <class T, class Same>
bool all_same(const std::vector<T>& a, const std::vector<T>& b, Same same) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same);
}

bool same(const std::vector<Index>& a, const std::vector<Index>& b) {
  return all_same(a, b, [](const Index& x, const Index& y) { return equal(x, y); });
}

bool same(const LoopPlan& a, const LoopPlan& b) {
  auto same_access = [](auto& x, auto& y) {
    return x.first == y.first && same(x.second, y.second);
  };
  return a.threads == b.threads && a.collapse == b.collapse && equal(a.work, b.work) &&
         a.reports_errors == b.reports_errors && a.single == b.single && a.nowait == b.nowait &&
         a.simd == b.simd && a.lanes == b.lanes && a.lane_group == b.lane_group &&
         a.narrow_positions == b.narrow_positions && a.narrow_lanes == b.narrow_lanes &&
         a.narrow_upto == b.narrow_upto && a.simd_math == b.simd_math &&
         a.row_local == b.row_local && a.tile == b.tile && a.unroll == b.unroll &&
         a.tile_width == b.tile_width && a.tile_start == b.tile_start &&
         a.tile_start_first == b.tile_start_first && a.tile_stream == b.tile_stream &&
         a.stream == b.stream && a.tile_unrolled == b.tile_unrolled &&
         (a.tile_store ? b.tile_store && equal(a.tile_store, b.tile_store) : !b.tile_store) &&
         a.empty_tests == b.empty_tests && a.fill_unless == b.fill_unless &&
         a.tile_rows_at == b.tile_rows_at && a.tile_transpose == b.tile_transpose &&
         a.tile_steps_at == b.tile_steps_at && all_same(a.tile_steps, b.tile_steps, same_access) &&
         all_same(a.tile_corners, b.tile_corners, same_access) &&
         all_same(a.prefetch, b.prefetch, same_access) &&
         all_same(
             a.tile_rows, b.tile_rows,
             [](auto& x, auto& y) { return x.first == y.first && equal(x.second, y.second); }) &&
         all_same(a.tile_skip, b.tile_skip, [](auto& x, auto& y) {
           return x.tensor == y.tensor && x.axis == y.axis && equal(x.at, y.at);
         });
}

bool same(const Stmt& a, const Stmt& b) {
  return a.kind == b.kind && a.tensor == b.tensor && same(a.index, b.index) &&
         a.checked == b.checked && a.op == b.op && a.carried == b.carried &&
         equal(a.value, b.value) && equal(a.arg, b.arg);
}

bool same(const Loop& a, const Loop& b) {
  return a.var == b.var && equal(a.start, b.start) && equal(a.end, b.end) &&
         a.carried == b.carried && same(a.plan, b.plan) &&
         all_same(a.stmts, b.stmts, [](auto& x, auto& y) { return same(x, y); });
}

}  // namespace

bool equal(const Program& a, const Program& b) {
  return a.params == b.params && a.num_vars == b.num_vars && a.num_carried == b.num_carried &&
         all_same(a.tensors, b.tensors,
                  [](auto& x, auto& y) {
                    return x.name == y.name && x.dtype == y.dtype && x.role == y.role &&
                           same(x.shape, y.shape);
                  }) &&
         all_same(a.equalities, b.equalities,
                  [](auto& x, auto& y) { return equal(x.a, y.a) && equal(x.b, y.b); }) &&
         all_same(a.blocks, b.blocks, [](auto& x, auto& y) {
           return x.origin == y.origin && x.partition == y.partition &&
                  all_same(x.loops, y.loops, [](auto& k, auto& l) { return same(k, l); });
         });
}

}  // namespace uops::ir
