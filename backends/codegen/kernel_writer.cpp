#include "backends/codegen/kernel_writer.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "ir/parallelism.h"
#include "uops/error.h"
#include "uops/ir/analysis.h"
#include "uops/ir/fixed_params.h"
#include "uops/ir/printer.h"
#include "uops/passes/register_tiles.h"

namespace uops::codegen {

using namespace ir;

std::string kernel_error_message(int bits) {
  if (bits & kDivisionByZero) return "division by zero in an index expression";
  if (bits & kModuloByZero) return "modulo by zero in an index expression";
  return "integer overflow in an index expression";
}

KernelWriter::KernelWriter(const Program& p, const Dialect& d)
    : p_(p),
      d_(d),
      names_(make_names(p)),
      f64_(p.value_type() == DType::f64),
      ranges_(p),
      prover_(p) {
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& c : l.carried)
        if (is_arg_reduce(c.op)) arg_carried_[c.id] = l.plan.narrow_positions;
}

const char* KernelWriter::scalar() const {
  return f64_ ? "double" : "float";
}

const char* KernelWriter::element_type(DType t) {
  switch (t) {
    case DType::f32:
      return "float";
    case DType::f64:
      return "double";
    case DType::i32:
      return "int32_t";
  }
  return "float";
}

void KernelWriter::reset_usage() {
  tensors_.clear();
  sizes_.clear();
  params_.clear();
  uses_err_ = false;
}

std::string KernelWriter::math(const char* name) {
  if (!f64_ && d_.float_exp && std::string(name) == "exp") return helper(d_.float_exp);
  return *math_.insert(f64_ ? std::string(name) : std::string(name) + d_.float_math_suffix).first;
}

std::string KernelWriter::helper(const std::string& name) {
  helpers_.insert(name);
  return name;
}

std::string AtomicHelper::name() const {
  return std::string("atomic_") + op_name(op) + "_" + dtype_name(element) + "_" +
         (f64 ? "double" : "float");
}

// ---- index expressions ------------------------------------------------------------------------

std::string KernelWriter::fixed_param_declaration(const std::string& param) {
  std::optional<int64_t> v = fixed_param(p_, param);
  return v ? "  const int64_t " + names_.param(param) + " = " + index(idx::constant(*v)) + ";\n"
           : "";
}

std::string KernelWriter::print_index(const Index& e, int min_prec) {
  std::string s;
  int prec = 3;
  switch (e->kind) {
    case IndexKind::Const:
      s = e->constant == INT64_MIN ? "(-9223372036854775807 - 1)" : std::to_string(e->constant);
      prec = e->constant < 0 ? 1 : 3;
      break;
    case IndexKind::Var:
      s = Names::var(e->var);
      break;
    case IndexKind::Dim:
      sizes_.insert({e->tensor, e->axis});
      s = names_.size(e->tensor, e->axis);
      break;
    case IndexKind::Param:
      params_.insert(e->name);
      s = names_.param(e->name);
      break;
    case IndexKind::Data: {
      int t = e->tensor;
      tensors_.insert(t);
      s = "(" + in_range(t, e->args) + " ? (int64_t)" + names_.tensors[t] + "[" +
          offset(t, e->args) + "] : 0)";
      break;
    }
    case IndexKind::Neg: {
      std::string a = print_index(e->a, 3);
      s = "-" + (a[0] == '-' ? "(" + a + ")" : a);
      break;
    }
    case IndexKind::Min:
    case IndexKind::Max:
      s = helper(e->kind == IndexKind::Min ? "min_i64" : "max_i64") + "(" + print_index(e->a, 1) +
          ", " + print_index(e->b, 1) + ")";
      break;
    case IndexKind::Div:
    case IndexKind::Mod: {
      bool div = e->kind == IndexKind::Div;
      int64_t c = 0;
      bool positive = is_const(e->b, &c) && c > 0;
      if (positive && prover_.nonnegative(e->a)) {
        s = print_index(e->a, 2) + (div ? " / " : " % ") + print_index(e->b, 3);
        prec = 2;
      } else if (positive) {
        s = helper(div ? "floordiv_pos" : "floormod_pos") + "(" + print_index(e->a, 1) + ", " +
            print_index(e->b, 1) + ")";
      } else {
        uses_err_ = true;
        s = helper(div ? "floordiv" : "floormod") + "(" + print_index(e->a, 1) + ", " +
            print_index(e->b, 1) + ", &err)";
      }
      break;
    }
    default: {
      prec = e->kind == IndexKind::Mul ? 2 : 1;
      const char* op = e->kind == IndexKind::Add   ? " + "
                       : e->kind == IndexKind::Sub ? " - "
                                                   : " * ";
      s = print_index(e->a, prec) + op + print_index(e->b, prec + 1);
    }
  }
  return prec < min_prec ? "(" + s + ")" : s;
}

std::string KernelWriter::index(const Index& e) {
  return print_index(e, 1);
}

std::string KernelWriter::offset(int t, const std::vector<Index>& index) {
  tensors_.insert(t);
  if (index.empty()) return "0";
  std::string s = print_index(index[0], index.size() > 1 ? 2 : 1);
  for (size_t a = 1; a < index.size(); ++a) {
    if (a > 1) s = "(" + s + ")";
    s += " * " + axis_size(t, a) + " + " + print_index(index[a], 2);
  }
  return s;
}

std::string KernelWriter::axis_size(int t, size_t a) {
  // A constant size is written as one, so the compiler sees unit strides (a reduction's kept
  // axis of size 1).
  int64_t size = 0;
  if (is_const(p_.tensors[size_t(t)].shape[a], &size)) return std::to_string(size);
  sizes_.insert({t, int(a)});
  return names_.size(t, int(a));
}

std::string KernelWriter::axis_test(int t, size_t a, const Index& e) {
  // A loop variable over the whole axis needs no test; leaving it out keeps the rest of the
  // test invariant in that loop, so the compiler can hoist it.
  if (ranges_.spans_axis(t, a, e)) return "";
  sizes_.insert({t, int(a)});
  return helper("in_range") + "(" + print_index(e, 1) + ", " + names_.size(t, int(a)) + ")";
}

std::vector<std::string> KernelWriter::axis_tests(int t, const std::vector<Index>& index) {
  std::vector<std::string> tests;
  for (size_t a = 0; a < index.size(); ++a)
    if (std::string test = axis_test(t, a, index[a]); !test.empty()) tests.push_back(test);
  return tests;
}

std::string KernelWriter::in_range(int t, const std::vector<Index>& index) {
  std::string s;
  for (auto& test : axis_tests(t, index)) s += (s.empty() ? "" : " && ") + test;
  return s.empty() ? "1" : s;
}

// ---- value expressions ------------------------------------------------------------------------

