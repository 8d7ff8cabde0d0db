#include "uops/oracle/harness.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "uops/backends/backends.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/memory_budget.h"
#include "uops/ir/printer.h"
#include "uops/oracle/failure_db.h"
#include "uops/oracle/reference.h"

namespace uops::oracle {

using namespace ir;

namespace {

struct Outcome {
  bool ok = true;
  bool too_large = false;  // uops::LimitError somewhere: not a case to judge
  std::string limit;       // its message
  std::string culprit;
  Comparison cmp;
  std::string error;
  double worst = 0.0;
  double reference = 0.0;
};

Outcome fail(const std::string& culprit, const std::string& error) {
  Outcome o;
  o.ok = false;
  o.culprit = culprit;
  o.error = error;
  o.worst = std::numeric_limits<double>::infinity();
  return o;
}

// What judging a case needs besides the case.
struct Judge {
  const OpDef& op;
  const Generator& gen;
  Implementation canon;
  Implementation impl;
  bool against_eigen = false;
  Tolerance base;
  mutable Implementation f64;  // the canonical one in f64, made when first needed

  // The f64 canonical outputs of f32 inputs.

  TensorMap exact(const TensorMap& inputs, const ParamMap& params) const {
    if (!f64) f64 = canonical(op, DType::f64);
    TensorMap wide;
    for (auto& [name, t] : inputs) {
      Tensor d(t.dtype == DType::f32 ? DType::f64 : t.dtype, t.shape);
      for (int64_t e = 0; e < t.numel(); ++e) d.set(e, t.get(e));
      wide[name] = std::move(d);
    }
    // Rounded back to f32 (half an ulp), so that it compares with f32 outputs.
    TensorMap out = f64(wide, params);
    for (auto& [name, t] : out) {
      if (t.dtype != DType::f64) continue;
      Tensor narrow(DType::f32, t.shape);
      for (int64_t e = 0; e < t.numel(); ++e) narrow.set(e, t.get(e));
      t = std::move(narrow);
    }
    return out;
  }
};

// The largest |value| over the inputs: the magnitudes a case's tolerance widens with.
double magnitude(const TensorMap& inputs) {
  double m = 0.0;
  for (auto& [name, t] : inputs)
    for (int64_t e = 0; e < t.numel(); ++e)
      if (std::isfinite(t.get(e))) m = std::max(m, std::fabs(t.get(e)));
  return m;
}

// Runs `f` (`who`) on the case into `*out`. An exception it throws fails the case, blamed on
// `culprit`; a LimitError does not: it skips the case, and goes up.
std::optional<Outcome> run_or_fail(const Implementation& f, const TensorMap& inputs,
                                   const ParamMap& params, TensorMap* out, const char* culprit,
                                   const char* who) {
  try {
    *out = f(inputs, params);
  } catch (const LimitError&) {
    throw;
  } catch (const std::exception& e) {
    return fail(culprit, std::string(who) + " threw: " + e.what());
  }
  return std::nullopt;
}

Outcome judge(const Judge& j, const Case& c) {
  const OpDef& op = j.op;
  TensorMap inputs = j.gen.inputs(c);
  TensorMap expected;
  if (auto failed = run_or_fail(j.canon, inputs, c.params, &expected, "uops vs eigen",
                                "the canonical implementation"))
    return *failed;
  int64_t length = j.gen.reduction_length(c);
  bool transcendental = j.gen.description().transcendental;
  Outcome o;
  TensorMap truth;
  if (j.against_eigen) {
    truth = reference(op.name, inputs, c.params);
    Tolerance tol = widen(j.base, length, magnitude(inputs), transcendental);
    Comparison ref = compare(truth, expected, tol);
    // An ill-conditioned f32 case (the variance of values near 1000) is far from the f64
    // reference however right the description is: then the description is held to it in f64.
    if (!ref.ok && ref.problem.empty() && c.dtype == DType::f32)
      ref = compare(truth, j.exact(inputs, c.params), tol);
    o.reference =
        ref.problem.empty() ? ref.worst.scaled_error : std::numeric_limits<double>::infinity();
    if (!ref.ok) {
      o.ok = false;
      o.culprit = "uops vs eigen";
      o.cmp = ref;
      o.worst = ref.worst.scaled_error;
      return o;
    }
  } else if (c.dtype == DType::f32) {
    truth = j.exact(inputs, c.params);
  }
  TensorMap got;
  if (auto failed =
          run_or_fail(j.impl, inputs, c.params, &got, "implementation", "the implementation"))
    return *failed;
  o.cmp =
      compare(expected, got, widen(j.base, length, 0.0, false), truth.empty() ? nullptr : &truth);
  o.ok = o.cmp.ok;
  o.culprit = o.ok ? "" : "implementation";
  o.worst =
      o.cmp.problem.empty() ? o.cmp.worst.scaled_error : std::numeric_limits<double>::infinity();
  return o;
}

// The bytes a check of `c` holds at its peak, counted before the inputs are drawn: the inputs
// and the canonical outputs for the whole case, plus the largest of what one step holds beside
// them: the canonical run's temporaries; the Eigen reference (two f64 tensors per input for its
// copies, four per output for its intermediate results, and the outputs converted back: what
// layernorm, the most held of the ops measured, needs); the implementation's outputs and
// temporaries (taken to be as many as the canonical program's), beside the f32 truth it is
// compared with; for an f32 case, the canonical program in f64 (its inputs, outputs and
// temporaries widened, and the outputs narrowed back). Throws uops::LimitError past the memory
// budget, as binding a program does.
void check_memory(const Program& p, const Case& c, bool against_eigen) {
  TensorTypeMap types;
  for (int t : p.inputs())
    types[p.tensors[t].name] = {p.tensors[t].dtype, c.shapes.at(p.tensors[t].name)};
  Binding b = ir::bind(p, types, c.params);
  int64_t in = 0, out = 0, tmp = 0, in64 = 0, out64 = 0, tmp64 = 0;
  auto add = [](int64_t& sum, int64_t n, int64_t size) {
    int64_t bytes = 0;
    if (__builtin_mul_overflow(n, size, &bytes) || __builtin_add_overflow(sum, bytes, &sum))
      sum = INT64_MAX;
  };
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    int64_t n = 1;
    for (int64_t d : b.shapes[t])
      if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
    int64_t size = dtype_size(p.tensors[t].dtype);
    switch (p.tensors[t].role) {
      case Role::input:
        add(in, n, size), add(in64, n, 8);
        break;
      case Role::output:
        add(out, n, size), add(out64, n, 8);
        break;
      default:
        add(tmp, n, size), add(tmp64, n, 8);
    }
  }
  bool f32 = c.dtype == DType::f32;
  int64_t truth = against_eigen || f32 ? out : 0;
  int64_t reference = 0, exact = 0, impl = 0, step = 0, total = 0;
  if (against_eigen) add(reference, 2, in64), add(reference, 4, out64), add(reference, 1, out);
  if (f32) {
    if (against_eigen) add(exact, 1, out);
    add(exact, 1, in64), add(exact, 1, out64), add(exact, 1, tmp64), add(exact, 1, out);
  }
  add(impl, 1, truth), add(impl, 1, out), add(impl, 1, tmp);
  step = std::max({tmp, reference, exact, impl});
  add(total, 1, in), add(total, 1, out), add(total, 1, step);
  int64_t budget = memory_budget();
  if (total > budget)
    throw LimitError("checking it holds " + byte_size_text(total) +
                     " (inputs, expected and actual outputs, temporaries" +
                     (against_eigen ? ", the f64 reference" : "") +
                     "), past the memory budget of " + byte_size_text(budget) +
                     " (raise it with UOPS_MEMORY_BUDGET, e.g. UOPS_MEMORY_BUDGET=64G)");
}

Outcome run_case(const Judge& j, const Program& program, const Case& c) {
  try {
    check_memory(program, c, j.against_eigen);
    return judge(j, c);
  } catch (const LimitError& e) {
    Outcome o;
    o.too_large = true;
    o.limit = e.what();
    return o;
  }
}

// `s` as one shell word: as it is when it holds nothing the shell reads, else single-quoted.
std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char ch : s)
    plain &= std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("_-./=,:@%+", ch);
  if (plain) return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

