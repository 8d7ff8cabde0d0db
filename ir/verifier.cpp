#include "uops/ir/verifier.h"

#include <algorithm>
#include <map>

#include "ir/parallelism.h"
#include "uops/error.h"
#include "uops/ir/analysis.h"
#include "uops/ir/printer.h"

namespace uops::ir {

namespace {

class Verifier {
 public:
  explicit Verifier(const Program& p) : p_(p) {}

  std::vector<std::string> run() {
    for (size_t t = 0; t < p_.tensors.size(); ++t) check_shape(int(t));
    for (auto& eq : p_.equalities)
      for (const Index& e : {eq.a, eq.b}) check_static(e, "an assertion");
    std::map<int, int> owner_block;
    for (size_t b = 0; b < p_.blocks.size(); ++b)
      for (auto& l : p_.blocks[b].loops)
        for (auto& c : l.carried) {
          if (c.id < 0 || c.id >= p_.num_carried)
            fail("block " + std::to_string(b) + ": carried c" + std::to_string(c.id) +
                 " out of range");
          if (!owner_block.emplace(c.id, int(b)).second)
            fail("carried c" + std::to_string(c.id) + " is owned by two loops");
        }
    for (size_t b = 0; b < p_.blocks.size(); ++b) check_block(int(b));
    for (int t : p_.outputs())
      if (std::find(written_.begin(), written_.end(), t) == written_.end())
        fail("output '" + p_.tensors[t].name + "' is never written");
    return std::move(errors_);
  }

 private:
  void fail(const std::string& what) { errors_.push_back(what); }

  void check_static(const Index& e, const std::string& where) {
    rewrite(e, [&](const Index& leaf) -> Index {
      if (leaf->kind == IndexKind::Var || leaf->kind == IndexKind::Data)
        fail(where + " uses a loop variable or data");
      if (leaf->kind == IndexKind::Dim) {
        if (leaf->tensor < 0 || leaf->tensor >= int64_t(p_.tensors.size()) ||
            p_.tensors[leaf->tensor].role != Role::input ||
            leaf->axis >= int(p_.tensors[leaf->tensor].shape.size()))
          fail(where + " names an axis that is no input axis");
      }
      if (leaf->kind == IndexKind::Param &&
          std::find(p_.params.begin(), p_.params.end(), leaf->name) == p_.params.end())
        fail(where + " uses the undeclared parameter $" + leaf->name);
      return nullptr;
    });
  }

  void check_shape(int t) {
    const TensorInfo& info = p_.tensors[t];
    for (size_t a = 0; a < info.shape.size(); ++a) {
      if (info.role == Role::input) {
        if (info.shape[a]->kind != IndexKind::Dim || info.shape[a]->tensor != t ||
            info.shape[a]->axis != int(a))
          fail("input '" + info.name + "' axis " + std::to_string(a) + " is not its own size");
      } else {
        check_static(info.shape[a], "the shape of '" + info.name + "'");
      }
    }
  }

  // `vars`: loop variables in scope.
  void check_index(const Index& e, const std::vector<int>& vars, const std::string& where) {
    rewrite(e, [&](const Index& leaf) -> Index {
      switch (leaf->kind) {
        case IndexKind::Var:
          if (std::find(vars.begin(), vars.end(), leaf->var) == vars.end())
            fail(where + " uses v" + std::to_string(leaf->var) + " outside its loop");
          break;
        case IndexKind::Data:
          if (!valid_tensor(leaf->tensor) || p_.tensors[leaf->tensor].dtype != DType::i32 ||
              leaf->args.size() != p_.tensors[leaf->tensor].shape.size())
            fail(where + " reads an index from something that is no i32 tensor of that rank");
          else
            for (auto& a : leaf->args) check_index(a, vars, where);
          return leaf;
        default:
          check_static(leaf, where);
      }
      return nullptr;
    });
  }

  bool valid_tensor(int t) const { return t >= 0 && t < int(p_.tensors.size()); }

  void check_access(int t, const std::vector<Index>& index, const std::vector<int>& vars,
                    const std::string& where) {
    if (!valid_tensor(t))
      return fail(where + " names tensor #" + std::to_string(t) + " which does not exist");
    if (index.size() != p_.tensors[t].shape.size())
      fail(where + " indexes '" + p_.tensors[t].name + "' with " + std::to_string(index.size()) +
           " expressions, its rank is " + std::to_string(p_.tensors[t].shape.size()));
    for (auto& e : index) check_index(e, vars, where);
  }