std::string KernelWriter::literal(double v) const {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "-INFINITY";
  std::string s = format_double(v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (f64_) return s;
  if (double(float(v)) == v) return s + "f";
  return "(float)" + s;
}

std::string KernelWriter::elements(int t) {
  Index n = idx::constant(1);
  for (auto& d : p_.tensors[size_t(t)].shape) n = idx::mul(n, d);
  return index(n);
}

// In a tile with a panel (LoopPlan::tile_panel), where n is the load it holds: the address of the
// row the tile's loop is at, else "". Its loads index that address by the column, `(&row)[j]`:
// GCC vectorized matmul's tile at half the speed over one index summing the row's and the column's.
std::string KernelWriter::panel_row(const ValueNode& n) {
  if (!panel_loop_ || panel_loop_->plan.tile_panel[0].first != n.tensor ||
      !same_index(panel_loop_->plan.tile_panel[0].second, n.index))
    return "";
  const std::string step = panel_step_ ? panel_ + "_step" : panel_width_;
  return "&" + panel_ + (panel_step_ ? "_at" : "") + "[(" + Names::var(panel_loop_->var) + " - (" +
         index(panel_loop_->start) + ")) * " + step + "]";
}

std::string KernelWriter::load(const ValueNode& n) {
  DType t = p_.tensors[n.tensor].dtype;
  std::string cast =
      (t == DType::i32 || (t == DType::f64) != f64_) ? "(" + std::string(scalar()) + ")" : "";
  auto row = row_of_.find(&n);
  if (row != row_of_.end()) return cast + row->second;
  // The tile's store map (LoopPlan::tile_store) reads the tile.
  if (n.tensor == tile_.first && same_index(n.index, tile_index_)) return cast + tile_.second;
  // In a tile's rows of lanes (LoopPlan::tile_width), a row along them (ir::reads_row): the
  // vector of lanes at `tile_part` from its start, of which the row holds `lanes_count_` less
  // the lanes before (uops_load_lanes).
  Index start;
  if (lanes_var_ >= 0 && reads_row(n.index, lanes_var_, &start)) {
    std::vector<Index> at = n.index;
    at.back() = start;
    const std::string first = offset(n.tensor, at), before = "tile_part * UOPS_F32_LANES";
    if (std::string row = panel_row(n); !row.empty())
      return "*(const " + helper("uops_f32_lanes") + " *)(" + row + " + " + before + ")";
    const std::string from = "&" + names_.tensors[n.tensor] + "[" + first + "] + " + before;
    // A whole row (the loop runs all tile_width lanes): plain vector loads.
    if (lanes_whole_) return "*(const " + helper("uops_f32_lanes") + " *)(" + from + ")";
    return helper("uops_load_lanes") + "(" + from + ", " + elements(n.tensor) + " - (" + first +
           ") - " + before + ", " + lanes_count_ + " - " + before + ")";
  }
  // A tile's whole rows of columns that GCC vectorizes: the panel's row at the column.
  if (std::string row = panel_row(n); !row.empty())
    return cast + "(" + row + ")[" + panel_column_ + "]";
  std::string at = names_.tensors[n.tensor] + "[" + offset(n.tensor, n.index) + "]";
  std::string cond = n.checked && !unchecked_ ? in_range(n.tensor, n.index) : "1";
  if (cond == "1") return cast + at;
  return "(" + cond + " ? " + cast + at + " : " + literal(n.fill) + ")";
}

std::string KernelWriter::print_value(const Value& v, int min_prec) {
  std::string s;
  int prec = 3;
  auto operand = [&](const Value& x) {
    std::string a = print_value(x, 3);
    return a[0] == '-' ? "(" + a + ")" : a;
  };
  switch (v->kind) {
    case ValueKind::Const:
      s = literal(v->constant);
      break;
    case ValueKind::Load:
      s = load(*v);
      break;
    case ValueKind::Carried:
      s = arg_carried_.count(v->carried)
              ? "(" + std::string(scalar()) + ")" + Names::arg(v->carried)
              : Names::carried(v->carried);
      break;
    case ValueKind::IndexValue:
      s = "(" + std::string(scalar()) + ")(" + index(v->ivalue) + ")";
      break;
    case ValueKind::Unary: {
      std::string one = literal(1.0);
      switch (v->uop) {
        case UnaryOp::neg:
          s = "-" + operand(v->a);
          break;
        case UnaryOp::abs:
          s = math("fabs") + "(" + print_value(v->a, 1) + ")";
          break;
        case UnaryOp::rsqrt:
          s = one + " / " + math("sqrt") + "(" + print_value(v->a, 1) + ")";
          prec = 2;
          break;
        case UnaryOp::recip:
          s = one + " / " + operand(v->a);
          prec = 2;
          break;
        case UnaryOp::sigmoid:
          s = one + " / (" + one + " + " + math("exp") + "(-" + operand(v->a) + "))";
          prec = 2;
          break;
        default:
          s = math(op_name(v->uop)) + "(" + print_value(v->a, 1) + ")";
      }
      break;
    }
    case ValueKind::Binary: {
      BinaryOp op = v->bop;
      const char* suffix = f64_ ? "" : "f";
      if (op == BinaryOp::add || op == BinaryOp::sub || op == BinaryOp::mul ||
          op == BinaryOp::div) {
        prec = (op == BinaryOp::add || op == BinaryOp::sub) ? 1 : 2;
        std::string infix = std::string(" ") + op_symbol(op) + " ";
        std::string b = print_value(v->b, prec + 1);
        if (b[0] == '-') b = "(" + b + ")";
        if (op == BinaryOp::div && reciprocal_division)
          b = "(" + literal(1) + " / " + b + ")", infix = " * ";
        s = print_value(v->a, prec) + infix + b;
      } else if (op == BinaryOp::pow) {
        s = math("pow") + "(" + print_value(v->a, 1) + ", " + print_value(v->b, 1) + ")";
      } else if (op == BinaryOp::max || op == BinaryOp::min) {
        s = helper(std::string(op == BinaryOp::max ? "max_value" : "min_value") + suffix) + "(" +
            print_value(v->a, 1) + ", " + print_value(v->b, 1) + ")";
      } else {
        s = "(" + std::string(scalar()) + ")(" + print_value(v->a, 1) + " " + op_symbol(op) + " " +
            print_value(v->b, 1) + ")";
      }
      break;
    }
    case ValueKind::Ternary:
      // Where neither branch can raise, both are evaluated (every load prints in range or
      // guarded): a load inside `c ? x[i] : 0` is one the compiler may not hoist, and the loop
      // around it stays scalar.
      if (may_raise(v->b) || may_raise(v->c))
        s = "(" + print_value(v->a, 1) + " != 0 ? " + print_value(v->b, 1) + " : " +
            print_value(v->c, 1) + ")";
      else
        s = helper(f64_ ? "choose" : "choosef") + "(" + print_value(v->a, 1) + " != 0, " +
            print_value(v->b, 1) + ", " + print_value(v->c, 1) + ")";
      break;
  }
  return prec < min_prec ? "(" + s + ")" : s;
}

std::string KernelWriter::value(const Value& v) {
  return print_value(v, 1);
}

// ---- statements and loops ---------------------------------------------------------------------

std::string KernelWriter::identity(ReduceOp op) const {
  return literal(reduce_identity(op));
}

bool KernelWriter::carried_is_read(const Block& b, int id) const {
  for (auto& l : b.loops)
    for (auto& s : l.stmts)
      if (uses_carried(s.value, id) && !(s.kind == StmtKind::reduce && s.carried == id))
        return true;
  return false;
}

void KernelWriter::declare_carried(const Block& b, const Loop& l, int indent, std::string& out) {
  for (auto& c : l.carried) {
    if (!carried_is_read(b, c.id)) continue;
    out += pad(indent) + scalar() + " " + Names::carried(c.id) + " = " + identity(c.op) + ";\n";
    if (is_arg_reduce(c.op))
      out += pad(indent) + position_type(c.id) + " " + Names::arg(c.id) + " = 0;\n";
  }
}

std::string KernelWriter::store(const Stmt& s, bool atomic) {
  DType dt = p_.tensors[s.tensor].dtype;
  const std::string& t = names_.tensors[s.tensor];
  std::string at =
      s.tensor == tile_.first ? tile_.second : t + "[" + offset(s.tensor, s.index) + "]";
  const char* suffix = f64_ ? "" : "f";
  // A checked store evaluates its value first, so an error in it is reported even when the
  // element falls outside (as the interpreter does).
  bool temp = s.checked && may_raise(s.value);
  std::string v = temp ? "r" : value(s.value);
  std::string line;
  const Value& x = s.value;
  if (s.kind == StmtKind::assign && dt == DType::i32 && x->kind == ValueKind::Carried &&
      narrow_position(x->carried)) {
    // A narrow position (LoopPlan::narrow_positions) as it is: its round trip through f32 is exact.
    line = at + " = " + Names::arg(x->carried) + ";";
  } else if (s.kind == StmtKind::assign) {
    line = at + " = " +
           (dt == DType::i32 ? helper(std::string("to_i32") + suffix) + "(" + v + ")" : v) + ";";
  } else if (atomic) {
    if (s.op == ReduceOp::sum && dt != DType::i32) {
      std::string cast =
          (dt == DType::f64) == f64_ ? "" : "(" + std::string(element_type(dt)) + ")";
      line = std::string(d_.atomic_add) + "(&" + at + ", " + cast +
             (cast.empty() ? v : "(" + v + ")") + ");";
    } else {
      AtomicHelper a{s.op, dt, f64_};
      atomics_.insert(a);
      if (dt == DType::i32) helper(f64_ ? "to_i32" : "to_i32f");  // its definition calls it
      line = a.name() + "(&" + at + ", " + v + ");";
    }
  } else if (dt == DType::i32) {
    std::string acc = "(" + std::string(scalar()) + ")" + at;
    std::string reduced =
        s.op == ReduceOp::sum
            ? acc + " + " + (v[0] == '-' ? "(" + v + ")" : v)
            : helper(std::string("reduce_") + op_name(s.op) + suffix) + "(" + acc + ", " + v + ")";
    line = at + " = " + helper(std::string("to_i32") + suffix) + "(" + reduced + ");";
  } else if (s.op == ReduceOp::sum) {
    line = at + " += " + v + ";";
  } else {
    line = at + " = " + helper(std::string("reduce_") + op_name(s.op) + suffix) + "(" + at + ", " +
           v + ");";
  }
  // A register tile's element was tested at the tile's corners (register_tiles.h).
  std::string range = s.checked && s.tensor != tile_.first ? in_range(s.tensor, s.index) : "1";
  if (range == "1")
    return temp ? "{ const " + std::string(scalar()) + " r = " + value(s.value) + "; " + line + " }"
                : line;
  std::string cond = "if (" + range + ") " + line;
  if (!temp) return cond;
  return "{ const " + std::string(scalar()) + " r = " + value(s.value) + "; " + cond + " }";
}

std::string KernelWriter::reduce_step(ReduceOp op, const std::string& acc, const std::string& v) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
      return acc + " += " + v;
    case ReduceOp::prod:
      return acc + " *= " + v;
    default:
      return acc + " = " + helper(std::string("reduce_") + op_name(op) + (f64_ ? "" : "f")) + "(" +
             acc + ", " + v + ")";
  }
}

void KernelWriter::statements(const Block& b, const Loop& l, int indent, std::string& out,
                              const std::set<int>& atomic) {
  // In a lane group (lane_group): the statements once per lane, as `omp simd`, between reading
  // the lane's carried scalars from their vectors and writing them back.
  if (group_ && !l.stmts.empty()) {
    const Loop& g = *group_;
    group_ = nullptr;
    const std::string v = Names::var(g.var), lane = v + "_lane";
    std::string body, back;
    statements(b, l, indent + 1, body, atomic);
    group_ = &g;
    out += "#ifdef UOPS_SIMD\n" + pad(indent) + "#pragma omp simd\n#endif\n" + pad(indent) +
           "for (int64_t " + lane + " = 0; " + lane + " < " + std::to_string(g.plan.lane_group) +
           "; ++" + lane + ") {\n" + pad(indent + 1) + "const int64_t " + v + " = " + group_next_ +
           " + " + lane + ";\n";
    for (auto& c : g.carried) {
      if (!carried_is_read(b, c.id)) continue;
      std::vector<std::pair<std::string, std::string>> held = {{scalar(), Names::carried(c.id)}};
      if (is_arg_reduce(c.op)) held.push_back({position_type(c.id), Names::arg(c.id)});
      for (auto& [type, name] : held) {
        out += pad(indent + 1) + type + " " + name + " = " + name + "_group[" + lane + "];\n";
        back += pad(indent + 1) + name + "_group[" + lane + "] = " + name + ";\n";
      }
    }
    out += body + back + pad(indent) + "}\n";
    return;
  }
  for (auto& s : l.stmts) {
    if (s.kind != StmtKind::reduce) {
      std::string text = store(s, atomic.count(s.tensor) > 0);
      out += pad(indent) + text + "\n";
      continue;
    }
    if (!carried_is_read(b, s.carried)) continue;
    std::string c = Names::carried(s.carried), v = value(s.value);
    if (!lane_.empty()) {
      std::string at = c + "_lanes[" + lane_ + "]";
      if (is_arg_reduce(s.op))
        out += pad(indent) + "{ const " + scalar() + " r = " + v + "; const int better = r " +
               (s.op == ReduceOp::argmax ? ">" : "<") + " " + at + "; " + at +
               " = better ? r : " + at + "; " + c + "_at[" + lane_ + "] = better ? " +
               Names::var(l.var) + " : " + c + "_at[" + lane_ + "]; }\n";
      else
        out += pad(indent) + reduce_step(s.op, at, v) + ";\n";
      continue;
    }
    if (is_arg_reduce(s.op))
      out += pad(indent) + "{ const " + scalar() + " r = " + v + "; if (r " +
             (s.op == ReduceOp::argmax ? ">" : "<") + " " + c + ") { " + c + " = r; " +
             Names::arg(s.carried) + " = " + index(s.arg) + "; } }\n";
    else
      out += pad(indent) + reduce_step(s.op, c, v) + ";\n";
  }
}

