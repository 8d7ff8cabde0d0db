#include "backends/c/c_window_gather.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "uops/ir/analysis.h"
#include "uops/ir/fixed_params.h"
#include "uops/parser/index_expr.h"

namespace uops::cgen {

using namespace ir;

namespace {

// An axis of the written index that a window writes: u + v + e, u the pair's loop further out.
struct Pair {
  size_t axis, u, v;  // the axis, and the positions of u's and v's loops in the block
  Index e;
};

// Where a piece of the gather runs on a window's axis: the rows every window position reaches
// (`inside`: the window's loop runs whole), those before or after them, or all of them.
enum class Part { inside, before, after, all };

// `e` with the parameters that fix_params fixed as constants (the constructors fold `* 1`).
Index fixed(const Program& p, const Index& e) {
  return rewrite(e, [&](const Index& x) -> Index {
    std::optional<int64_t> v = x->kind == IndexKind::Param ? fixed_value(p, x) : std::nullopt;
    return v ? idx::constant(*v) : nullptr;
  });
}

// Block b's window pairs, in the order of their outer loops; none where b is not such a scatter.
std::vector<Pair> window_pairs(const Program& p, const Block& b) {
  const Loop& last = b.loops.back();
  for (const Loop& l : b.loops)
    if (!l.carried.empty() || bounds_use_vars(l) || (&l != &last && !l.stmts.empty()) ||
        may_raise(l.start) || may_raise(l.end) || uses_data(l.start) || uses_data(l.end))
      return {};
  if (last.stmts.size() != 1) return {};
  const Stmt& s = last.stmts[0];
  bool reads = false, data = false;
  for_each_load(s.value, [&](const ValueNode& n) { reads |= n.tensor == s.tensor; });
  visit(
      s.value, [](const ValueNode&) {}, [&](const Index& e) { data |= uses_data(e); });
  if (s.kind != StmtKind::accumulate || s.op != ReduceOp::sum || reads || data || may_raise(s))
    return {};
  auto at = [&](int var) {
    size_t k = 0;
    while (b.loops[k].var != var) ++k;
    return k;
  };
  std::vector<int> uses(b.loops.size(), 0);
  std::vector<Pair> pairs;
  for (size_t a = 0; a < s.index.size(); ++a) {
    const Index e = fixed(p, s.index[a]);
    std::vector<int> vars;
    collect_vars(e, vars);
    if (uses_data(e)) return {};
    for (int v : vars) ++uses[at(v)];
    if (vars.empty() || e->kind == IndexKind::Var) continue;
    if (vars.size() != 2 || !plus_var(e, vars[0]) || !plus_var(e, vars[1])) return {};
    Index rest = rewrite(e, [](const Index& x) -> Index {
      return x->kind == IndexKind::Var ? idx::constant(0) : nullptr;
    });
    if (!is_fixed(rest)) return {};
    const size_t u = at(vars[0]), v = at(vars[1]);
    pairs.push_back({a, std::min(u, v), std::max(u, v), rest});
  }
  if (std::any_of(uses.begin(), uses.end(), [](int n) { return n != 1; })) return {};
  std::sort(pairs.begin(), pairs.end(), [](const Pair& x, const Pair& y) { return x.u < y.u; });
  return pairs;
}

// The gather of scatter b over the rows `parts` gives each window (c_window_gather.h). A window
// pair's loop u becomes the written axis' loop h, over [0, its extent) or the part of it that
// `parts` names; v's (or the pair's second loop in order, so that the terms keep theirs) becomes
// j, with v = ve - 1 - j and u = h - e - (ve - 1) + j: u ascending. Where the part is not
// `inside`, j's bounds leave out the positions where u falls outside [us, ue).
//
// Outside the tiles' rows (`parts` not all `inside`), where the elements held +0 (`from_zero`),
// the loops the written index uses run outside the window's and sum each element's terms in a
// scalar, stored once: the lane groups (c_lane_groups.h) then keep the scalars of 16 channels in
// a vector, where each term loaded and stored the element (the borders 1.5 times faster).
Block gather(Program& p, const Block& b, const std::vector<Pair>& pairs,
             const std::vector<Part>& parts, bool from_zero) {
  const Stmt& s = b.loops.back().stmts[0];
  std::vector<size_t> seconds;
  for (const Pair& w : pairs) seconds.push_back(w.v);
  std::sort(seconds.begin(), seconds.end());
  Block g = b;
  for (Loop& l : g.loops) l.stmts.clear();
  std::vector<Index> by_var(size_t(p.num_vars));
  std::vector<Index> index = s.index;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Pair& w = pairs[i];
    const Loop &u = b.loops[w.u], &v = b.loops[w.v];
    const Index us = fixed(p, u.start), ue = fixed(p, u.end), vs = fixed(p, v.start),
                ve = fixed(p, v.end);
    const Index extent = fixed(p, p.tensors[size_t(s.tensor)].shape[w.axis]);
    const Index zero = idx::constant(0), one = idx::constant(1), last = idx::sub(ve, one);
    // The rows every position reaches: h - e - (ve - 1) >= us and h - e - vs < ue.
    const Index from = idx::min(idx::max(idx::add(idx::add(us, last), w.e), zero), extent);
    const Index to = idx::min(idx::max(idx::add(idx::add(ue, vs), w.e), from), extent);
    Loop h{.var = p.num_vars++}, j{.var = p.num_vars++};
    h.start = parts[i] == Part::after ? to : parts[i] == Part::inside ? from : zero;
    h.end = parts[i] == Part::before ? from : parts[i] == Part::inside ? to : extent;
    const Index hv = idx::var(h.var), jv = idx::var(j.var);
    // u = h - e - (ve - 1) + j in [us, ue): j in [us - (h - e - (ve - 1)), ue - (same)).
    const Index base = idx::sub(idx::sub(hv, w.e), last);
    j.start = parts[i] == Part::inside ? zero : idx::max(zero, idx::sub(us, base));
    j.end = idx::sub(ve, vs);
    if (parts[i] != Part::inside) j.end = idx::min(j.end, idx::sub(ue, base));
    by_var[size_t(u.var)] = idx::add(base, jv);
    by_var[size_t(v.var)] = idx::sub(last, jv);
    index[w.axis] = hv;
    g.loops[w.u] = h;
    g.loops[seconds[i]] = j;
  }
  Stmt t = map_indices(s, [&](const Index& e) {
    return rewrite(e, [&](const Index& x) -> Index {
      return x->kind == IndexKind::Var && x->var < int(by_var.size()) ? by_var[size_t(x->var)]
                                                                      : nullptr;
    });
  });
  t.index = index;
  // The window's axes now stay in range; another axis needs its test unless its loop spans it.
  const LoopRanges ranges(p);
  t.checked = false;
  for (size_t a = 0; a < index.size(); ++a)
    if (std::none_of(pairs.begin(), pairs.end(), [&](const Pair& w) { return w.axis == a; }))
      t.checked |= s.checked && !ranges.spans_axis(s.tensor, a, index[a]);
  const bool inside =
      std::all_of(parts.begin(), parts.end(), [](Part x) { return x == Part::inside; });
  g.origin = b.origin + (inside ? ", gathered" : ", gathered at the border");
  if (inside || !from_zero) {
    g.loops.back().stmts = {t};
    return g;
  }
  auto stored = std::stable_partition(g.loops.begin(), g.loops.end(),
                                      [&](const Loop& l) { return uses_var(t.index, l.var); });
  Loop& element = *(stored - 1);
  element.carried = {Carried{p.num_carried++, ReduceOp::sum}};
  g.loops.back().stmts = {
      Stmt{.kind = StmtKind::reduce, .carried = element.carried[0].id, .value = t.value}};
  t.kind = StmtKind::assign;
  t.value = val::carried(element.carried[0].id);
  element.stmts = {t};
  return g;
}

}  // namespace

Program gather_windows(Program p) {
  std::vector<Block> blocks;
  for (const Block& b : p.blocks) {
    const std::vector<Pair> pairs = window_pairs(p, b);
    if (pairs.empty()) {
      blocks.push_back(b);
      continue;
    }
    // The rows every window position reaches first (the tiles' block), then the rows before and
    // after them on each window's axis in turn, whole on the axes after it.
    const std::optional<double> start =
        value_at_start(p, size_t(&b - p.blocks.data()), b.loops.back().stmts[0].tensor);
    const bool from_zero = start && *start == 0 && !std::signbit(*start);
    std::vector<Part> parts(pairs.size(), Part::inside);
    blocks.push_back(gather(p, b, pairs, parts, from_zero));
    for (size_t i = 0; i < pairs.size(); ++i) {
      std::fill(parts.begin() + long(i), parts.end(), Part::all);
      for (Part side : {Part::before, Part::after}) {
        parts[i] = side;
        blocks.push_back(gather(p, b, pairs, parts, from_zero));
      }
      parts[i] = Part::inside;
    }
  }
  p.blocks = std::move(blocks);
  return p;
}

}  // namespace uops::cgen