  void check_value(const Value& v, const std::vector<int>& vars, const std::vector<int>& carried,
                   const std::string& where) {
    if (!v) return fail(where + " has no value");
    switch (v->kind) {
      case ValueKind::Load:
        check_access(v->tensor, v->index, vars, where);
        break;
      case ValueKind::Carried:
        if (std::find(carried.begin(), carried.end(), v->carried) == carried.end())
          fail(where + " reads c" + std::to_string(v->carried) + " outside its loop");
        break;
      case ValueKind::IndexValue:
        check_index(v->ivalue, vars, where);
        break;
      case ValueKind::Ternary:
        check_value(v->c, vars, carried, where);
        [[fallthrough]];
      case ValueKind::Binary:
        check_value(v->b, vars, carried, where);
        [[fallthrough]];
      case ValueKind::Unary:
        check_value(v->a, vars, carried, where);
        break;
      case ValueKind::Const:
        break;
    }
  }

  void check_block(int b) {
    const Block& block = p_.blocks[b];
    std::string where = "block " + std::to_string(b);
    if (block.loops.empty()) fail(where + " has no loops");
    std::vector<int> vars, carried;
    std::map<int, ReduceOp> carried_op;
    for (auto& l : block.loops) {
      check_index(l.start, vars, where + " loop bound");
      check_index(l.end, vars, where + " loop bound");
      if (std::find(vars.begin(), vars.end(), l.var) != vars.end() || l.var < 0 ||
          l.var >= p_.num_vars)
        fail(where + ": loop variable v" + std::to_string(l.var) + " is reused or out of range");
      vars.push_back(l.var);
      for (auto& c : l.carried) {
        carried.push_back(c.id);
        carried_op[c.id] = c.op;
        if (c.op == ReduceOp::mean)
          fail(where + ": carried c" + std::to_string(c.id) + " uses mean");
      }
      for (auto& s : l.stmts) check_stmt(s, vars, carried, carried_op, where);
    }
    check_plans(b);
  }

  // A fill that runs only where block t does not store its elements from a tile's start
  // (LoopPlan::fill_unless): t is a later block with such a tile, whose first-round loops have
  // bounds the fill's guard can evaluate in front of it.
  void check_fill_unless(int b, int t, const std::string& where) {
    bool starts = false;
    if (t > b && size_t(t) < p_.blocks.size())
      for (const Loop& l : p_.blocks[size_t(t)].loops) {
        if (!l.plan.tile || !l.plan.tile_start) continue;
        starts = true;
        for (int v : l.plan.tile_start_first)
          for (const Loop& m : p_.blocks[size_t(t)].loops)
            starts &= m.var != v || !bounds_use_vars(m);
      }
    if (!starts)
      fail(where + " fills only where block " + std::to_string(t) +
           " does not, which has no tile that starts from a known value in loops it can test");
  }