// Whether tensor t holds at least `bytes` (kStreamBytes, tile_stream_bytes) for streamed stores,
// and the helper that stores one of its rows.
std::string KernelWriter::stream_test(int t, int64_t bytes) {
  std::string elements;
  for (size_t a = 0; a < p_.tensors[t].shape.size(); ++a)
    elements += (a ? " * " : "") + index(idx::dim(t, int(a)));
  const int64_t limit = bytes / int64_t(dtype_size(p_.tensors[t].dtype));
  return elements + " >= " + std::to_string(limit);
}

std::string KernelWriter::stream_row(int t) {
  const bool f64 = p_.tensors[t].dtype == DType::f64;
  helper(f64 ? "stream_line" : "stream_linef");  // which it calls
  return helper(f64 ? "stream_row" : "stream_rowf");
}

// The loops over a tile's rows (its last tile_loops loops but the innermost), as one line of
// `for` headers in front of a statement per row.
std::string KernelWriter::tile_rows(const Block& b, size_t tile_loops) {
  std::string rows;
  for (size_t x = b.loops.size() - tile_loops; x + 1 < b.loops.size(); ++x) {
    std::string u = Names::var(b.loops[x].var);
    rows += "for (int64_t " + u + " = 0; " + u + " < " + index(b.loops[x].end) + "; ++" + u + ") ";
  }
  return rows;
}

// Below tile_stream_bytes a streamed tile (LoopPlan::tile_stream) stores plainly; while it
// computes, the lines the next tile stores, at the next iteration of loop k - 1 outside it, are
// fetched for writing (past the last tile, whatever lies there: a prefetch never faults, and its
// address is integer arithmetic, not a pointer past the tensor). A store that missed waited for its
// line (depthwise conv2d 8 x 56 x 56 x 128 in a C driver, one thread, on a host whose L3 holds the
// output: 2.2-2.6 ms with plain stores, 2.3-2.9 streamed, 1.6-1.7 so).
std::string KernelWriter::next_rows_prefetch(const Block& b, size_t k, int indent) {
  const Stmt& s = b.loops.back().stmts[0];
  const Loop& c = b.loops.back();
  const int outside = b.loops[k - 1].var;
  std::vector<Index> next = s.index;
  for (Index& e : next)
    e = rewrite(e, [&](const Index& x) -> Index {
      if (x->kind != IndexKind::Var) return nullptr;
      if (x->var == c.var) return idx::constant(0);
      return x->var == outside ? idx::add(idx::var(outside), idx::constant(1)) : nullptr;
    });
  const std::string rows = tile_rows(b, size_t(b.loops[k].plan.tile));
  const std::string at = offset(s.tensor, next), n = index(c.end);
  const std::string bytes = std::to_string(dtype_size(p_.tensors[s.tensor].dtype));
  return pad(indent) + "if (!(" + stream_test(s.tensor, tile_stream_bytes) + "))\n" +
         pad(indent + 1) + rows + helper("uops_prefetchw") + "(" + names_.tensors[s.tensor] +
         ", (" + at + ") * " + bytes + ", " + n + " * " + bytes + ");\n";
}

// A streamed tile's store (LoopPlan::tile_stream): per row along the innermost tile loop c, the
// row through stream_row where the tensor holds at least tile_stream_bytes, else element by
// element.
std::string KernelWriter::streamed_store(const Block& b, size_t tile_loops, const std::string& tile,
                                         int indent) {
  const Stmt& s = b.loops.back().stmts[0];
  const Loop& c = b.loops.back();
  const std::string rows = tile_rows(b, tile_loops);
  std::string at = tile;
  for (size_t x = b.loops.size() - tile_loops; x + 1 < b.loops.size(); ++x)
    at += "[" + Names::var(b.loops[x].var) + "]";
  std::vector<Index> row = s.index;
  row.back() = rewrite(row.back(), [&](const Index& e) -> Index {
    return e->kind == IndexKind::Var && e->var == c.var ? idx::constant(0) : nullptr;
  });
  const std::string y = names_.tensors[s.tensor], u = Names::var(c.var), n = index(c.end);
  return pad(indent) + rows + "{\n" + pad(indent + 1) + "if (" +
         stream_test(s.tensor, tile_stream_bytes) + ")\n" + pad(indent + 2) + stream_row(s.tensor) +
         "(&" + y + "[" + offset(s.tensor, row) + "], " + at + ", " + n + ");\n" + pad(indent + 1) +
         "else\n" + pad(indent + 2) + "for (int64_t " + u + " = 0; " + u + " < " + n + "; ++" + u +
         ") " + y + "[" + offset(s.tensor, s.index) + "] = " + at + "[" + u + "];\n" + pad(indent) +
         "}\n";
}

// A transposed copy tile (LoopPlan::tile_transpose), loop k and the innermost, as one call:
// transpose_copyf(dst at the tile's corner, dst's row length, src at its corner, src's, the
// rows, the columns).
void KernelWriter::transposed_copy(const Block& b, size_t k, int indent, std::string& out,
                                   const Before& before) {
  const Loop &i = b.loops[k], &j = b.loops.back();
  const Stmt& s = j.stmts[0];
  const int src = s.value->tensor;
  auto corner = [&](std::vector<Index> index) {
    for (auto& e : index)
      e = rewrite(e, [&](const Index& x) -> Index {
        if (x->kind != IndexKind::Var) return nullptr;
        return x->var == i.var ? i.start : x->var == j.var ? j.start : nullptr;
      });
    return index;
  };
  // Elements from one row of the tile to the next: the size of the last axis.
  auto row = [&](int t) { return axis_size(t, p_.tensors[size_t(t)].shape.size() - 1); };
  if (before) before(k, indent, out);
  out += pad(indent) + helper("transpose_copyf") + "(&" + names_.tensors[size_t(s.tensor)] + "[" +
         offset(s.tensor, corner(s.index)) + "], " + row(s.tensor) + ", &" +
         names_.tensors[size_t(src)] + "[" + offset(src, corner(s.value->index)) + "], " +
         row(src) + ", (" + index(i.end) + ") - (" + index(i.start) + "), (" + index(j.end) +
         ") - (" + index(j.start) + "));\n";
}

namespace {

// A tile's panel (LoopPlan::tile_panel on loop l): its buffer's name, and whether the rows it holds
// depend on loop variable `var` (outside l), which the panel then keeps beside them.
std::string panel_name(const Loop& l) {
  return "panel_" + Names::var(l.var);
}
// The columns of a panel's rows: the tile's last loop, [0, 16) or [0, 64) (plan_tile_panels).
int64_t panel_width(const Block& b) {
  int64_t width = 0;
  return is_const(b.loops.back().end, &width) ? width : 0;
}
// AVX-512's panels of 64 columns fill only where enough tiles read them (kTilePanelTiles).
bool panel_reuse_test(const Block& b) {
  return panel_width(b) == 64;
}
bool panel_key(const Loop& l, int var) {
  return uses_var(l.plan.tile_panel[0].second, var) || uses_var(l.start, var) ||
         uses_var(l.end, var);
}

}  // namespace

void KernelWriter::loop(const Block& b, size_t k, int indent, std::string& out,
                        const Before& before, const std::set<int>& atomic) {
  // A tile's panel (LoopPlan::tile_panel): its buffer in front of the block's loops (the unit's
  // one of its width, uops_panel_W: blocks run one after another, and each fills it anew), the
  // values of the loops outside the tile's that its rows depend on when it was filled, and
  // whether it was.
  for (size_t t = k; t < b.loops.size(); ++t) {
    const Loop& l = b.loops[t];
    if (l.plan.tile_panel.empty()) continue;
    const std::string name = panel_name(l);
    out += pad(indent) + "{\n" + pad(indent) + "float *const " + name + " = " +
           helper("uops_panel_" + std::to_string(panel_width(b))) + ";\n" + pad(indent) + "int " +
           name + "_filled = 0;\n";
    if (panel_reuse_test(b))
      out += pad(indent) + "const float *" + name + "_at = " + name + ";\n" + pad(indent) +
             "int64_t " + name + "_step = 0;\n";
    for (size_t x = 0; x < t; ++x)
      if (panel_key(l, b.loops[x].var))
        out += pad(indent) + "int64_t " + name + "_" + Names::var(b.loops[x].var) + " = 0;\n";
    nest(b, k, indent, out, before, atomic, {});
    out += pad(indent) + "}\n";
    return;
  }
  nest(b, k, indent, out, before, atomic, {});
}

