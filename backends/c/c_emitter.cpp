#include "backends/c/c_emitter.h"

#include <map>

#include "backends/codegen/kernel_writer.h"
#include "backends/codegen/parallel.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/analysis.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/reduction_tiling.h"

namespace uops::cgen {

using namespace ir;

namespace {

using codegen::KernelWriter;
using codegen::pad;

// Below this many iterations a parallel loop runs on one thread: starting the team costs more.
// Measured on a shared 2-core machine with a passive wait policy, an elementwise loop on 2
// threads lost to 1 thread up to 2^17 iterations and broke even at 2^19.
constexpr int kParallelThreshold = 1 << 18;

struct ParallelLoop {
  size_t depth = 0;
  int collapse = 0;  // 0: none
};

// The outermost loop whose iterations are independent, collapsed with the next one when that
// is independent too and not the innermost (which stays whole so that it vectorizes).
ParallelLoop choose_parallel(const Program& p, const Block& b) {
  auto par = codegen::loop_parallelism(p, b);
  for (size_t k = 0; k < b.loops.size(); ++k) {
    if (!par[k].exclusive || codegen::runs_once(b.loops[k])) continue;
    if (bounds_use_vars(b.loops[k])) return {};
    ParallelLoop pl{k, 1};
    size_t next = k + 1;
    if (next + 1 < b.loops.size() && par[next].exclusive && !b.loops[k].is_pivot() &&
        !bounds_use_vars(b.loops[next]))
      pl.collapse = 2;
    return pl;
  }
  return {};
}

// Stores in a SIMD loop are safe when each iteration has its own element: every tensor the loop
// writes is written and read in it at one index with an axis that is the loop variable, and no
// index reads data.
bool stores_stay_apart(const Loop& l) {
  std::map<int, std::vector<Index>> written;
  for (auto& s : l.stmts) {
    if (s.kind == StmtKind::reduce) continue;
    auto [it, fresh] = written.emplace(s.tensor, s.index);
    if (!fresh && !same_index(it->second, s.index)) return false;
    bool own = false;
    for (auto& e : s.index) {
      if (uses_data(e)) return false;
      own |= e->kind == IndexKind::Var && e->var == l.var;
    }
    if (!own) return false;
  }
  for (auto& s : l.stmts) {
    bool apart = true;
    for_each_load(s.value, [&](const ValueNode& n) {
      for (auto& e : n.index) apart &= !uses_data(e);
      auto it = written.find(n.tensor);
      apart &= it == written.end() || same_index(it->second, n.index);
    });
    if (!apart) return false;
  }
  return true;
}

// The `omp simd` reduction clauses for innermost loop k of b when it reduces carried scalars
// owned further out (sum, product, max, min), nothing else in it reads them, its stores stay
// apart and nothing in it can raise an error; else empty.
std::string simd_reduction(const Block& b, size_t k) {
  const Loop& l = b.loops[k];
  if (k == 0 || k + 1 != b.loops.size() || !l.carried.empty() || !stores_stay_apart(l)) return "";
  // max and min keep the first of equal values and skip NaN: every lane does, so lanes combined
  // differ from one sequential pass only in which of -0 and +0 they keep.
  std::set<int> sums, products, maxima, minima, all;
  for (auto& s : l.stmts) {
    if (may_raise(s.value)) return "";
    if (s.kind != StmtKind::reduce) continue;
    all.insert(s.carried);
    switch (s.op) {
      case ReduceOp::sum:
      case ReduceOp::mean:
        sums.insert(s.carried);
        break;
      case ReduceOp::prod:
        products.insert(s.carried);
        break;
      case ReduceOp::max:
        maxima.insert(s.carried);
        break;
      case ReduceOp::min:
        minima.insert(s.carried);
        break;
      default:
        return "";
    }
  }
  if (all.empty()) return "";
  for (auto& s : l.stmts)
    for (int c : all)
      if (uses_carried(s.value, c) && !(s.kind == StmtKind::reduce && s.carried == c)) return "";
  std::string clauses;
  for (auto [op, ids] :
       {std::pair{"+", &sums}, {"*", &products}, {"max", &maxima}, {"min", &minima}}) {
    if (ids->empty()) continue;
    clauses += std::string(" reduction(") + op + ":";
    for (int c : *ids) clauses += (c == *ids->begin() ? "" : ", ") + codegen::Names::carried(c);
    clauses += ")";
  }
  return clauses;
}

// The end of the run of blocks from `first` that share their outer loop (see
// codegen::share_outer_loop), each with that loop as its parallel one; first + 1 when none do.
size_t row_local_end(const Program& p, size_t first) {
  std::vector<const Block*> run;
  size_t end = first;
  for (; end < p.blocks.size(); ++end) {
    ParallelLoop pl = choose_parallel(p, p.blocks[end]);
    run.push_back(&p.blocks[end]);
    if (pl.depth != 0 || pl.collapse == 0 || !codegen::share_outer_loop(run)) break;
  }
  return std::max(end, first + 1);
}

// Blocks [first, end) under one outer loop: per iteration, each block's carried scalars, inner
// loops and outer statements in turn, its outer variable an alias of the shared one.
template <typename Simd, typename Pragma, typename Work>
std::string row_local(const Program& p, size_t first, size_t end, KernelWriter& w, Simd& simd,
                      Pragma& parallel_pragma, Work& work_from) {
  const Loop& outer = p.blocks[first].loops[0];
  std::string v = codegen::Names::var(outer.var);
  std::string nest = "  for (int64_t " + v + " = " + w.index(outer.start) + "; " + v + " < " +
                     w.index(outer.end) + "; ++" + v + ") {\n";
  Index work = idx::constant(0);
  for (size_t bi = first; bi < end; ++bi) {
    const Block& b = p.blocks[bi];
    work = idx::add(work, work_from(b, 0));
    nest += "    /* block " + std::to_string(bi) + ": " + b.origin + " */\n    {\n";
    std::string alias = codegen::Names::var(b.loops[0].var);
    if (alias != v)
      nest += "      const int64_t " + alias + " = " + v + ";\n      (void)" + alias + ";\n";
    w.declare_carried(b, b.loops[0], 3, nest);
    w.guard_from = 1;
    w.loop(b, 1, 3, nest, [&](size_t k, int indent, std::string& out) { simd(b, k, indent, out); });
    w.statements(b, b.loops[0], 3, nest);
    nest += "    }\n";
  }
  nest += "  }\n";
  std::string head = "\n  /* blocks " + std::to_string(first) + " to " + std::to_string(end - 1) +
                     " share their outer loop (row-local) */\n";
  return head + parallel_pragma(work, 1, nest.find("&err") != std::string::npos) + nest;
}

std::string function(const Program& original, const std::string& entry, bool reassociate,
                     bool worksharing, std::set<std::string>& helpers) {
  const Program p =
      tile_copies(tile_registers(tile_reductions(tile_dots(original, 4, 4), 128), 8, 32), 16);
  KernelWriter w(p, codegen::Dialect::c);
  w.reciprocal_division = reassociate;
  w.register_tiles = true;
  w.guard_empty_loops = true;
  std::string body;
  bool any_parallel = false;
  auto simd = [&](const Block& b, size_t k, int indent, std::string& out) {
    std::string clauses = reassociate ? simd_reduction(b, k) : "";
    if (!clauses.empty())
      out += "#ifdef _OPENMP\n" + pad(indent) + "#pragma omp simd" + clauses + "\n#endif\n";
  };
  // The pragma for a loop running `work` iterations in all, or none below the threshold.
  auto parallel_pragma = [&](const Index& work, int collapse, bool err) {
    std::string clauses = collapse == 2 ? " collapse(2)" : "";
    if (worksharing)
      return "#ifdef _OPENMP\n#pragma omp for" + clauses + " schedule(static) nowait\n#endif\n";
    clauses += " schedule(static) num_threads(threads)";
    int64_t c = 0;
    if (is_const(work, &c) && c < kParallelThreshold) return std::string();
    if (!is_const(work, &c))
      clauses += " if(" + w.index(work) + " >= " + std::to_string(kParallelThreshold) + ")";
    if (err) clauses += " reduction(|:err)";
    any_parallel = true;
    return "#ifdef _OPENMP\n#pragma omp parallel for" + clauses + "\n#endif\n";
  };
  auto work_from = [](const Block& b, size_t depth) {
    Index work = idx::constant(1);
    for (size_t k = depth; k < b.loops.size(); ++k)
      if (!bounds_use_vars(b.loops[k]))
        work = idx::mul(work, idx::sub(b.loops[k].end, b.loops[k].start));
    return work;
  };
  for (size_t bi = 0; bi < p.blocks.size();) {
    size_t end = worksharing ? bi + 1 : row_local_end(p, bi);
    if (end > bi + 1) {
      body += row_local(p, bi, end, w, simd, parallel_pragma, work_from);
      bi = end;
      continue;
    }
    const Block& b = p.blocks[bi];
    body += "\n  /* block " + std::to_string(bi) + ": " + b.origin + " */\n";
    if (worksharing && bi > 0) body += "#ifdef _OPENMP\n#pragma omp barrier\n#endif\n";
    ParallelLoop pl = choose_parallel(p, b);
    std::string nest;
    // The pragma is written after the nest, once we know whether it reports errors.
    std::string marker = "@@PRAGMA@@\n";
    w.guard_from = pl.depth + size_t(pl.collapse);  // not between the parallel loops
    w.loop(b, 0, 1, nest, [&](size_t k, int indent, std::string& out) {
      if (pl.collapse && k == pl.depth)
        out += marker;
      else
        simd(b, k, indent, out);
    });
    // Worksharing: every thread of the team runs the loops outside the parallel one, so they
    // must hold no statements; otherwise one thread runs the whole block.
    bool shared = pl.collapse != 0;
    for (size_t k = 0; k < pl.depth; ++k) shared &= !b.loops[k].is_pivot();
    if (pl.collapse) {
      std::string pragma = worksharing && !shared
                               ? ""
                               : parallel_pragma(work_from(b, pl.depth), pl.collapse,
                                                 nest.find("&err") != std::string::npos);
      nest.replace(nest.find(marker), marker.size(), pragma);
    }
    if (worksharing && !shared)
      nest = "#ifdef _OPENMP\n#pragma omp single nowait\n#endif\n  {\n" + nest + "  }\n";
    body += nest;
    ++bi;
  }

  std::string decl;
  int offset = 0;
  std::vector<int> size_offset;
  for (auto& t : p.tensors) {
    size_offset.push_back(offset);
    offset += int(t.shape.size());
  }
  const auto& names = w.names();
  for (int t : w.used_tensors()) {
    const TensorInfo& info = p.tensors[t];
    std::string type = KernelWriter::element_type(info.dtype);
    if (info.role == Role::input) type = "const " + type;
    decl += "  " + type + " *restrict " + names.tensors[t] + " = (" + type + " *)tensors[" +
            std::to_string(t) + "];\n";
  }
  int last = -1;
  for (auto [t, a] : w.used_sizes()) {
    decl += t == last ? ", " : (last >= 0 ? ";\n" : "") + std::string("  const int64_t ");
    decl += names.size(t, a) + " = sizes[" + std::to_string(size_offset[t] + a) + "]";
    last = t;
  }
  if (last >= 0) decl += ";\n";
  for (size_t i = 0; i < p.params.size(); ++i)
    if (w.used_params().count(p.params[i]))
      decl +=
          "  const int64_t " + names.param(p.params[i]) + " = params[" + std::to_string(i) + "];\n";
  if (w.used_tensors().empty()) decl += "  (void)tensors;\n";
  if (w.used_sizes().empty()) decl += "  (void)sizes;\n";
  if (w.used_params().empty()) decl += "  (void)params;\n";
  if (!any_parallel || worksharing) decl += "  (void)threads;\n";
  if (any_parallel && !worksharing) decl += "#ifndef _OPENMP\n  (void)threads;\n#endif\n";
  if (w.uses_error_flag()) decl += "  int err = 0;\n";

  std::string table = "/* " + entry + ": tensors";
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorInfo& info = p.tensors[t];
    table += (t ? ", " : " ") + std::to_string(t) + " " + info.name + " " + dtype_name(info.dtype) +
             " [";
    for (size_t a = 0; a < info.shape.size(); ++a)
      table += (a ? ", " : "") + index_text(p, info.shape[a]);
    table += std::string("] ") + role_name(info.role);
  }
  table += "; params";
  for (auto& q : p.params) table += " " + q;
  table += " */\n";