  // A register tile's loops follow its loop and have constant ranges (but for the innermost's
  // end in rows of lanes, whose statements compute on whole vectors); its corner tests read
  // tensors at their rank; an empty-range test names a loop further in with fixed bounds.
  void check_tiles(int b) {
    const Block& block = p_.blocks[b];
    std::string where = "block " + std::to_string(b);
    size_t n = block.loops.size();
    for (size_t k = 0; k < n; ++k) {
      const LoopPlan& plan = block.loops[k].plan;
      std::string at = where + " loop " + std::to_string(k);
      if (plan.tile < 0 || (plan.tile > 0 && k + size_t(plan.tile) >= n)) {
        fail(at + " keeps a tile of loops it does not hold");
      } else if (plan.tile > 0) {
        int64_t c = 0;
        for (size_t x = n - size_t(plan.tile); x < n; ++x)
          if (!is_const(block.loops[x].start, &c) ||
              (!is_const(block.loops[x].end, &c) && !block.loops[x].plan.tile_width))
            fail(at + "'s tile loop " + std::to_string(x) + " has no constant range");
        if (!block.loops.back().stmts.empty() && block.loops.back().stmts[0].checked &&
            plan.tile_corners.empty())
          fail(at + " keeps a tile of elements that may fall outside, untested in front of it");
      }
      // A corner's axes that a loop spans whole keep their variable (they are not tested).
      std::vector<int> vars;
      for (auto& l : block.loops) vars.push_back(l.var);
      for (auto& [t, index] : plan.tile_corners)
        check_access(t, index, vars, at + "'s tile corner");
      for (auto& [t, index] : plan.prefetch) check_access(t, index, vars, at + "'s prefetch");
      for (auto& [t, index] : plan.tile_panel) check_access(t, index, vars, at + "'s panel");
      if (!plan.tile_rows.empty() && plan.tile_corners.empty())
        fail(at + " reads rows in the else of a tile corner test it does not make");
      if (!plan.tile_rows.empty() &&
          (plan.tile_rows_at >= int(n) || plan.tile_rows_at < int(row_binding_loop(block, k))))
        fail(at + " binds its rows in front of loop " + std::to_string(plan.tile_rows_at) +
             ", outside its test or where a loop inside moves them");
      if (!plan.tile_steps.empty()) {
        if (plan.tile_corners.empty())
          fail(at + " binds rows by steps in the else of a tile corner test it does not make");
        const bool placed = plan.tile_steps_at >= int(k) && plan.tile_steps_at + 2 < int(n);
        if (!placed)
          fail(at + " binds rows by steps in front of loop " + std::to_string(plan.tile_steps_at) +
               ", outside its test or inside the tile");
        for (auto& step : placed ? plan.tile_steps : decltype(plan.tile_steps){}) {
          const int t = step.first;
          const std::vector<Index>& index = step.second;
          bool found = false;
          for (auto& s : block.loops.back().stmts)
            for_each_load(s.value, [&](const ValueNode& l) {
              found |= l.checked && l.tensor == t && same_index(l.index, index) &&
                       l.index.back()->kind == IndexKind::Var &&
                       l.index.back()->var == block.loops[size_t(plan.tile_steps_at)].var;
            });
          if (!found)
            fail(at + " binds by steps a load its tile does not make along loop " +
                 std::to_string(plan.tile_steps_at));
        }
      }
      if (plan.tile_width) {
        bool lanes = k + 1 == n && plan.tile_width > 0;
        for (auto& s : block.loops[k].stmts)
          lanes &= s.kind == StmtKind::accumulate && s.op == ReduceOp::sum &&
                   lane_wise(p_, s.value, block.loops[k].var);
        if (!lanes)
          fail(at +
               " runs in rows of lanes but is not the innermost loop, or computes what"
               " lanes cannot");
      }
      for (int m : plan.empty_tests) {
        if (m < int(k) || m >= int(n) || bounds_use_any_var(block.loops[size_t(m)]))
          fail(at + " tests the range of loop " + std::to_string(m) +
               ", which is neither it nor a loop inside it with bounds free of loop variables");
        for (int x = 0; x < m && !block.loops[size_t(m)].plan.tile_width; ++x)
          if (block.loops[size_t(x)].plan.tile)
            fail(at + " tests the range of loop " + std::to_string(m) +
                 ", inside a tile whose store that would skip");
      }
    }
  }

  static bool bounds_use_any_var(const Loop& l) {
    bool uses = false;
    for (auto* e : {&l.start, &l.end})
      visit(*e, [&](const IndexNode& x) { uses |= x.kind == IndexKind::Var; });
    return uses;
  }