// The tile's panel filled with the rows of loop k's range where the loops outside it that they
// depend on have moved since it last was.
std::string KernelWriter::fill_panel(const Block& b, size_t k, int indent) {
  const Loop& l = b.loops[k];
  const auto& [t, at] = l.plan.tile_panel[0];
  const std::string v = Names::var(l.var), name = panel_name(l), start = index(l.start);
  std::string moved = "!" + name + "_filled", keep = name + "_filled = 1;";
  // The tiles that read one filling: the loops after the outermost one the rows depend on, all
  // of them where the rows depend on none.
  std::string reuse = "1", all = "1";
  bool keyed = false;
  for (size_t x = 0; x < k; ++x) {
    if (std::string u = Names::var(b.loops[x].var); panel_key(l, b.loops[x].var)) {
      moved += " || " + name + "_" + u + " != " + u;
      keep += " " + name + "_" + u + " = " + u + ";";
      keyed = true;
    } else {
      (keyed ? reuse : all) +=
          " * (" + index(b.loops[x].end) + " - (" + index(b.loops[x].start) + "))";
    }
  }
  if (!keyed) reuse = all;
  std::vector<Index> row = at;
  reads_row(at, b.loops.back().var, &row.back());
  const std::string lanes = std::to_string(panel_width(b)), from = offset(t, row);
  const std::string tensor = names_.tensors[size_t(t)];
  const std::string copy = "for (int64_t " + v + " = " + start + "; " + v + " < " + index(l.end) +
                           "; ++" + v + ") __builtin_memcpy(&" + name + "[(" + v + " - (" + start +
                           ")) * " + lanes + "], &" + tensor + "[" + from + "], " + lanes +
                           " * 4);\n";
  const std::string p1 = pad(indent + 1), p2 = pad(indent + 2);
  std::string fill = p1 + copy;
  // AVX-512's panels fill only where kTilePanelTiles tiles at least read them; else the tile
  // reads the rows where they are, `_at` the first and `_step` apart.
  if (panel_reuse_test(b))
    fill = p1 + "{\n" + p2 + "int64_t " + v + " = " + start + ";\n" + p2 + "const int64_t " + name +
           "_first = " + from + ";\n" + p2 + "++" + v + ";\n" + p2 + name + "_at = &" + tensor +
           "[" + name + "_first];\n" + p2 + name + "_step = (" + from + ") - " + name +
           "_first;\n" + p1 + "}\n" + p1 + "if (" + reuse +
           " >= " + std::to_string(kTilePanelTiles) + ") {\n" + p2 + copy + p2 + name +
           "_at = " + name + ";\n" + p2 + name + "_step = " + lanes + ";\n" + p1 + "}\n";
  return pad(indent) + "if (" + moved + ") {\n" + fill + p1 + keep + "\n" + pad(indent) + "}\n";
}

std::string KernelWriter::empty_test(const Block& b, const Loop& l) {
  std::string test;
  for (int m : l.plan.empty_tests)
    test += (test.empty() ? "" : " && ") + index(b.loops[size_t(m)].start) + " < " +
            index(b.loops[size_t(m)].end);
  return test;
}

namespace {

// A loop in rows of lanes that runs all of them, [0, tile_width): a whole tile's columns.
bool whole_lanes(const Loop& l) {
  int64_t start = -1, end = -1;
  return l.plan.tile_width && is_const(l.start, &start) && start == 0 && is_const(l.end, &end) &&
         end == l.plan.tile_width;
}

}  // namespace

void KernelWriter::nest(const Block& b, size_t k, int indent, std::string& out,
                        const Before& before, const std::set<int>& atomic, Within within) {
  const Loop& l = b.loops[k];
  std::string v = Names::var(l.var);
  if (k > 0 && !l.plan.empty_tests.empty() && !within.empty_tested) {
    out += pad(indent) + "if (" + empty_test(b, l) + ") {\n";
    within.empty_tested = true;
    nest(b, k, indent + 1, out, before, atomic, within);
    out += pad(indent) + "}\n";
    return;
  }
  // A test in front of the tile's own loop comes before the tile, so each branch has its own.
  if ((within.tile || l.plan.tile) && !within.tile_tested && !l.plan.tile_corners.empty()) {
    std::set<std::string> tests;  // each once
    for (auto& [t, index] : l.plan.tile_corners)
      for (auto& test : axis_tests(t, index)) tests.insert(test);
    std::string guard;
    for (auto& test : tests) guard += (guard.empty() ? "" : " && ") + test;
    within.tile_tested = true;
    out += pad(indent) + "if (" + guard + ") {\n";
    unchecked_ = true;
    nest(b, k, indent + 1, out, before, atomic, within);
    unchecked_ = false;
    // A checked tensor of the tile is tested per element there, with no tile.
    Within other = within;
    other.tile |= b.loops.back().stmts[0].checked;
    // Where a skipped axis is out of range the else stores nothing (LoopPlan::tile_skip).
    std::string skip;
    for (auto& s : l.plan.tile_skip)
      if (std::string test = axis_test(s.tensor, size_t(s.axis), s.at); !test.empty())
        skip += (skip.empty() ? "" : " && ") + test;
    if (!l.plan.tile_rows.empty()) {
      std::string rows = skip;
      for (auto& [t, e] : l.plan.tile_rows)
        if (std::string test = axis_test(t, p_.tensors[t].shape.size() - 1, e); !test.empty())
          rows += (rows.empty() ? "" : " && ") + test;
      out += pad(indent) + "} else if (" + (rows.empty() ? "1" : rows) + ") {\n";
      border_rows_ = true;
      rows_at_ = size_t(l.plan.tile_rows_at);
      steps_ = l.plan.tile_steps.empty() ? nullptr : &l.plan;
      nest(b, k, indent + 1, out, before, atomic, other);
      border_rows_ = false;
    }
    out += pad(indent) + (skip.empty() ? "} else {\n" : "} else if (" + skip + ") {\n");
    steps_ = l.plan.tile_steps.empty() ? nullptr : &l.plan;
    nest(b, k, indent + 1, out, before, atomic, other);
    steps_ = nullptr;
    out += pad(indent) + "}\n";
    return;
  }
  // The statements of a tile's rows of lanes, on whole rows (LoopPlan::tile_width).
  if (!lanes_.empty() && k + 1 == b.loops.size()) {
    lanes_var_ = l.var;
    lanes_count_ = index(l.end);
    lanes_whole_ = whole_lanes(l);
    // One statement per vector of the row: GCC unrolls the constant loop.
    for (auto& s : l.stmts)
      out += pad(indent) + "for (int64_t tile_part = 0; tile_part < " +
             std::to_string(l.plan.tile_width) + " / UOPS_F32_LANES; ++tile_part) " + lanes_ +
             "[tile_part] += " + value(s.value) + ";\n";
    lanes_var_ = -1;
    return;
  }
  if (l.plan.tile && !within.tile) {
    const Stmt& s = b.loops.back().stmts[0];
    const int width = b.loops.back().plan.tile_width;
    std::string name = "tile_" + v, dims, at = name, heads, tails, rows, row = name + "_lanes";
    for (size_t x = b.loops.size() - size_t(l.plan.tile); x < b.loops.size(); ++x) {
      std::string u = Names::var(b.loops[x].var);
      bool last = x + 1 == b.loops.size();
      dims += "[" + (last && width ? std::to_string(width) : index(b.loops[x].end)) + "]";
      rows += last ? "" : "[" + index(b.loops[x].end) + "]";
      row += last ? "" : "[" + u + "]";
      at += "[" + u + "]";
      // LoopPlan::tile_unrolled: the load's and store's loops over rows unrolled.
      int64_t count = 0;
      if (l.plan.tile_unrolled && !last && is_const(b.loops[x].end, &count))
        heads += pad(indent + 1) + "#pragma GCC unroll " + std::to_string(count) + "\n";
      heads += pad(indent + 1) + "for (int64_t " + u + " = 0; " + u + " < " +
               index(b.loops[x].end) + "; ++" + u + ")" + (last ? " " : " {\n");
      tails += last ? "" : pad(indent + 1) + "}\n";
    }
    auto copy = [&](const std::string& stmt) { return heads + stmt + ";\n" + tails; };
    std::string element = names_.tensors[s.tensor] + "[" + offset(s.tensor, s.index) + "]";
    // A start in the first iteration of loops outside (LoopPlan::tile_start_first) alone.
    std::string first;
    for (int v : l.plan.tile_start_first)
      for (size_t x = 0; x < k; ++x)
        if (b.loops[x].var == v)
          first += (first.empty() ? "" : " && ") + Names::var(v) + " == " + index(b.loops[x].start);
    std::string start = !l.plan.tile_start ? element
                        : first.empty()
                            ? literal(*l.plan.tile_start)
                            : "(" + first + ") ? " + literal(*l.plan.tile_start) + " : " + element;
    out += pad(indent) + "{\n" + pad(indent + 1) + element_type(p_.tensors[s.tensor].dtype) + " " +
           name + dims + ";\n";
    // Rows of lanes: the lanes past the count hold zero, the rows live in vectors.
    if (width && !whole_lanes(b.loops.back()))
      out += pad(indent + 1) + "__builtin_memset(" + name + ", 0, sizeof " + name + ");\n";
    out += copy(at + " = " + start);
    if (l.plan.tile_stream && k > 0) out += next_rows_prefetch(b, k, indent + 1);
    if (!l.plan.tile_panel.empty()) {
      out += fill_panel(b, k, indent + 1);
      panel_loop_ = &l;
      panel_ = panel_name(l);
      panel_width_ = std::to_string(panel_width(b));
      panel_column_ = Names::var(b.loops.back().var);
      panel_step_ = panel_reuse_test(b);
    }
    if (width) {
      out += pad(indent + 1) + helper("uops_f32_lanes") + " " + name + "_lanes" + rows + "[" +
             std::to_string(width) + " / UOPS_F32_LANES];\n" + pad(indent + 1) +
             "__builtin_memcpy(" + name + "_lanes, " + name + ", sizeof " + name + ");\n";
      lanes_ = row;
    }
    tile_ = {s.tensor, at};
    within.tile = true;
    nest(b, k, indent + 1, out, before, atomic, within);
    if (width)
      out += pad(indent + 1) + "__builtin_memcpy(" + name + ", " + name + "_lanes, sizeof " + name +
             ");\n";
    lanes_.clear();
    panel_loop_ = nullptr;
    tile_index_ = s.index;
    std::string stored = l.plan.tile_store ? value(l.plan.tile_store) : at;
    tile_ = {-1, ""};
    out += l.plan.tile_stream ? streamed_store(b, size_t(l.plan.tile), name, indent + 1)
                              : copy(element + " = " + stored);
    out += pad(indent) + "}\n";
    return;
  }
  if (l.plan.tile_transpose) return transposed_copy(b, k, indent, out, before);
  if (border_rows_ && k == rows_at_ && bind_row(b, k, indent, out, before, atomic, within)) return;
  if (steps_ && k == size_t(steps_->tile_steps_at) && !within.steps_bound)
    return bind_steps(b, k, indent, out, before, atomic, within);
  // An end that may raise (a division by a parameter) is evaluated once in front of its loop,
  // as the IR means: in the loop's condition the error bit it may set keeps the compiler from
  // hoisting it, and the division ran every iteration (pooling's rows: 15% of the kernel).
  if (may_raise(l.end) && !within.end_declared) {
    out += pad(indent) + "{\n" + pad(indent + 1) + "const int64_t " + v + "_end = " + index(l.end) +
           ";\n";
    within.end_declared = true;
    nest(b, k, indent + 1, out, before, atomic, within);
    out += pad(indent) + "}\n";
    return;
  }
  // A short range in fewer lanes (LoopPlan::narrow_lanes): the loop twice, `before` told which.
  if (l.plan.narrow_lanes && !within.narrowed) {
    within.narrowed = true;
    out += pad(indent) + "if (" + (within.end_declared ? v + "_end" : index(l.end)) + " - " +
           index(l.start) + " <= " + std::to_string(l.plan.narrow_upto) + ") {\n";
    narrow_ = true;
    nest(b, k, indent + 1, out, before, atomic, within);
    narrow_ = false;
    out += pad(indent) + "} else {\n";
    nest(b, k, indent + 1, out, before, atomic, within);
    out += pad(indent) + "}\n";
    return;
  }
  const std::string end = within.end_declared ? v + "_end" : index(l.end);
  // Streamed rows (LoopPlan::stream): where the tensor is large, the loop stores plainly up to
  // its row's first whole cache line, then computes a line's elements at a time into a local
  // array that stream_line stores around the cache, then stores the rest plainly. The statement's
  // loads at an index without the loop's variable, of tensors other than the one it writes, are
  // read once before the loop (the loop is not empty there): GCC moved neither them nor what it
  // computes from them past a streamed store (layernorm's 1 / sqrt(variance) at every line).
  // Rows computed in runs of 256 and streamed after each run left layernorm's kernel at 0.96-1.01
  // ms against 0.77-0.82 a line at a time, one thread (docs/cpu-kernels.md, Register tiling).
  if (l.plan.stream && !within.streamed) {
    within.streamed = true;
    const Stmt& s = l.stmts[0];
    const std::string line = v + "_line", row = v + "_row", head = v + "_head",
                      lines = v + "_lines", start = index(l.start),
                      type = element_type(p_.tensors[s.tensor].dtype);
    const size_t bytes = dtype_size(p_.tensors[s.tensor].dtype);
    const std::string per_line = std::to_string(64 / bytes);
    // The row's address `at` where the loop's variable is `value`, in a block of its own.
    auto address = [&](const std::string& value, int in) {
      return pad(in) + "const int64_t " + v + " = " + value + ";\n" + pad(in) + type +
             " *const at = &" + names_.tensors[s.tensor] + "[" + offset(s.tensor, s.index) + "];\n";
    };
    out += pad(indent) + "if (" + stream_test(s.tensor, kStreamBytes) + " && " + start + " < " +
           end + ") {\n";
    std::vector<const ValueNode*> bound;
    for_each_load(s.value, [&](const ValueNode& n) {
      if (n.tensor == s.tensor || row_of_.count(&n)) return;
      for (auto& e : n.index)
        if (uses_var(e, l.var)) return;
      const std::string name = v + "_read" + std::to_string(bound.size());
      out += pad(indent + 1) + "const " + scalar() + " " + name + " = " + load(n) + ";\n";
      row_of_[&n] = name;
      bound.push_back(&n);
    });
    // The elements before the first whole line, and those of the whole lines.
    out += pad(indent + 1) + "int64_t " + head + ", " + lines + ";\n" + pad(indent + 1) + "{\n" +
           address(start, indent + 2) + pad(indent + 2) + head + " = " + helper("min_i64") + "(" +
           end + ", " + start + " + (int64_t)((0 - (uintptr_t)at) & 63) / " +
           std::to_string(bytes) + ");\n" + pad(indent + 1) + "}\n" + pad(indent + 1) + lines +
           " = " + head + " + (" + end + " - " + head + ") / " + per_line + " * " + per_line +
           ";\n";
    auto plain = [&](const std::string& from, const std::string& to) {
      if (before) before(k, indent + 1, out);
      out += pad(indent + 1) + "for (int64_t " + v + " = " + from + "; " + v + " < " + to + "; ++" +
             v + ") {\n";
      statements(b, l, indent + 2, out, atomic);
      out += pad(indent + 1) + "}\n";
    };
    plain(start, head);
    out += pad(indent + 1) + "for (int64_t " + line + " = " + head + "; " + line + " < " + lines +
           "; " + line + " += " + per_line + ") {\n" + pad(indent + 2) + type + " " + row + "[" +
           per_line + "];\n";
    if (before) before(k, indent + 2, out);
    out += pad(indent + 2) + "for (int64_t " + v + " = " + line + "; " + v + " < " + line + " + " +
           per_line + "; ++" + v + ") {\n";
    tile_ = {s.tensor, row + "[" + v + " - " + line + "]"};
    statements(b, l, indent + 3, out, atomic);
    tile_ = {-1, ""};
    out += pad(indent + 2) + "}\n" + pad(indent + 2) + "{\n" + address(line, indent + 3) +
           pad(indent + 3) + helper(bytes == 8 ? "stream_line" : "stream_linef") + "(at, " + row +
           ");\n" + pad(indent + 2) + "}\n" + pad(indent + 1) + "}\n";
    plain(lines, end);
    for (const ValueNode* n : bound) row_of_.erase(n);
    out += pad(indent) + "} else {\n";
    nest(b, k, indent + 1, out, before, atomic, within);
    out += pad(indent) + "}\n";
    return;
  }
  within.end_declared = false;
  if (runs_in_lanes(l.plan)) return lanes(b, k, indent, out, before, atomic, end);
  if (l.plan.lane_group && !group_)
    return lane_group(b, k, indent, out, before, atomic, within, end);
  if (before) before(k, indent, out);
  if (l.plan.unroll) out += pad(indent) + "#pragma GCC unroll " + index(l.end) + "\n";
  out += pad(indent) + "for (int64_t " + v + " = " + index(l.start) + "; " + v + " < " + end +
         "; ++" + v + ") {\n";
  declare_carried(b, l, indent + 1, out);
  // A register tile's prefetches, at each step of the loop right outside its loops
  // (LoopPlan::prefetch on the tile's loop, c_tile_prefetch.h).
  for (size_t t = 0; t <= k; ++t)
    if (b.loops[t].plan.tile && k + 1 + size_t(b.loops[t].plan.tile) == b.loops.size())
      for (auto& [tensor, at] : b.loops[t].plan.prefetch)
        out += pad(indent + 1) + helper("uops_prefetch_at") + "(" + names_.tensors[tensor] + ", (" +
               offset(tensor, at) + ") * " + std::to_string(dtype_size(p_.tensors[tensor].dtype)) +
               ");\n";
  if (k + 1 < b.loops.size()) nest(b, k + 1, indent + 1, out, before, atomic, within);
  statements(b, l, indent + 1, out, atomic);
  out += pad(indent) + "}\n";
}