// uopc can rerun the case only on its own backends, and only for an op it can load.
std::string repro_command(const OpDef& op, const std::string& backend, const Case& c) {
  auto& all = backends();
  if (std::none_of(all.begin(), all.end(), [&](const Backend& b) { return b.name == backend; }))
    return "";
  std::string cmd = "uopc";
  if (op.origin == OpOrigin::library) {
    cmd += " --ops " + shell_word(op.library);
  } else if (op.origin != OpOrigin::builtin) {
    return "";
  }
  cmd += " check " + shell_word(op.name) + " --backend " + shell_word(backend) + " --dtype " +
         dtype_name(c.dtype) + " --seed " + std::to_string(c.seed) + " --trials 1";
  for (auto& [name, dims] : c.shapes) cmd += " --shape " + shell_word(shapes_text({{name, dims}}));
  for (auto& [name, v] : c.params) cmd += " --param " + shell_word(name + "=" + std::to_string(v));
  return cmd;
}

// The case UOPS_ORACLE_REPLAY holds when it is one of `op`'s in `dtype`: a replay printed by an
// f32 check must not be forced on the f64 one.
std::optional<Case> replay_from_environment(const OpDef& op, DType dtype) {
  const char* text = std::getenv("UOPS_ORACLE_REPLAY");
  if (!text) return std::nullopt;
  std::istringstream is(text);
  std::string name, type;
  is >> name >> type;
  if (name != op.name || type != dtype_name(dtype)) return std::nullopt;
  return parse_case(op, text);
}