  // The loops' plans (LoopPlan) say what the C backend's passes allow them to say.
  void check_plans(int b) {
    const Block& block = p_.blocks[b];
    std::string where = "block " + std::to_string(b);
    int parallel = 0;
    for (size_t k = 0; k < block.loops.size(); ++k) {
      const LoopPlan& plan = block.loops[k].plan;
      std::string at = where + " loop " + std::to_string(k);
      if (plan.threads != LoopPlan::Threads::none) ++parallel;
      if (plan.collapse < 1 || (plan.collapse > 1 && plan.threads == LoopPlan::Threads::none))
        fail(at + " collapses " + std::to_string(plan.collapse) + " loops");
      if (plan.collapse > 1) {
        auto par = loop_parallelism(p_, block);
        for (size_t m = k + 1; m < k + size_t(plan.collapse); ++m)
          if (!joins_collapse(block, par, m)) {
            fail(at + " collapses loop " + std::to_string(m) +
                 ", which is not an exclusive loop perfectly nested in the one before");
            break;
          }
      }
      if ((plan.threads == LoopPlan::Threads::team_if) != bool(plan.work))
        fail(at + ": only a team_if parallel loop has a work size, and it has one");
      if (plan.work) check_static(plan.work, at + "'s work size");
      if (plan.reports_errors && plan.threads != LoopPlan::Threads::team &&
          plan.threads != LoopPlan::Threads::team_if)
        fail(at + " reports errors without a team");
      if (plan.nowait &&
          (plan.threads == LoopPlan::Threads::none || plan.threads == LoopPlan::Threads::serial ||
           !stays_with_threads(block, k)))
        fail(at + " does not wait for its threads, which may touch each other's elements");
      if (k > 0 && (plan.single || plan.row_local || plan.fill_unless))
        fail(at + ": single, row_local and fill_unless belong to a block's outer loop");
      for (const Carried& c : plan.simd) {
        bool updated = false;
        for (auto& s : block.loops[k].stmts)
          updated |= s.kind == StmtKind::reduce && s.carried == c.id && s.op == c.op;
        if (k == 0 || k + 1 != block.loops.size() || !updated)
          fail(at + ": SIMD reduction of c" + std::to_string(c.id) +
               ", which this innermost loop does not reduce with " + op_name(c.op));
      }
      if (plan.narrow_lanes &&
          (plan.simd.empty() || std::any_of(plan.simd.begin(), plan.simd.end(),
                                            [](const Carried& c) { return is_arg_reduce(c.op); })))
        fail(at + ": fewer lanes for a loop with no SIMD reduction, or with an argmax or argmin");
      if (!plan.prefetch.empty() && !plan.lanes && !plan.tile)
        fail(at + ": prefetches outside a loop in lanes or a register tile's loop");
      if ((plan.tile_start || plan.tile_unrolled) && !plan.tile)
        fail(at + ": a tile's start or unrolled rows without a tile");
      for (int v : plan.tile_start_first) {
        bool outside = false;
        for (size_t x = 0; x < k; ++x) outside |= block.loops[x].var == v;
        if (!plan.tile_start || !outside)
          fail(at + ": a tile that starts in the first iteration of v" + std::to_string(v) +
               ", which is not a loop outside it, or with no start");
      }
      if (plan.tile_store && (!plan.tile || plan.tile_stream))
        fail(at + ": a tile's store map without a tile, or with streamed stores");
      if (plan.tile_stream && !plan.tile_start)
        fail(at + ": a streamed tile that does not start from a known value");
      const Loop& loop = block.loops[k];
      if (plan.stream && (k + 1 != block.loops.size() || loop.stmts.size() != 1 ||
                          loop.stmts[0].kind != StmtKind::assign || loop.stmts[0].checked ||
                          !loop.carried.empty() || plan.threads != LoopPlan::Threads::none))
        fail(at + ": streamed rows that are not the innermost loop's one unchecked assignment");
      // The printer writes a transposed copy tile's two loops as one call: nothing else planned.
      if (plan.tile_transpose) {
        if (k + 2 != block.loops.size() || !copies_transposed(p_, block))
          fail(at +
               ": a transposed copy tile that is not the last two loops of a block copying "
               "dst[..., i, j] = src[..., j, i]");
        for (size_t m = k; m < block.loops.size(); ++m) {
          const LoopPlan& q = block.loops[m].plan;
          if (q.threads != LoopPlan::Threads::none || !q.simd.empty() || q.simd_math || q.tile ||
              q.unroll || !q.empty_tests.empty() || q.row_local)
            fail(at + ": a transposed copy tile whose loop " + std::to_string(m) +
                 " has another plan");
        }
      }
      int64_t first = 0, end = 0;
      if (plan.unroll && !(is_const(block.loops[k].start, &first) &&
                           is_const(block.loops[k].end, &end) && end - first <= 1024))
        fail(at + ": unrolled without a constant range of at most 1024 iterations");
      if (plan.simd_math) {
        bool reduces = !plan.simd.empty();
        for (auto& s : block.loops[k].stmts) reduces |= s.kind == StmtKind::reduce;
        if (k + 1 != block.loops.size() || reduces || plan.threads != LoopPlan::Threads::none)
          fail(at + ": SIMD math on a loop that is not an innermost, serial loop reducing nothing");
      }
    }
    // A team with thread copies on the outer loop runs instead of the other parallel loop.
    const LoopPlan& first = block.loops.front().plan;
    bool copies = !first.thread_copies.empty();
    if (copies && first.threads != LoopPlan::Threads::team &&
        first.threads != LoopPlan::Threads::team_if)
      fail(where + " has thread copies without a team on its outer loop");
    for (size_t k = 1; k < block.loops.size(); ++k)
      if (!block.loops[k].plan.thread_copies.empty())
        fail(where + " loop " + std::to_string(k) +
             ": thread copies belong to a block's outer loop");
    // A copy starts at zero and is added in: the block may only sum into the tensor.
    for (auto& a : block_accesses(block)) {
      if (std::find(first.thread_copies.begin(), first.thread_copies.end(), a.tensor) ==
          first.thread_copies.end())
        continue;
      const Stmt* s = a.stmt < 0 ? nullptr : &block.loops[size_t(a.loop)].stmts[size_t(a.stmt)];
      if (!a.write || !s || s->kind != StmtKind::accumulate || s->op != ReduceOp::sum)
        fail(where + " has thread copies of " + p_.tensors[size_t(a.tensor)].name +
             ", which it does not only sum into");
    }
    if (parallel > (copies ? 2 : 1))
      fail(where + " has " + std::to_string(parallel) + " parallel loops");
    check_tiles(b);
    const Loop& outer = block.loops.front();
    if (int n = outer.plan.fill_unless) check_fill_unless(b, b + n, where);
    if (outer.plan.row_local < 0 || size_t(b) + size_t(outer.plan.row_local) >= p_.blocks.size()) {
      if (outer.plan.row_local) fail(where + "'s row-local run goes past the last block");
      return;
    }
    for (int i = 0; outer.plan.row_local && i <= outer.plan.row_local; ++i) {
      const Block& other = p_.blocks[size_t(b + i)];
      const Loop& l = other.loops.front();
      if (other.loops.size() < 2 || !equal(l.start, outer.start) || !equal(l.end, outer.end) ||
          (i > 0 && (l.plan.threads != LoopPlan::Threads::none || l.plan.row_local)))
        fail(where + "'s row-local run holds block " + std::to_string(b + i) +
             ", which cannot share its outer loop");
    }
  }