// In a border tile's else (LoopPlan::tile_rows), each checked load that reads a row along the
// innermost loop (ir::reads_row) is bound in front of loop tile_rows_at by a test of its row's
// other axes (its own axis was tested in front of the tile): where they are in range, to the row
// through a pointer, else to its fill value, each way with a copy of the loops from there (2^n
// copies for n such loads; register_tiles plans rows for at most 3). The same value as the checked
// load, element by element, with no test inside the loop, so the compiler keeps the tile in
// registers. (A pointer chosen between the row and a local row of fills, one loop for both, was
// vectorized by GCC behind a run-time alias test that sent it to a scalar loop: a border tile of
// maxpool2d ran 8x slower than an inner one.) Returns false when every row load is bound.
bool KernelWriter::bind_row(const Block& b, size_t k, int indent, std::string& out,
                            const Before& before, const std::set<int>& atomic, Within within) {
  const Loop& l = b.loops.back();
  const ValueNode* row = nullptr;
  Index start;
  for (auto& s : l.stmts)
    for_each_load(s.value, [&](const ValueNode& n) {
      Index first;
      if (!row && n.checked && !row_of_.count(&n) && reads_row(n.index, l.var, &first)) {
        row = &n;
        start = first;
      }
    });
  if (!row) return false;
  std::vector<Index> other(row->index.begin(), row->index.end() - 1), first = row->index;
  first.back() = start;
  std::string test;
  for (auto& t : axis_tests(row->tensor, other)) test += (test.empty() ? "" : " && ") + t;
  const std::string name = "row_" + std::to_string(rows_declared_++);
  out += pad(indent) + "if (" + (test.empty() ? "1" : test) + ") {\n" + pad(indent + 1) + "const " +
         element_type(p_.tensors[row->tensor].dtype) + " *" + name + " = &" +
         names_.tensors[row->tensor] + "[" + offset(row->tensor, first) + "];\n";
  row_of_[row] = name + "[" + Names::var(l.var) + "]";
  nest(b, k, indent + 1, out, before, atomic, within);
  out += pad(indent) + "} else {\n";
  row_of_[row] = literal(row->fill);
  nest(b, k, indent + 1, out, before, atomic, within);
  out += pad(indent) + "}\n";
  row_of_.erase(row);
  return true;
}

