#include "uops/ir/printer.h"

#include <cmath>
#include <cstdio>

namespace uops::ir {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

namespace {

std::string indices(const Program& p, const std::vector<Index>& ix) {
  std::string s = "[";
  for (size_t i = 0; i < ix.size(); ++i) s += (i ? ", " : "") + index_text(p, ix[i]);
  return s + "]";
}

// The verifier prints the programs it rejects, so broken ids must print, not crash.
std::string tensor_name(const Program& p, int t) {
  return t >= 0 && t < int(p.tensors.size()) ? p.tensors[t].name : "#" + std::to_string(t);
}

std::string store_target(const Program& p, const Stmt& s) {
  return tensor_name(p, s.tensor) + (s.checked ? "?" : "") + indices(p, s.index);
}

std::string stmt_text(const Program& p, const Stmt& s) {
  std::string v = print(p, s.value);
  switch (s.kind) {
    case StmtKind::assign:
      return store_target(p, s) + " = " + v;
    case StmtKind::accumulate:
      return store_target(p, s) + " " + op_name(s.op) + "= " + v;
    case StmtKind::reduce: {
      std::string text = "c" + std::to_string(s.carried) + " " + op_name(s.op) + "= " + v;
      if (s.arg) text += " at " + index_text(p, s.arg);
      return text;
    }
  }
  return "";
}

// A loop's plan (LoopPlan) as " [parallel team_if(work) collapse 2 errors, simd c1 sum]" or
// " [simd math]"; empty
// for a plain loop.
std::string plan_text(const Program& p, const LoopPlan& plan) {
  std::vector<std::string> parts;
  auto listed = [&](std::string t, auto& accesses) {  // tensors and their indices
    for (auto& [tensor, index] : accesses) t += " " + tensor_name(p, tensor) + indices(p, index);
    return t;
  };
  static const char* const threads[] = {"", "serial", "team", "team_if", "worksharing"};
  if (plan.threads != LoopPlan::Threads::none) {
    std::string t = std::string("parallel ") + threads[int(plan.threads)];
    if (plan.work) t += "(" + index_text(p, plan.work) + ")";
    if (plan.collapse != 1) t += " collapse " + std::to_string(plan.collapse);
    if (plan.reports_errors) t += " errors";
    parts.push_back(t);
  }
  if (!plan.thread_copies.empty()) {
    std::string t = "thread copies of";
    for (int c : plan.thread_copies) t += " " + tensor_name(p, c);
    parts.push_back(t);
  }
  if (plan.single) parts.push_back("single");
  if (plan.nowait) parts.push_back("nowait");
  if (!plan.simd.empty()) {
    std::string t = "simd";
    for (const Carried& c : plan.simd) t += " c" + std::to_string(c.id) + " " + op_name(c.op);
    parts.push_back(t);
  }
  if (plan.narrow_lanes)
    parts.push_back("in " + std::to_string(plan.narrow_lanes) + " lanes up to " +
                    std::to_string(plan.narrow_upto));
  if (plan.lanes) parts.push_back("in " + std::to_string(plan.lanes) + " lanes by hand");
  if (!plan.prefetch.empty()) parts.push_back(listed("prefetch", plan.prefetch));
  if (!plan.tile_panel.empty()) parts.push_back(listed("panel of", plan.tile_panel));
  if (plan.simd_math) parts.push_back("simd math");
  if (plan.row_local) parts.push_back("row_local " + std::to_string(plan.row_local));
  if (plan.tile) parts.push_back("tile of the last " + std::to_string(plan.tile) + " loops");
  if (plan.tile_start) {
    std::string first;
    for (int v : plan.tile_start_first)
      first +=
          (first.empty() ? " where " : ", ") + std::string("v") + std::to_string(v) + " starts";
    parts.push_back("from " + format_double(*plan.tile_start) + first);
  }
  if (plan.tile_stream) parts.push_back("streamed");
  if (plan.tile_unrolled) parts.push_back("copied in unrolled rows");
  if (plan.stream) parts.push_back("streamed rows");
  if (plan.tile_store) parts.push_back("stores " + print(p, plan.tile_store));
  if (plan.unroll) parts.push_back("unroll");
  if (plan.tile_width) parts.push_back("in rows of " + std::to_string(plan.tile_width) + " lanes");
  if (plan.tile_transpose) parts.push_back("transposed with the next loop");
  if (!plan.tile_corners.empty()) parts.push_back(listed("test tile corners", plan.tile_corners));
  if (!plan.tile_rows.empty()) {
    std::string t = "else rows where in range";
    for (auto& [tensor, e] : plan.tile_rows)
      t += " " + tensor_name(p, tensor) + "[.., " + index_text(p, e) + "]";
    parts.push_back(t + " bound at loop " + std::to_string(plan.tile_rows_at));
  }
  if (!plan.tile_steps.empty())
    parts.push_back(listed("else rows by steps", plan.tile_steps) + " bound at loop " +
                    std::to_string(plan.tile_steps_at));
  if (!plan.tile_skip.empty()) {
    std::string t = "else only where in range";
    for (auto& s : plan.tile_skip)
      t += " " + tensor_name(p, s.tensor) + "." + std::to_string(s.axis) + "[" +
           index_text(p, s.at) + "]";
    parts.push_back(t);
  }
  if (!plan.empty_tests.empty()) {
    std::string t = "skip if loop";
    for (size_t i = 0; i < plan.empty_tests.size(); ++i)
      t += (i ? i + 1 == plan.empty_tests.size() ? " or " : ", " : " ") +
           std::to_string(plan.empty_tests[i]);
    parts.push_back(t + " is empty");
  }
  if (plan.fill_unless)
    parts.push_back("only where block +" + std::to_string(plan.fill_unless) + " does not store it");
  std::string out;
  for (auto& part : parts) out += (out.empty() ? " [" : ", ") + part;
  return out.empty() ? out : out + "]";
}

}  // namespace

std::string print(const Program& p, const Value& v) {
  if (!v) return "<no value>";
  auto of = [&](const Value& operand) { return print(p, operand); };
  switch (v->kind) {
    case ValueKind::Const:
      return format_double(v->constant);
    case ValueKind::Load: {
      std::string s = tensor_name(p, v->tensor) + (v->checked ? "?" : "") + indices(p, v->index);
      if (v->fill != 0.0) s.insert(s.size() - 1, " fill " + format_double(v->fill));
      return s;
    }
    case ValueKind::Carried:
      return "c" + std::to_string(v->carried);
    case ValueKind::IndexValue:
      return "idx(" + index_text(p, v->ivalue) + ")";
    case ValueKind::Unary:
      return std::string(op_name(v->uop)) + "(" + of(v->a) + ")";
    case ValueKind::Binary:  // (a + b), or max(a, b) for an op without a symbol
      if (const char* symbol = op_symbol(v->bop))
        return "(" + of(v->a) + " " + symbol + " " + of(v->b) + ")";
      return std::string(op_name(v->bop)) + "(" + of(v->a) + ", " + of(v->b) + ")";
    case ValueKind::Ternary:
      return "(" + of(v->a) + " ? " + of(v->b) + " : " + of(v->c) + ")";
  }
  return "";
}

std::string print_block(const Program& p, const Block& b, int number) {
  std::string out = "block " + std::to_string(number) + (b.origin.empty() ? "" : ": " + b.origin) +
                    (b.partition ? " (partition " + std::to_string(b.partition) + ")" : "") + "\n";
  for (size_t k = 0; k < b.loops.size(); ++k) {
    const Loop& l = b.loops[k];
    out += std::string(2 * (k + 1), ' ') + "for v" + std::to_string(l.var) + " in [" +
           index_text(p, l.start) + ", " + index_text(p, l.end) + ")";
    for (size_t c = 0; c < l.carried.size(); ++c)
      out += (c ? ", c" : " carry c") + std::to_string(l.carried[c].id) + " " +
             op_name(l.carried[c].op);
    out += plan_text(p, l.plan) + ":\n";
  }
  for (size_t k = b.loops.size(); k-- > 0;)
    for (const Stmt& s : b.loops[k].stmts)
      out += std::string(2 * (k + 2), ' ') + stmt_text(p, s) + "\n";
  return out;
}

std::string print(const Program& p) {
  std::string out;
  for (auto& name : p.params) out += "param $" + name + "\n";
  for (auto& t : p.tensors) {
    out += std::string("tensor ") + t.name + " " + dtype_name(t.dtype) + " " + indices(p, t.shape) +
           " " + role_name(t.role) + "\n";
  }
  for (auto& eq : p.equalities)
    out += "assert " + index_text(p, eq.a) + " == " + index_text(p, eq.b) + "\n";
  for (size_t i = 0; i < p.blocks.size(); ++i) out += print_block(p, p.blocks[i], int(i));
  return out;
}

}  // namespace uops::ir