  void check_stmt(const Stmt& s, const std::vector<int>& vars, const std::vector<int>& carried,
                  std::map<int, ReduceOp>& carried_op, const std::string& where) {
    check_value(s.value, vars, carried, where);
    if (s.kind == StmtKind::reduce) {
      if (std::find(carried.begin(), carried.end(), s.carried) == carried.end())
        return fail(where + " updates c" + std::to_string(s.carried) + " outside its loop");
      if (carried_op[s.carried] != s.op)
        fail(where + " updates c" + std::to_string(s.carried) + " with another op");
      if (is_arg_reduce(s.op) != bool(s.arg))
        fail(where + ": an arg-reduction needs its position, and only it has one");
      if (s.arg) check_index(s.arg, vars, where);
      return;
    }
    check_access(s.tensor, s.index, vars, where);
    if (!valid_tensor(s.tensor)) return;
    if (p_.tensors[s.tensor].role == Role::input)
      fail(where + " writes the input '" + p_.tensors[s.tensor].name + "'");
    if (s.kind == StmtKind::accumulate && s.op != ReduceOp::sum && s.op != ReduceOp::max &&
        s.op != ReduceOp::min)
      fail(where + ": accumulate with " + op_name(s.op));
    written_.push_back(s.tensor);
  }

  const Program& p_;
  std::vector<std::string> errors_;
  std::vector<int> written_;
};

}  // namespace

std::vector<std::string> verify(const Program& p) {
  return Verifier(p).run();
}

void verify_or_throw(const Program& p, const std::string& stage) {
  auto errors = verify(p);
  if (errors.empty()) return;
  std::string msg = "invalid program after " + stage + ":\n";
  for (auto& e : errors) msg += "  " + e + "\n";
  throw InternalError(msg + print(p));
}

}  // namespace uops::ir