// In a border tile's else (LoopPlan::tile_steps), in front of loop k, along which each such load
// reads a row (its last axis is k's variable): for each row r of the tile, a pointer to the row,
// or to the load's fill where its other axes are out of range, and a step of 1 or 0; the load
// reads row[r][k * step[r]]. The same value as the checked load, element by element, with no
// test inside the loop, so the compiler keeps the tile in registers and hoists the pointers.
void KernelWriter::bind_steps(const Block& b, size_t k, int indent, std::string& out,
                              const Before& before, const std::set<int>& atomic, Within within) {
  const Loop& r = b.loops[b.loops.size() - 2];
  const std::string rv = Names::var(r.var), kv = Names::var(b.loops[k].var), rows = index(r.end);
  std::vector<const ValueNode*> bound;
  out += pad(indent) + "{\n";
  for (auto& step : steps_->tile_steps) {
    const int t = step.first;
    const std::vector<Index>& at = step.second;
    const ValueNode* load = nullptr;
    for (auto& s : b.loops.back().stmts)
      for_each_load(s.value, [&](const ValueNode& n) {
        if (!load && n.checked && n.tensor == t && same_index(n.index, at)) load = &n;
      });
    if (!load || row_of_.count(load)) continue;
    const std::string name = "step_" + std::to_string(steps_declared_++),
                      type = element_type(p_.tensors[size_t(t)].dtype);
    std::vector<Index> other(at.begin(), at.end() - 1), start = at;
    start.back() = idx::constant(0);
    std::string test;
    for (auto& a : axis_tests(t, other)) test += (test.empty() ? "" : " && ") + a;
    out += pad(indent + 1) + "const " + type + " " + name + "_fill = " + literal(load->fill) +
           ";\n" + pad(indent + 1) + "const " + type + " *" + name + "_row[" + rows + "];\n" +
           pad(indent + 1) + "int64_t " + name + "_step[" + rows + "];\n" + pad(indent + 1) +
           "#pragma GCC unroll " + rows + "\n" + pad(indent + 1) + "for (int64_t " + rv + " = 0; " +
           rv + " < " + rows + "; ++" + rv + ") {\n" + pad(indent + 2) + "const int " + name +
           "_in = " + (test.empty() ? "1" : test) + ";\n" + pad(indent + 2) + name + "_row[" + rv +
           "] = " + name + "_in ? &" + names_.tensors[size_t(t)] + "[" + offset(t, start) +
           "] : &" + name + "_fill;\n" + pad(indent + 2) + name + "_step[" + rv + "] = " + name +
           "_in;\n" + pad(indent + 1) + "}\n";
    row_of_[load] = name + "_row[" + rv + "][" + kv + " * " + name + "_step[" + rv + "]]";
    bound.push_back(load);
  }
  within.steps_bound = true;
  nest(b, k, indent + 1, out, before, atomic, within);
  for (const ValueNode* n : bound) row_of_.erase(n);
  out += pad(indent) + "}\n";
}

// An innermost loop that runs in lanes by hand (LoopPlan::lanes: an argmax's or argmin's, which
// no `omp simd` clause reduces, and row_local_runs.h's): each carried scalar it reduces is held
// per lane in an array, started from the scalar (from the identity for sums and products), the
// iterations run in groups of as many as the lanes, one per lane, as `omp simd`, and the lanes
// are combined before the last iterations run as usual (as `omp simd` where they reduce no
// argmax). Other reductions' lanes are combined pairwise, halves into halves, which the compiler
// runs in vectors. An argmax lane keeps its best value and the iteration that gave it; combined
// in order, the greatest value wins and among equal values the earliest iteration, whose
// position is then computed once: the element a sequential loop finds, the same -0 or +0 and NaN
// skipped.
void KernelWriter::lanes(const Block& b, size_t k, int indent, std::string& out,
                         const Before& before, const std::set<int>& atomic,
                         const std::string& end) {
  const Loop& l = b.loops[k];
  const std::string v = Names::var(l.var), next = v + "_next", lane = v + "_lane",
                    n = std::to_string(l.plan.lanes);
  const std::string each =
      "for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane + ") ";
  std::vector<Carried> used;
  for (const Carried& c : l.plan.simd)
    if (carried_is_read(b, c.id)) used.push_back(c);
  out += pad(indent) + "{\n" + pad(indent + 1) + "int64_t " + next + " = " + index(l.start) + ";\n";
  // The lanes are set up and combined only where a group of them runs: a window of 3 (a pool's
  // argmax over kw) ran its 16 lanes' setup and combination at every step, 20 cycles an element.
  out += pad(indent + 1) + "if (" + next + " <= " + end + " - " + n + ") {\n";
  int in = indent + 2;
  for (const Carried& c : used) {
    std::string name = Names::carried(c.id);
    bool restart = c.op == ReduceOp::sum || c.op == ReduceOp::mean || c.op == ReduceOp::prod;
    out += pad(in) + scalar() + " " + name + "_lanes[" + n + "];\n";
    std::string init = name + "_lanes[" + lane + "] = " + (restart ? identity(c.op) : name) + ";";
    if (is_arg_reduce(c.op)) {
      out += pad(in) + "int64_t " + name + "_at[" + n + "];\n";
      init += " " + name + "_at[" + lane + "] = INT64_MIN;";
    }
    out += pad(in) + each + "{ " + init + " }\n";
  }
  out += pad(in) + "for (; " + next + " <= " + end + " - " + n + "; " + next + " += " + n + ") {\n";
  if (!l.plan.prefetch.empty()) {
    out += pad(in + 1) + "{\n" + pad(in + 2) + "const int64_t " + v + " = " + next + ";\n";
    for (auto& [t, at] : l.plan.prefetch)
      out += pad(in + 2) + helper("uops_prefetch") + "(&" + names_.tensors[t] + "[" +
             offset(t, at) + "], " + n + " * sizeof *" + names_.tensors[t] + ");\n";
    out += pad(in + 1) + "}\n";
  }
  if (before) before(k, in + 1, out);
  out += pad(in + 1) + each + "{\n" + pad(in + 2) + "const int64_t " + v + " = " + next + " + " +
         lane + ";\n";
  lane_ = lane;
  statements(b, l, in + 2, out, atomic);
  lane_.clear();
  out += pad(in + 1) + "}\n" + pad(in) + "}\n";
  bool arg = false;
  for (const Carried& c : used) {
    std::string name = Names::carried(c.id), at = name + "_lanes[" + lane + "]";
    arg |= is_arg_reduce(c.op);
    if (!is_arg_reduce(c.op)) {
      for (int half = l.plan.lanes / 2; half > 0; half /= 2)
        out += pad(in) + "for (int64_t " + lane + " = 0; " + lane + " < " + std::to_string(half) +
               "; ++" + lane + ") " +
               reduce_step(c.op, at, name + "_lanes[" + lane + " + " + std::to_string(half) + "]") +
               ";\n";
      out += pad(in) + reduce_step(c.op, name, name + "_lanes[0]") + ";\n";
      continue;
    }
    const Stmt* s = nullptr;
    for (auto& st : l.stmts)
      if (st.kind == StmtKind::reduce && st.carried == c.id) s = &st;
    const char* cmp = c.op == ReduceOp::argmax ? " > " : " < ";
    out += pad(in) + "{\n" + pad(in + 1) + "int64_t best = INT64_MIN;\n" + pad(in + 1) + each +
           "if (" + at + cmp + name + " || (" + at + " == " + name + " && " + name + "_at[" + lane +
           "] < best)) { " + name + " = " + at + "; best = " + name + "_at[" + lane + "]; }\n" +
           pad(in + 1) + "if (best != INT64_MIN) { const int64_t " + v + " = best; " +
           Names::arg(c.id) + " = " + index(s->arg) + "; }\n" + pad(in) + "}\n";
  }
  out += pad(--in) + "}\n";
  lanes_left_ = true;
  if (before && !arg) before(k, in, out);
  lanes_left_ = false;
  out +=
      pad(in) + "for (int64_t " + v + " = " + next + "; " + v + " < " + end + "; ++" + v + ") {\n";
  statements(b, l, in + 1, out, atomic);
  out += pad(in) + "}\n" + pad(indent) + "}\n";
}

// A loop in lane groups (LoopPlan::lane_group, backends/c/c_lane_groups.h): its iterations run
// in groups of as many as the lanes, each group's carried scalars held per lane in vectors started
// from their identities; the loops inside run once per group, and each loop's statements run for
// every lane of the group (statements()). Then the iterations left over run one by one, as usual.
// Each lane runs its own iteration's steps in their order: the results of the plain loop.
void KernelWriter::lane_group(const Block& b, size_t k, int indent, std::string& out,
                              const Before& before, const std::set<int>& atomic, Within within,
                              const std::string& end) {
  const Loop& l = b.loops[k];
  const std::string v = Names::var(l.var), next = v + "_next", lane = v + "_lane",
                    n = std::to_string(l.plan.lane_group);
  auto lanes_of = [&](int bytes) {
    return " " + helper("uops_lanes_of") + "(" + n + ", " + std::to_string(bytes) + ")";
  };
  out += pad(indent) + "{\n" + pad(indent + 1) + "int64_t " + next + " = " + index(l.start) +
         ";\n" + pad(indent + 1) + "for (; " + next + " <= " + end + " - " + n + "; " + next +
         " += " + n + ") {\n";
  for (auto& c : l.carried) {
    if (!carried_is_read(b, c.id)) continue;
    const std::string name = Names::carried(c.id), arg = Names::arg(c.id);
    out += pad(indent + 2) + scalar() + " " + name + "_group" + lanes_of(f64_ ? 8 : 4) + ";\n";
    std::string init = name + "_group[" + lane + "] = " + identity(c.op) + ";";
    if (is_arg_reduce(c.op)) {
      out += pad(indent + 2) + position_type(c.id) + " " + arg + "_group" +
             lanes_of(narrow_position(c.id) ? 4 : 8) + ";\n";
      init += " " + arg + "_group[" + lane + "] = 0;";
    }
    out += pad(indent + 2) + "for (int64_t " + lane + " = 0; " + lane + " < " + n + "; ++" + lane +
           ") { " + init + " }\n";
  }
  group_ = &l;
  group_next_ = next;
  nest(b, k + 1, indent + 2, out, before, atomic, within);
  statements(b, l, indent + 2, out, atomic);
  group_ = nullptr;
  out += pad(indent + 1) + "}\n";
  if (before) before(k, indent + 1, out);
  out += pad(indent + 1) + "for (int64_t " + v + " = " + next + "; " + v + " < " + end + "; ++" +
         v + ") {\n";
  declare_carried(b, l, indent + 2, out);
  nest(b, k + 1, indent + 2, out, before, atomic, within);
  statements(b, l, indent + 2, out, atomic);
  out += pad(indent + 1) + "}\n" + pad(indent) + "}\n";
}

}  // namespace uops::codegen

