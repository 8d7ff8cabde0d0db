#include "backends/c/c_emitter.h"

#include <map>
#include <set>

#include "backends/c/c_compiler.h"
#include "backends/c/c_lane_groups.h"
#include "backends/c/c_team_plan.h"
#include "backends/c/c_tile_panels.h"
#include "backends/c/c_tile_prefetch.h"
#include "backends/c/c_window_gather.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/codegen/zero_fill.h"
#include "uops/backends/c/c_backend.h"
#include "uops/passes/packed_variant.h"
#include "uops/passes/parallel_loops.h"
#include "uops/passes/pipeline.h"

namespace uops::cgen {

using namespace ir;

namespace {

using codegen::KernelWriter;
using codegen::pad;

// A team_if plan's condition: its work reaches the threshold.
std::string enough_work(const LoopPlan& plan, KernelWriter& w) {
  return w.index(plan.work) + " >= " + std::to_string(kParallelThreshold);
}

// The array reductions of a plan's thread copies.
std::string copies_clauses(const LoopPlan& plan, KernelWriter& w) {
  std::string clauses;
  for (int t : plan.thread_copies)
    clauses += " reduction(+:" + w.names().tensors[size_t(t)] + "[0:" + w.elements(t) + "])";
  return clauses;
}

constexpr const char* kBarrier = "#ifdef _OPENMP\n#pragma omp barrier\n#endif\n";

// The clauses of the team a parallel loop's plan starts: its threads, its condition, and what
// its threads reduce.
std::string team_clauses(const LoopPlan& plan, KernelWriter& w) {
  std::string clauses = " num_threads(threads)";
  if (plan.work) clauses += " if(" + enough_work(plan, w) + ")";
  if (plan.reports_errors) clauses += " reduction(|:err)";
  return clauses + copies_clauses(plan, w);
}

// The OpenMP pragma for a parallel loop's plan, or none (parallel_loops.h). A team's loop that
// does not wait takes its share of the team started in front of its block (block()).
std::string parallel_pragma(const LoopPlan& plan, KernelWriter& w) {
  std::string clauses = plan.collapse > 1 ? " collapse(" + std::to_string(plan.collapse) + ")" : "";
  if (plan.threads == LoopPlan::Threads::worksharing || (plan.starts_team() && plan.nowait))
    return "#ifdef _OPENMP\n#pragma omp for" + clauses + " schedule(static)" +
           (plan.starts_team() ? "" : copies_clauses(plan, w)) + (plan.nowait ? " nowait" : "") +
           "\n#endif\n";
  if (!plan.starts_team()) return "";
  return "#ifdef _OPENMP\n#pragma omp parallel for" + clauses + " schedule(static)" +
         team_clauses(plan, w) + "\n#endif\n";
}

// The `omp simd` pragma for a loop's SIMD reductions or SIMD math (simd_reductions.h), or none.
// SIMD math only where libmvec is linked (UOPS_MVEC): without it the loop gains nothing. `lanes`
// asks for so many (LoopPlan::narrow_lanes) where not 0.
std::string simd_pragma(const LoopPlan& plan, int indent, const KernelWriter& w) {
  const int lanes = w.lanes_asked(plan);
  if (plan.simd_math)
    return "#if defined(UOPS_SIMD) && defined(UOPS_MVEC)\n" + pad(indent) +
           "#pragma omp simd\n#endif\n";
  if (plan.simd.empty()) return "";
  // A loop in lanes the printer writes out reduces in arrays of its own: no clauses.
  std::string clauses;
  bool by_hand = w.runs_in_lanes(plan);
  for (auto [op, ops] : {std::pair{"+", std::set{ReduceOp::sum, ReduceOp::mean}},
                         {"*", std::set{ReduceOp::prod}},
                         {"max", std::set{ReduceOp::max}},
                         {"min", std::set{ReduceOp::min}}}) {
    std::string ids;
    for (const Carried& c : plan.simd)
      if (ops.count(c.op)) ids += (ids.empty() ? "" : ", ") + codegen::Names::carried(c.id);
    if (!ids.empty() && !by_hand) clauses += std::string(" reduction(") + op + ":" + ids + ")";
  }
  if (lanes) clauses = " simdlen(" + std::to_string(lanes) + ")" + clauses;
  return "#ifdef UOPS_SIMD\n" + pad(indent) + "#pragma omp simd" + clauses + "\n#endif\n";
}

// Where block b, whose outer loop sums into thread copies (parallel_loops.h), runs with them.
std::string copies_guard(const Block& b, KernelWriter& w) {
  // Only where their team runs: on one thread, or with too little work, they would only cost
  // (zeroing each copy and adding it in).
  const LoopPlan& outer = b.loops[0].plan;
  std::string size, guard = "threads > 1 && ";
  if (outer.work) guard += enough_work(outer, w) + " && ";
  // An OpenMP array reduction of no elements crashes (GCC 12): each copy holds one at least.
  for (int t : outer.thread_copies) {
    guard += w.elements(t) + " > 0 && ";
    size += (size.empty() ? "" : " + ") + w.elements(t);
  }
  guard += size + " <= " + std::to_string(kThreadCopyLimit);
  // Where the block's own parallel loop would run a team, it does.
  size_t parallel = parallel_loop(b);
  if (parallel < b.loops.size() && b.loops[parallel].plan.work)
    guard +=
        " && " + w.index(b.loops[parallel].plan.work) + " < " + std::to_string(kParallelThreshold);
  return guard;
}

// The test of block bi's plan's fill_unless, "" for none: where the block that would store its
// elements from its tile's first round does not (on its thread copies, or a loop of that round
// empty).
std::string unless_test(const Program& p, size_t bi, KernelWriter& w) {
  int n = p.blocks[bi].loops[0].plan.fill_unless;
  if (!n) return "";
  const Block& t = p.blocks[bi + size_t(n)];
  std::string test = t.loops[0].plan.thread_copies.empty() ? "" : "(" + copies_guard(t, w) + ")";
  for (const Loop& l : t.loops)
    for (int v : l.plan.tile_start_first)
      for (const Loop& m : t.loops)
        if (m.var == v)
          test += (test.empty() ? "" : " || ") + w.index(m.end) + " <= " + w.index(m.start);
  return test;
}
// `nest`, block bi's body, under that test.
std::string unless_stored(const Program& p, size_t bi, std::string nest, int indent,
                          KernelWriter& w) {
  std::string test = unless_test(p, bi, w);
  if (test.empty()) return nest;
  return pad(indent) + "if (" + test + ") {\n" + nest + pad(indent) + "}\n";
}

// A test that holds wherever unit `first` (a block, or a row-local run) runs a statement: its
// fill's test (unless_test) and its loops' empty-range tests, which read no loop variable and
// cannot raise; "" where it may always run (a run: its tests lie inside its shared loop).
std::string may_run(const Program& p, size_t first, KernelWriter& w) {
  const Block& b = p.blocks[first];
  if (b.loops[0].plan.row_local) return "";
  std::string test;
  auto add = [&](const std::string& t) {
    if (!t.empty()) test += (test.empty() ? "(" : " && (") + t + ")";
  };
  add(unless_test(p, first, w));
  for (const Loop& l : b.loops) add(w.empty_test(b, l));
  return test;
}

// Where the threads wait in front of a unit: "" always, else a test that both units of one of
// the pairs it keeps in order (TeamPlan::orders) may run. A test of sizes, parameters and
// `threads` alone, the same on every thread of the team, as a barrier needs. An earlier block
// that sums into thread copies as a share of the team ends that share waiting (its `omp for`
// reduction, which has no nowait): it counts only where it runs without them.
std::string wait_test(const Program& p, const std::vector<std::pair<size_t, size_t>>& orders,
                      KernelWriter& w) {
  auto earlier = [&](size_t i) {
    std::string test = may_run(p, i, w);
    const Block& b = p.blocks[i];
    if (b.loops[0].plan.thread_copies.empty() || b.loops[0].plan.row_local ||
        b.loops[0].plan.threads != LoopPlan::Threads::worksharing)
      return test;
    return (test.empty() ? "" : test + " && ") + "!(" + copies_guard(b, w) + ")";
  };
  std::map<std::string, std::set<std::string>> later;  // per earlier unit's test
  for (auto [i, k] : orders) later[earlier(i)].insert(may_run(p, k, w));
  std::string test;
  for (auto& [first, seconds] : later) {
    std::string either;
    for (const std::string& s : seconds) {
      if (s.empty()) {
        either.clear();
        break;
      }
      either += (either.empty() ? "" : " || ") + s;
    }
    if (first.empty() && either.empty()) return "";
    std::string both = first.empty()        ? either
                       : either.empty()     ? first
                       : seconds.size() > 1 ? first + " && (" + either + ")"
                                            : first + " && " + either;
    test += (test.empty() ? "(" : " || (") + both + ")";
  }
  return test;
}

// The wait in front of a unit as printed: under wait_test's test, with the pairs it orders named
// above it, or plain where that test is "" (`always`).
std::string wait_for(const Program& p, const std::vector<std::pair<size_t, size_t>>& orders,
                     KernelWriter& w, bool& always) {
  std::string test = wait_test(p, orders, w);
  always = test.empty();
  if (always) return std::string("\n") + kBarrier;
  std::string pairs;
  for (auto [i, k] : orders)
    pairs += (pairs.empty() ? "" : ", ") + std::to_string(i) + " and " + std::to_string(k);
  return "\n  /* the threads wait where blocks " + pairs + " may both run */\n  if (" + test +
         ") {\n" + kBarrier + "  }\n";
}

// Blocks [first, end) under one outer loop (row_local_runs.h): per iteration, each block's
// carried scalars, inner loops and outer statements in turn, its outer variable an alias of the
// shared one.
std::string row_local(const Program& p, size_t first, size_t end, KernelWriter& w) {
  const Loop& outer = p.blocks[first].loops[0];
  std::string v = codegen::Names::var(outer.var);
  std::string nest = "  for (int64_t " + v + " = " + w.index(outer.start) + "; " + v + " < " +
                     w.index(outer.end) + "; ++" + v + ") {\n";
  for (size_t bi = first; bi < end; ++bi) {
    const Block& b = p.blocks[bi];
    nest += "    /* block " + std::to_string(bi) + ": " + b.origin + " */\n    {\n";
    std::string alias = codegen::Names::var(b.loops[0].var);
    if (alias != v)
      nest += "      const int64_t " + alias + " = " + v + ";\n      (void)" + alias + ";\n";
    std::string body;
    w.declare_carried(b, b.loops[0], 3, body);
    w.loop(b, 1, 3, body, [&](size_t k, int indent, std::string& out) {
      out += simd_pragma(b.loops[k].plan, indent, w);
    });
    w.statements(b, b.loops[0], 3, body);
    nest += unless_stored(p, bi, body, 3, w) + "    }\n";
  }
  std::string head = "\n  /* blocks " + std::to_string(first) + " to " + std::to_string(end - 1) +
                     " share their outer loop (row-local) */\n";
  // Streamed stores (LoopPlan::tile_stream, stream) are fenced once per thread, after its share
  // of the rows and before the team's barrier (a fence per row was slower in 12 of 16 processes
  // of layernorm, by up to 27%); in a share of an enclosing team's loop, after each row where the
  // loop waits at its end, else after the thread's share.
  bool streams = false;
  for (size_t bi = first; bi < end; ++bi)
    for (const Loop& l : p.blocks[bi].loops) streams |= l.plan.tile_stream || l.plan.stream;
  const LoopPlan& plan = outer.plan;
  const std::string fence = streams ? w.helper("stream_fence") + "();\n" : "";
  const bool shares = plan.threads == LoopPlan::Threads::worksharing;
  if (streams && shares && !plan.nowait) nest += "    " + fence;
  nest += "  }\n";
  if (!streams || shares)
    return head + parallel_pragma(plan, w) + nest + (streams && plan.nowait ? "  " + fence : "");
  if (!plan.starts_team()) return head + nest + "  " + fence;
  LoopPlan share = plan;
  share.nowait = true;
  return head + "#ifdef _OPENMP\n#pragma omp parallel" + team_clauses(plan, w) + "\n#endif\n  {\n" +
         parallel_pragma(share, w) + nest + "  " + fence + "  }\n";
}

// One block: its parallel loop's pragma in front of that loop, SIMD pragmas in front of the
// others. A block whose outer loop sums into thread copies (parallel_loops.h) is written twice:
// with the copies' team where they fit, else with the outer loop on one thread. In a share of
// the team the copies' threads wait first (their sum adds into every element of the tensors),
// unless they have `waited` right in front of the block, at any sizes.
std::string block(const Block& b, KernelWriter& w, bool waited) {
  const std::vector<int>& copies = b.loops[0].plan.thread_copies;
  // Streamed rows (LoopPlan::stream) are fenced once per thread, at the end of its share of the
  // block, before the team's barrier: the team is printed as for a loop that does not wait.
  bool streams = false;
  for (const Loop& l : b.loops) streams |= l.plan.stream;
  auto written = [&](size_t parallel, int indent) {
    const bool team = parallel < b.loops.size() && b.loops[parallel].plan.starts_team();
    LoopPlan share = team ? b.loops[parallel].plan : LoopPlan{};
    share.nowait = team && (share.nowait || streams);
    std::string nest;
    w.loop(b, 0, indent, nest, [&](size_t k, int in, std::string& out) {
      const LoopPlan& plan = b.loops[k].plan;
      out += k != parallel ? simd_pragma(plan, in, w) : parallel_pragma(team ? share : plan, w);
    });
    if (streams) nest += pad(indent) + w.helper("stream_fence") + "();\n";
    if (!share.nowait) return nest;
    // Every thread of the team runs the loops outside the parallel one.
    return "#ifdef _OPENMP\n#pragma omp parallel" + team_clauses(share, w) + "\n#endif\n" +
           pad(indent) + "{\n" + nest + pad(indent) + "}\n";
  };
  auto alone = [&](std::string nest) {
    if (!b.loops[0].plan.single) return nest;
    return "#ifdef _OPENMP\n#pragma omp single nowait\n#endif\n  {\n" + nest + "  }\n";
  };
  size_t parallel = parallel_loop(b);
  std::string nest;
  // Thread copies in a share of an enclosing team (c_team_plan.h): all its threads wait, then
  // sum; where they do not run, the block runs as its plan says.
  if (copies.empty())
    nest = alone(written(parallel, 1));
  else
    nest = "  if (" + copies_guard(b, w) + ") {\n" +
           (b.loops[0].plan.threads == LoopPlan::Threads::worksharing && !waited ? kBarrier : "") +
           written(0, 2) + "  } else {\n" + alone(written(parallel, 2)) + "  }\n";
  // The block's empty-range test, in front of its team (LoopPlan::empty_tests).
  if (std::string test = w.empty_test(b, b.loops[0]); !test.empty())
    nest = "  if (" + test + ") {\n" + nest + "  }\n";
  return nest;
}

std::string function(const Program& original, const std::string& entry, const CpuTarget& target,
                     const codegen::Dialect& dialect, Zeros zeroes, std::set<std::string>& helpers,
                     std::set<std::string>& math) {
  Program p = gather_windows(original);
  p = plan_cpu(zeroes == Zeros::by_entry ? codegen::with_own_zeros(p) : std::move(p), target);
  plan_lane_groups(p);
  plan_tile_prefetch(p);
  const TeamPlan teams = plan_teams(p, target.worksharing);
  plan_tile_panels(p, target.vector_bytes);  // where no block starts a team of its own now
  KernelWriter w(p, dialect);
  w.reciprocal_division = target.reassociate;
  w.tile_stream_bytes = target.tile_stream_bytes;
  std::string body;
  bool any_parallel = false;  // a block starts a team (in one team, the entry starts it)
  for (size_t bi = 0; bi < p.blocks.size();) {
    const Block& b = p.blocks[bi];
    for (const Loop& l : b.loops) any_parallel |= l.plan.starts_team();
    bool waited = false;  // the threads wait right in front of the block, at any sizes
    if (!teams.waits.empty() && teams.waits[bi]) body += wait_for(p, teams.orders[bi], w, waited);
    if (size_t run = size_t(b.loops[0].plan.row_local)) {
      body += row_local(p, bi, bi + run + 1, w);
      bi += run + 1;
      continue;
    }
    body += "\n  /* block " + std::to_string(bi) + ": " + b.origin + " */\n";
    body += unless_stored(p, bi, block(b, w, waited), 1, w);
    ++bi;
  }
  // The kernel's one team (c_team_plan.h) runs a function of the team's work, called by every
  // thread of the team or, where the team would not start, by the caller alone: an `omp parallel`
  // whose `if` fails still costs libgomp's end-of-team futex wake, a system call (1.5-2 us on the
  // VMs of docs/cpu-kernels.md, more than a 4 x 4 matmul). The function's `omp for`, `single` and
  // barriers bind to the team that calls it, or to none, as in a team of one. The condition is
  // printed before the declarations below, so that they include the sizes it reads.
  std::string when = "threads > 1";
  if (teams.one_team && !teams.always) {
    std::string enough;
    for (const Index& work : teams.work)
      enough += (enough.empty() ? "" : " || ") + w.index(work) +
                " >= " + std::to_string(kParallelThreshold);
    when += " && (" + enough + ")";
  }

  std::string decl;
  int offset = 0;
  std::vector<int> size_offset;
  for (auto& t : p.tensors) {
    size_offset.push_back(offset);
    offset += int(t.shape.size());
  }
  // The tensors reach the kernel's body as restrict parameters, which the entry casts from
  // `tensors`: clang (LLVM) takes restrict as "nothing else aliases this" only on a function's
  // parameters, not on locals, and without it kept loads such as softmax's row maximum inside
  // its loops, which then stayed scalar (docs/cpu-kernels.md, The C compiler). GCC takes both.
  const auto& names = w.names();
  std::string pointers, casts;
  for (int t : w.used_tensors()) {
    const TensorInfo& info = p.tensors[t];
    std::string type = KernelWriter::element_type(info.dtype);
    if (info.role == Role::input) type = "const " + type;
    pointers += type + " *" + dialect.restrict_pointer + " " + names.tensors[t] + ", ";
    casts += "(" + type + " *)tensors[" + std::to_string(t) + "], ";
  }
  // The sizes and parameters, which the one team's entry declares too (for its condition).
  std::string scalars, unused;
  int last = -1;
  for (auto [t, a] : w.used_sizes()) {
    scalars += t == last ? ", " : (last >= 0 ? ";\n" : "") + std::string("  const int64_t ");
    scalars += names.size(t, a) + " = sizes[" + std::to_string(size_offset[t] + a) + "]";
    unused += " (void)" + names.size(t, a) + ";";
    last = t;
  }
  if (last >= 0) scalars += ";\n";
  // A parameter fixed at compile time (uops/ir/fixed_params.h) is its constant: binding has
  // checked the value given.
  bool reads_params = false;
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!w.used_params().count(p.params[i])) continue;
    std::string fixed = w.fixed_param_declaration(p.params[i]);
    reads_params |= fixed.empty();
    scalars += !fixed.empty() ? fixed
                              : "  const int64_t " + names.param(p.params[i]) + " = params[" +
                                    std::to_string(i) + "];\n";
    unused += " (void)" + names.param(p.params[i]) + ";";
  }
  decl += scalars;
  if (w.used_sizes().empty()) decl += "  (void)sizes;\n";
  if (!reads_params) decl += "  (void)params;\n";
  if (!any_parallel || target.worksharing) decl += "  (void)threads;\n";
  if (any_parallel && !target.worksharing) decl += "#ifndef _OPENMP\n  (void)threads;\n#endif\n";
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
  math.insert(w.used_math().begin(), w.used_math().end());
  const std::string signature =
      "(void *const *tensors, const int64_t *sizes, const int64_t *params, int threads) {\n";
  const std::string inner = entry + (teams.one_team ? "_team" : "_body");
  const std::string function = "static int " + inner + "(" + pointers +
                               "const int64_t *sizes, const int64_t *params, int threads) {\n" +
                               decl + body + "  return " + (w.uses_error_flag() ? "err" : "0") +
                               ";\n}\n";
  const std::string call = inner + "(" + casts + "sizes, params, threads);\n";
  const std::string no_tensors = casts.empty() ? "  (void)tensors;\n" : "";
  if (!teams.one_team)
    return table + function + "int " + entry + signature + no_tensors + "  return " + call + "}\n";
  return table + function + "int " + entry + signature + no_tensors + scalars +
         (unused.empty() ? "" : " " + unused + "\n") + "  int err = 0;\n#ifdef _OPENMP\n  if (" +
         when +
         ")\n#pragma omp parallel num_threads(threads) reduction(|:err)\n    err |= " + call +
         "  else\n#endif\n    err = " + call + "  return err;\n}\n";
}

}  // namespace