std::optional<FailureDb> open_database(const OpDef& op, const CheckOptions& options) {
  std::string dir = options.database;
  if (const char* env = std::getenv("UOPS_ORACLE_DB"); dir.empty() && env) dir = env;
  if (dir.empty()) return std::nullopt;
  return FailureDb(dir, op, options.backend);
}

}  // namespace

Implementation canonical(const OpDef& op, DType dtype) {
  std::shared_ptr<Executable> exe = make_interpreter(forward_program(op, dtype));
  return
      [exe](const TensorMap& inputs, const ParamMap& params) { return exe->run(inputs, params); };
}

CheckReport check(const OpDef& op, const Implementation& impl, const CheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  if (options.trials < 1 && !options.only)
    throw Error("oracle::check: trials must be at least 1, not " + std::to_string(options.trials));
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards)
    throw Error("oracle::check: shard " + std::to_string(options.shard) + " of " +
                std::to_string(options.shards) + " does not exist (0 <= shard < shards)");
  memory_budget();  // a malformed UOPS_MEMORY_BUDGET is the caller's error, not every case's
  CheckReport r;
  r.op = op.name;
  r.backend = options.backend;
  r.dtype = options.only ? options.only->dtype : options.dtype;
  r.seed = options.seed;
  r.shard = options.shard;
  r.shards = options.shards;
  r.has_reference =
      options.against_eigen && op.origin == OpOrigin::builtin && has_reference(op.name);
  Generator gen(op, r.dtype, options.max_elements, options.max_axis);
  auto own = op.tolerance.find(r.dtype);
  Tolerance base = options.tolerance           ? *options.tolerance
                   : own != op.tolerance.end() ? own->second
                                               : tolerance(r.dtype);
  Judge j{op, gen, canonical(op, r.dtype), impl, r.has_reference, base, nullptr};
  Program program = forward_program(op, r.dtype);

  // The cases: a given one alone; else the replayed ones, then this shard's random trials.
  std::vector<Case> first;
  std::vector<FailureDb::Entry> stored;
  std::optional<FailureDb> db;
  std::vector<int> trials;
  if (options.only) {
    // Through the generator, which checks the case and derives its sizes (shrinking needs them).
    first.push_back(gen.fixed(options.only->seed, options.only->shapes, options.only->params));
  } else {
    if (std::optional<Case> c = replay_from_environment(op, r.dtype)) {
      first.push_back(*c);
      r.notes.push_back("replayed UOPS_ORACLE_REPLAY='" + case_text(*c) +
                        "' before the random cases (unset it when done)");
    }
    db = open_database(op, options);
    if (db) {
      stored = db->load(r.dtype, r.notes);
      for (auto& e : stored) first.push_back(e.c);
      if (!stored.empty())
        r.notes.push_back("replayed " + std::to_string(stored.size()) +
                          " case(s) from the failure database " + db->dir().string() + " first");
    }
    for (int t = 0; t < options.trials; ++t)
      if (t % options.shards == options.shard) trials.push_back(t);
  }
  size_t from_db = first.size() - stored.size();  // first[from_db + k] is stored[k]
  int total = int(first.size() + trials.size());
  std::set<std::string> seen;
  for (int i = 0; i < total; ++i) {
    bool replayed = size_t(i) < first.size();
    int redrawn = 0;
    int trial = replayed ? 0 : trials[i - first.size()];
    Case c = replayed ? first[i] : gen.random(trial_seed(options.seed, trial), trial, &redrawn);
    r.redrawn += redrawn;
    seen.insert(shapes_text(c.shapes) + " " + params_text(c.params));
    Outcome o = run_case(j, program, c);
    if (options.progress) options.progress(i + 1, total);
    if (o.too_large) {
      if (options.only)
        throw LimitError(op.name + ": the case " + case_text(c) +
                         " is too large to run: " + o.limit);
      if (replayed) r.notes.push_back("replayed case " + case_text(c) + " skipped: " + o.limit);
      ++r.skipped;
      continue;
    }
    ++r.cases;
    r.replayed += replayed && !options.only;
    r.worst_error = std::max(r.worst_error, o.worst);
    r.reference_error = std::max(r.reference_error, o.reference);
    if (o.ok) {
      if (db && replayed && size_t(i) >= from_db) db->record_pass(stored[i - from_db]);
      continue;
    }
    r.passed = false;
    r.culprit = o.culprit;
    r.original = c;
    // Greedy shrinking: take the first smaller case that still fails the same way. Candidates
    // are never larger than the case they shrink, and one too large to run is passed over.
    Case best = c;
    for (bool progress = options.shrink; progress;) {
      progress = false;
      for (const Case& n : gen.shrink(best)) {
        Outcome m = run_case(j, program, n);
        if (!m.too_large && !m.ok && m.culprit == o.culprit) {
          best = n;
          o = m;
          progress = true;
          break;
        }
      }
    }
    r.shrunk = best;
    r.mismatch = o.cmp;
    r.error = o.error;
    r.replay = case_text(best);
    if (options.uopc_backend) r.repro = repro_command(op, options.backend, best);
    if (db) db->record_failure(best);
    break;
  }
  r.distinct = int(seen.size());
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