  helpers.insert(w.used_helpers().begin(), w.used_helpers().end());
  return table + "int " + entry +
         "(void *const *tensors, const int64_t *sizes, const int64_t *params, int threads) {\n" +
         decl + body + "  return " + (w.uses_error_flag() ? "err" : "0") + ";\n}\n";
}

}  // namespace

std::string emit_c_unit(const std::vector<const Program*>& programs,
                        const std::vector<std::string>& entries, bool reassociate,
                        bool worksharing) {
  std::set<std::string> helpers;
  std::string functions;
  for (size_t i = 0; i < programs.size(); ++i)
    functions += "\n" + function(*programs[i], entries[i], reassociate, worksharing, helpers);
  // SIMD variants of the math functions, in libmvec: the compiler defines UOPS_MVEC and links it
  // (CCompileOptions::vector_math); elsewhere the source means the same without them.
  std::string vector_math;
  for (std::string f : {"exp", "log", "sin", "cos", "pow"})
    for (std::string t : {"float", "double"}) {
      std::string name = f + (t == "float" ? "f" : "");
      if (functions.find(" " + name + "(") == std::string::npos &&
          functions.find("(" + name + "(") == std::string::npos)
        continue;
      vector_math += "#pragma omp declare simd notinbranch\n" + t + " " + name + "(" + t +
                     (f == "pow" ? ", " + t : "") + ");\n";
    }
  if (!vector_math.empty())
    vector_math = "#if defined(_OPENMP) && defined(UOPS_MVEC)\n" + vector_math + "#endif\n\n";
  return "/* Generated by uops. Entry points: int f(void *const *tensors, const int64_t *sizes,\n"
         " * const int64_t *params, int threads), returning 0 or error bits (1 division by zero,\n"
         " * 2 modulo by zero, 4 overflow); see uops/backends/c/c_backend.h. */\n"
         "#include <math.h>\n#include <stdint.h>\n\n" +
         vector_math + codegen::helper_definitions(helpers, codegen::Dialect::c) + functions;
}

}  // namespace uops::cgen

namespace uops {

std::string emit_c(const Program& p, const CCompileOptions& options) {
  return cgen::emit_c_unit({&p}, {"uops_kernel"}, options.reassociate);
}

}  // namespace uops