namespace uops::codegen {

namespace {

// The definition of an atomic helper, through the dialect's compare-and-swap.
std::string atomic_definition(const AtomicHelper& a, const Dialect& d) {
  bool f32 = a.element == DType::f32, f64 = a.element == DType::f64;
  std::string T = a.f64 ? "double" : "float", elem = KernelWriter::element_type(a.element);
  std::string word = f64 ? "unsigned long long" : "int";
  std::string to_value = f32   ? "(" + T + ")" + d.int_as_float + "(assumed)"
                         : f64 ? "(" + T + ")" + d.longlong_as_double + "((long long)assumed)"
                               : "(" + T + ")assumed";
  std::string next = a.op == ReduceOp::sum ? "acc + v" : "v";
  std::string to_word = f32   ? std::string(d.float_as_int) + "((float)(" + next + "))"
                        : f64 ? "(unsigned long long)" + std::string(d.double_as_longlong) +
                                    "((double)(" + next + "))"
                              : std::string(a.f64 ? "to_i32" : "to_i32f") + "(" + next + ")";
  std::string skip = a.op == ReduceOp::sum   ? ""
                     : a.op == ReduceOp::max ? "    if (!(v > acc)) return;\n"
                                             : "    if (!(v < acc)) return;\n";
  return d.function + std::string("void ") + a.name() + "(" + elem + " *p, " + T + " v) {\n" +
         "  " + word + " *q = (" + word + " *)p;\n" + "  " + word + " old = *q, assumed;\n" +
         "  do {\n" + "    assumed = old;\n" + "    " + T + " acc = " + to_value + ";\n" + skip +
         "    old = " + d.compare_and_swap + "(q, assumed, " + to_word + ");\n" +
         "  } while (old != assumed);\n}\n";
}

// Each helper's name and definition, in dependency order.
std::vector<std::pair<std::string, std::string>> helper_table(const Dialect& d) {
  const std::string in = d.inline_function;
  const std::string plain = d.function;
  // One cache line, which p starts, stored around the cache (LoopPlan::tile_stream, stream), in
  // stores as wide as the target's vectors: a whole line in one (AVX-512), or two (AVX), left
  // depthwise conv2d's kernel 5-9% faster at two threads than SSE2's four per line; plainly where
  // there is no SSE2. GCC's builtins, not <immintrin.h>, whose parse alone took 0.25 s of each
  // such kernel's compile (layernorm's: 0.13 -> 0.45 s); other compilers use SSE2's stores, whose
  // header is cheap.
  auto stream_line = [&](const std::string& name, const std::string& type, const char* suffix,
                         int bytes_per_lane) {
    const char* t = bytes_per_lane == 4 ? "s" : "d";
    const std::string per_line = std::to_string(64 / bytes_per_lane);
    auto wide = [&](int bits) {
      std::string s = "  typedef " + type + " wide __attribute__((vector_size(" +
                      std::to_string(bits / 8) + "), aligned(" + std::to_string(bytes_per_lane) +
                      ")));\n";
      for (int at = 0; at < 64 / bytes_per_lane; at += bits / 8 / bytes_per_lane)
        s += "  __builtin_ia32_movntp" + std::string(t) + std::to_string(bits) + "(p + " +
             std::to_string(at) + ", *(const wide *)(v + " + std::to_string(at) + "));\n";
      return s;
    };
    const std::string gcc = "defined(__GNUC__) && !defined(__clang__) && ";
    return std::pair<std::string, std::string>{
        name,
        "/* One cache line, which p starts, stored around the cache. */\n"
        "#if defined(__SSE2__) && !(" +
            gcc + "defined(__AVX__))\n#include <emmintrin.h>\n#endif\n" + in + "void " + name +
            "(" + type + " *p, const " + type + " *v) {\n#if " + gcc + "defined(__AVX512F__)\n" +
            wide(512) + "#elif " + gcc + "defined(__AVX__)\n" + wide(256) +
            "#elif defined(__SSE2__)\n  for (int i = 0; i < " + per_line +
            "; i += " + std::to_string(16 / bytes_per_lane) + ") _mm_stream_" + suffix +
            "(p + i, _mm_loadu_" + suffix + "(v + i));\n#else\n  for (int i = 0; i < " + per_line +
            "; ++i) p[i] = v[i];\n#endif\n}\n"};
  };
  // n elements: the whole cache lines among them through `line`, the rest plainly (a store that
  // misses would read its line in first).
  auto stream_row = [&](const std::string& name, const std::string& type, const std::string& line,
                        int bytes_per_lane) {
    const std::string per_line = std::to_string(64 / bytes_per_lane);
    return std::pair<std::string, std::string>{
        name, "/* Stores n " + type + "s: the whole cache lines among them around the cache (" +
                  line + "), the rest plainly. */\n" + in + "void " + name + "(" + type +
                  " *p, const " + type +
                  " *v, int64_t n) {\n  int64_t i = 0;\n"
                  "  for (; i < n && ((uintptr_t)(p + i) & 63) != 0; ++i) p[i] = v[i];\n"
                  "  for (; i + " +
                  per_line + " <= n; i += " + per_line + ") " + line +
                  "(p + i, v + i);\n  for (; i < n; ++i) p[i] = v[i];\n}\n"};
  };
  // A tile panel's rows (LoopPlan::tile_panel) for tiles W columns wide: one buffer the unit's
  // blocks share, each thread its own, in thread-local storage. Not in a frame: 32 KB, AVX-512's
  // 128 KB, is all of a small thread stack and past its guard page (a crash, or another thread's
  // stack overwritten; TilePanels.KernelsRunOnSmallStacks); nor one per block, which would keep
  // 3 MB a thread for matmul's gradient (24 blocks with panels in its unit at AVX-512).
  auto panel_buffer = [](int width) -> std::pair<std::string, std::string> {
    const std::string name = "uops_panel_" + std::to_string(width);
    return {
        name,
        "/* A tile panel's rows, each thread its own (off the stack). */\nstatic __thread float " +
            name + "[" + std::to_string(kTilePanelRows) + " * " + std::to_string(width) +
            "] __attribute__((aligned(64)));\n"};
  };
  std::vector<std::pair<std::string, std::string>> defs = {
      {"in_range",
       in + "int in_range(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }\n"},
      {"min_i64", in + "int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }\n"},
      {"max_i64", in + "int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }\n"},
      {"floordiv_pos",
       "/* Floor division and modulo by a positive divisor. */\n" + in +
           "int64_t floordiv_pos(int64_t a, int64_t b) {\n  const int64_t q = a / b;\n"
           "  return (a % b != 0 && a < 0) ? q - 1 : q;\n}\n"},
      {"floormod_pos",
       in + "int64_t floormod_pos(int64_t a, int64_t b) {\n  const int64_t r = a % b;\n"
            "  return r < 0 ? r + b : r;\n}\n"},
      {"floordiv",
       "/* Floor division; a zero divisor or an overflow sets a bit in *err instead of trapping. "
       "*/\n" +
           plain +
           "int64_t floordiv(int64_t a, int64_t b, int *err) {\n"
           "  if (b == 0) {\n    *err |= 1;\n    return 0;\n  }\n"
           "  if (b == -1) {\n    if (a == (-9223372036854775807 - 1)) {\n      *err |= 4;\n"
           "      return 0;\n    }\n    return -a;\n  }\n"
           "  const int64_t q = a / b;\n  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : "
           "q;\n}\n"},
      {"floormod",
       "/* Floor modulo: the result has the divisor's sign; a zero divisor sets a bit in *err. "
       "*/\n" +
           plain +
           "int64_t floormod(int64_t a, int64_t b, int *err) {\n"
           "  if (b == 0) {\n    *err |= 2;\n    return 0;\n  }\n"
           "  if (b == -1) return 0;\n  const int64_t r = a % b;\n"
           "  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n}\n"},
      {"to_i32f",
       "/* An i32 store truncates toward zero; values outside the i32 range (NaN too) store 0. "
       "*/\n" +
           in +
           "int32_t to_i32f(float v) {\n"
           "  return (v > (float)-2147483649.0 && v < (float)2147483648.0) ? (int32_t)v : 0;\n}\n"},
      {"to_i32",
       "/* An i32 store truncates toward zero; values outside the i32 range (NaN too) store 0. "
       "*/\n" +
           in +
           "int32_t to_i32(double v) {\n"
           "  return (v > -2147483649.0 && v < 2147483648.0) ? (int32_t)v : 0;\n}\n"},
      {"max_valuef",
       "/* max and min keep the first operand on ties and the second when the first is NaN. */\n" +
           in + "float max_valuef(float a, float b) { return a >= b ? a : b; }\n"},
      {"min_valuef", in + "float min_valuef(float a, float b) { return a <= b ? a : b; }\n"},
      {"max_value",
       "/* max and min keep the first operand on ties and the second when the first is NaN. */\n" +
           in + "double max_value(double a, double b) { return a >= b ? a : b; }\n"},
      {"min_value", in + "double min_value(double a, double b) { return a <= b ? a : b; }\n"},
      {"choosef", "/* A select whose operands were both evaluated. */\n" + in +
                      "float choosef(int c, float a, float b) { return c ? a : b; }\n"},
      {"choose", "/* A select whose operands were both evaluated. */\n" + in +
                     "double choose(int c, double a, double b) { return c ? a : b; }\n"},
      stream_line("stream_linef", "float", "ps", 4),
      stream_line("stream_line", "double", "pd", 8),
      stream_row("stream_rowf", "float", "stream_linef", 4),
      stream_row("stream_row", "double", "stream_line", 8),
      {"uops_lanes_of",
       "/* A lane group's scalars, one per lane (LoopPlan::lane_group): under GCC a vector of its\n"
       " * vector extensions, which it keeps in registers between the loops inside where it kept\n"
       " * an array in memory (maxpool2d's gradient: 0.76 -> 0.59 ms at 8 x 56 x 56 x 64, one\n"
       " * thread); an array elsewhere, as clang vectorizes no `omp simd` loop over a vector's\n"
       " * elements (50 times slower). */\n"
       "#if defined(__GNUC__) && !defined(__clang__)\n"
       "#define uops_lanes_of(n, bytes) __attribute__((vector_size((n) * (bytes))))\n"
       "#else\n"
       "#define uops_lanes_of(n, bytes) [n]\n"
       "#endif\n"},
      panel_buffer(16),
      panel_buffer(64),
      {"uops_prefetchw",
       "/* Asks for the cache lines of the n bytes at byte `at` from p, to be written "
       "(LoopPlan::tile_stream). */\n" +
           in + "void uops_prefetchw(const void *p, int64_t at, int64_t n) {\n" +
           "#if defined(__GNUC__)\n"
           "  for (int64_t i = 0; i < n; i += 64)\n"
           "    __builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)(at + i)), 1, 3);\n"
           "#else\n"
           "  (void)p; (void)at; (void)n;\n"
           "#endif\n"
           "}\n"},
      {"uops_prefetch_at",
       "/* Asks for the cache line at byte `at` from p, to be read (a register tile's\n"
       " * LoopPlan::prefetch): integer arithmetic, as the address may lie past the tensor. */\n" +
           in + "void uops_prefetch_at(const void *p, int64_t at) {\n" +
           "#if defined(__GNUC__)\n"
           "  __builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)at), 0, 3);\n"
           "#else\n"
           "  (void)p; (void)at;\n"
           "#endif\n"
           "}\n"},
      {"uops_prefetch",
       "/* Asks for the cache lines of the n bytes at p ahead of their loads (LoopPlan::prefetch). "
       "*/\n" +
           in + "void uops_prefetch(const void *p, int64_t n) {\n" +
           "#if defined(__GNUC__)\n"
           "  for (int64_t i = 0; i < n; i += 64) __builtin_prefetch((const char *)p + i, 0, 3);\n"
           "#else\n"
           "  (void)p; (void)n;\n"
           "#endif\n"
           "}\n"},
      {"stream_fence",
       "/* Streamed stores are weakly ordered: this one orders them before what the thread does\n"
       " * next (the team's barrier). */\n"
       "#if defined(__SSE2__)\n#include <emmintrin.h>\n#endif\n" +
           in + "void stream_fence(void) {\n#if defined(__SSE2__)\n  _mm_sfence();\n#endif\n}\n"},
      {"vector_expf",
       "/* The f32 exponential. With vector math (UOPS_VECTOR_MATH: CCompileOptions::vector_math)\n"
       " * it is straight-line arithmetic a vectorized loop runs in lanes, within 1.25 ulps of "
       "e^x:\n"
       " * e^x = 2^n e^r, n = rint(x / ln 2), |r| <= ln 2 / 2, 2 e^r by a degree-6 polynomial\n"
       " * times 2^(n - 1) built in the exponent bits; results under 2^-125 flush to zero. */\n"
       "#ifdef UOPS_VECTOR_MATH\n" +
           in +
           "float vector_expf(float x) {\n"
           "  const float n = rintf(x * 1.44269504f);\n"
           "  float r = x - n * 0.693145752f;\n"
           "  r = r - n * 1.42860677e-6f; /* ln 2 in two parts: r stays exact */\n"
           "  const float p = 2.0f + r * (2.0f + r * (1.0f + r * (0.333330870f + r * "
           "(0.0833335370f +\n"
           "                  r * (0.0167324487f + r * 0.00278068637f)))));\n"
           "  union { float f; uint32_t i; } k, s;\n"
           "  k.f = n + 12582912.0f; /* 1.5 * 2^23: n in the low bits */\n"
           "  s.i = (k.i + 126u) << 23;\n"
           "  const float e = x < -87.6f ? 0.0f : p * s.f;\n"
           "  return x > 89.0f ? (float)INFINITY : e;\n}\n"
           "#else\n" +
           in + "float vector_expf(float x) { return expf(x); }\n#endif\n"},
      {"transpose_copyf",
       "/* dst[a * ds + b] = src[b * ss + a] for a < na, b < nb (LoopPlan::tile_transpose): 4 x 4\n"
       " * blocks through SSE registers where x86 has them, the rest element by element. */\n"
       "#if defined(__SSE__)\n#include <xmmintrin.h>\n#endif\n" +
           in +
           "void transpose_copyf(float *dst, int64_t ds, const float *src, int64_t ss, int64_t "
           "na,\n"
           "                     int64_t nb) {\n"
           "  int64_t a = 0;\n"
           "#if defined(__SSE__)\n"
           "  for (; a + 4 <= na; a += 4) {\n"
           "    int64_t b = 0;\n"
           "    for (; b + 4 <= nb; b += 4) {\n"
           "      const float *s = src + b * ss + a;\n"
           "      float *d = dst + a * ds + b;\n"
           "      __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + ss);\n"
           "      __m128 r2 = _mm_loadu_ps(s + 2 * ss), r3 = _mm_loadu_ps(s + 3 * ss);\n"
           "      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);\n"
           "      _mm_storeu_ps(d, r0);\n"
           "      _mm_storeu_ps(d + ds, r1);\n"
           "      _mm_storeu_ps(d + 2 * ds, r2);\n"
           "      _mm_storeu_ps(d + 3 * ds, r3);\n"
           "    }\n"
           "    for (; b < nb; ++b)\n"
           "      for (int64_t c = a; c < a + 4; ++c) dst[c * ds + b] = src[b * ss + c];\n"
           "  }\n"
           "#endif\n"
           "  for (; a < na; ++a)\n"
           "    for (int64_t b = 0; b < nb; ++b) dst[a * ds + b] = src[b * ss + a];\n"
           "}\n"},
      {"uops_f32_lanes",
       "/* The rows of a register tile over a count of columns known at run time\n"
       " * (LoopPlan::tile_width), in vectors of GCC's vector extensions as wide as the target's\n"
       " * own, UOPS_F32_LANES f32 each: a wider one GCC keeps in memory. */\n"
       "#if defined(__AVX512F__)\n#define UOPS_F32_LANES 16\n"
       "#elif defined(__AVX__)\n#define UOPS_F32_LANES 8\n"
       "#else\n#define UOPS_F32_LANES 4\n#endif\n"
       "typedef float uops_f32_lanes\n"
       "    __attribute__((vector_size(UOPS_F32_LANES * 4), aligned(4), may_alias));\n"},
      {"uops_load_lanes",
       "/* A vector of lanes from p, of which n (none, or more than the lanes, may be) belong to\n"
       " * a row, zeros in the others: masked loads where the target has them (AVX-512, AVX;\n"
       " * masked-off lanes never fault). Elsewhere the lanes from p where `left` remain in the\n"
       " * tensor (past the row: lanes nothing stores), else the row's and zeros. A macro: a\n"
       " * function returning the vector would pass it in memory where the target's registers\n"
       " * are narrower. */\n"
       "#if defined(__AVX512F__)\n"
       "#include <immintrin.h>\n"
       "#define uops_load_lanes(p, left, n)                                                  \\\n"
       "  ((void)(left),                                                                     \\\n"
       "   (uops_f32_lanes)_mm512_maskz_loadu_ps(                                             \\\n"
       "       (__mmask16)((n) >= 16 ? 0xFFFFu : (n) <= 0 ? 0u : (1u << (n)) - 1u), (p)))\n"
       "#elif defined(__AVX__)\n"
       "#include <immintrin.h>\n"
       "#define uops_load_lanes(p, left, n)                                                  \\\n"
       "  ((void)(left),                                                                     \\\n"
       "   (uops_f32_lanes)_mm256_maskload_ps(                                                \\\n"
       "       (p), _mm256_castps_si256(_mm256_cmp_ps(                                        \\\n"
       "                _mm256_set1_ps((float)(n)),                                          \\\n"
       "                _mm256_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f),      \\\n"
       "                _CMP_GT_OQ))))\n"
       "#else\n"
       "#define uops_load_lanes(p, left, n)                                                  \\\n"
       "  ({                                                                                 \\\n"
       "    const float *p_ = (p);                                                           \\\n"
       "    const int64_t left_ = (left), n_ = (n);                                          \\\n"
       "    uops_f32_lanes v_;                                                               \\\n"
       "    if (left_ >= UOPS_F32_LANES) {                                                   \\\n"
       "      __builtin_memcpy(&v_, p_, sizeof v_);                                          \\\n"
       "    } else {                                                                         \\\n"
       "      float e_[UOPS_F32_LANES] = {0};                                                \\\n"
       "      for (int64_t i_ = 0; i_ < n_ && i_ < UOPS_F32_LANES; ++i_) e_[i_] = p_[i_];    \\\n"
       "      __builtin_memcpy(&v_, e_, sizeof v_);                                          \\\n"
       "    }                                                                                \\\n"
       "    v_;                                                                              \\\n"
       "  })\n"
       "#endif\n"},
      {"reduce_maxf", "/* A reduction step replaces the value only on a strict improvement. */\n" +
                          in +
                          "float reduce_maxf(float acc, float v) { return v > acc ? v : acc; }\n"},
      {"reduce_minf", in + "float reduce_minf(float acc, float v) { return v < acc ? v : acc; }\n"},
      {"reduce_max", "/* A reduction step replaces the value only on a strict improvement. */\n" +
                         in +
                         "double reduce_max(double acc, double v) { return v > acc ? v : acc; }\n"},
      {"reduce_min",
       in + "double reduce_min(double acc, double v) { return v < acc ? v : acc; }\n"},
  };
  return defs;
}

}  // namespace

std::string helper_definitions(const std::set<std::string>& helpers_,
                               const std::set<AtomicHelper>& atomics, const Dialect& d) {
  std::string out;
  for (auto& [name, text] : helper_table(d))
    if (helpers_.count(name)) out += text;
  for (auto& a : atomics) out += atomic_definition(a, d);
  return out;
}

const std::set<std::string>& helper_names() {
  static const std::set<std::string> names = [] {
    const Dialect any{"", "", "", "", "", "", "", "", "", "", "", ""};
    std::set<std::string> out;
    for (auto& [name, text] : helper_table(any)) out.insert(name);
    return out;
  }();
  return names;
}

}  // namespace uops::codegen