CheckReport replay(const OpDef& op, const Implementation& impl, const std::string& text,
                   CheckOptions options) {
  options.only = parse_case(op, text);
  options.dtype = options.only->dtype;
  return check(op, impl, options);
}

bool CheckReport::mostly_invalid() const {
  // Two in three: conv2d's own ranges leave half its draws invalid (a kernel past the image).
  return redrawn > 2 * (cases + skipped);
}

std::string CheckReport::message() const {
  std::ostringstream os;
  os << op << " on " << (backend.empty() ? "the implementation" : backend) << " ("
     << dtype_name(dtype) << "): ";
  std::string noted;
  for (auto& n : notes) noted += "  note: " + n + "\n";
  if (passed) {
    os << cases << " cases passed (" << distinct << " distinct shapes";
    if (redrawn) os << ", " << redrawn << " draws redrawn as invalid";
    os << ")";
    if (skipped) os << " (" << skipped << " too large to run, skipped)";
    os << "; worst error " << worst_error << " x the tolerance";
    if (has_reference) os << ", uops vs Eigen " << reference_error << " x";
    if (shards > 1) os << " (shard " << shard << " of " << shards << ")";
    os << "\n";
    if (mostly_invalid())
      os << "  warning: most random draws were invalid (" << redrawn << " of "
         << redrawn + cases + skipped
         << "); declare the parameters' ranges (param_ranges) or the op's rule (invalid)\n";
    os << noted;
    return os.str();
  }
  os << (culprit == "uops vs eigen" ? "the uop description disagrees with the Eigen reference"
                                    : "the implementation disagrees with the uop description")
     << " at case " << cases << " (seed " << original.seed << ")\n";
  auto text = [](const Case& c) {
    return shapes_text(c.shapes) + (c.params.empty() ? "" : " ") + params_text(c.params);
  };
  os << "  case:   " << text(original) << "\n";
  os << "  shrunk: " << text(shrunk) << "\n";
  if (!error.empty()) {
    os << "  " << error << "\n";
  } else if (!mismatch.problem.empty()) {
    os << "  " << mismatch.problem << "\n";
  } else {
    const Mismatch& w = mismatch.worst;
    os << "  worst element: " << w.output << index_text(w.index) << " expected "
       << format_double(w.expected) << " got " << format_double(w.got) << " (error "
       << format_double(w.abs_error) << ", " << format_double(w.scaled_error)
       << " x the tolerance)\n";
  }
  os << "  replay: oracle::replay(op, impl, \"" << replay << "\"), or rerun the test with "
     << "UOPS_ORACLE_REPLAY='" << replay << "'\n";
  if (!repro.empty()) os << "  reproduce: " << repro << "\n";
  os << noted;
  return os.str();
}

}  // namespace uops::oracle