std::string emit_c_unit(const std::vector<const Program*>& programs,
                        const std::vector<std::string>& entries, const CpuTarget& target,
                        Zeros zeroes, const codegen::Dialect& dialect) {
  std::set<std::string> helpers, math;
  std::string functions;
  for (size_t i = 0; i < programs.size(); ++i)
    functions += "\n" + function(*programs[i], entries[i], target, dialect, zeroes, helpers, math);
  // SIMD variants of the math functions, in libmvec: the compiler defines UOPS_MVEC and links it
  // (CCompileOptions::vector_math); elsewhere the source means the same without them.
  // tanh's came with glibc 2.35 (x86-64): declared only where the headers, and so the libmvec
  // linked with them, are that recent.
  std::string vector_math, tanh;
  for (std::string f : {"exp", "log", "sin", "cos", "pow", "tanh"})
    for (std::string t : {"float", "double"}) {
      std::string name = f + (t == "float" ? "f" : "");
      if (!math.count(name)) continue;
      (f == "tanh" ? tanh : vector_math) += "#pragma omp declare simd notinbranch\n" + t + " " +
                                            name + "(" + t + (f == "pow" ? ", " + t : "") + ");\n";
    }
  if (!tanh.empty())
    vector_math +=
        "#if defined(__x86_64__) && defined(__GLIBC__) && \\\n"
        "    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))\n" +
        tanh + "#endif\n";
  if (!vector_math.empty())
    vector_math = "#if defined(UOPS_SIMD) && defined(UOPS_MVEC)\n" + vector_math + "#endif\n\n";
  return "/* Generated by uops. Entry points: int f(void *const *tensors, const int64_t *sizes,\n"
         " * const int64_t *params, int threads), returning 0 or error bits (1 division by zero,\n"
         " * 2 modulo by zero, 4 overflow); see uops/backends/c/c_backend.h. */\n"
         "#include <math.h>\n#include <stdint.h>\n\n"
         "/* SIMD pragmas with OpenMP, or with its SIMD part alone (-fopenmp-simd, where a kernel\n"
         " * runs on one thread: c_compiler.h). */\n"
         "#if defined(_OPENMP) || defined(UOPS_OPENMP_SIMD)\n#define UOPS_SIMD 1\n#endif\n\n" +
         vector_math + codegen::helper_definitions(helpers, /*atomics=*/{}, dialect) + functions;
}

}  // namespace uops::cgen

namespace uops {

std::string emit_c(const Program& p, const CCompileOptions& options) {
  auto variant = options.packed_variant ? packed_variant(p) : std::nullopt;
  const CpuTarget target = cgen::cpu_target(options);
  if (!variant) return cgen::emit_c_unit({&p}, {"uops_kernel"}, target, cgen::Zeros::by_entry);
  return cgen::emit_c_unit({&p, &variant->program}, {"uops_kernel", "uops_kernel_packed"}, target,
                           cgen::Zeros::by_entry);
}

}  // namespace uops
