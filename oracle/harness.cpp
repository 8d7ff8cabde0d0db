#include "uops/oracle/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <set>
#include <sstream>

#include "uops/backends/backends.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/printer.h"
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

Outcome judge(const Judge& j, const Case& c) {
  const OpDef& op = j.op;
  TensorMap inputs = j.gen.inputs(c);
  TensorMap expected;
  try {
    expected = j.canon(inputs, c.params);
  } catch (const LimitError&) {
    throw;
  } catch (const std::exception& e) {
    return fail("uops vs eigen", std::string("the canonical implementation threw: ") + e.what());
  }
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
  try {
    got = j.impl(inputs, c.params);
  } catch (const LimitError&) {
    throw;
  } catch (const std::exception& e) {
    return fail("implementation", std::string("the implementation threw: ") + e.what());
  }
  o.cmp =
      compare(expected, got, widen(j.base, length, 0.0, false), truth.empty() ? nullptr : &truth);
  o.ok = o.cmp.ok;
  o.culprit = o.ok ? "" : "implementation";
  o.worst =
      o.cmp.problem.empty() ? o.cmp.worst.scaled_error : std::numeric_limits<double>::infinity();
  return o;
}

Outcome run_case(const Judge& j, const Case& c) {
  try {
    return judge(j, c);
  } catch (const LimitError& e) {
    Outcome o;
    o.too_large = true;
    o.limit = e.what();
    return o;
  }
}

// uopc can rerun the case only on its own backends, and only for an op it can load.
std::string repro_command(const OpDef& op, const std::string& backend, const Case& c) {
  auto& all = backends();
  if (std::none_of(all.begin(), all.end(), [&](const Backend& b) { return b.name == backend; }))
    return "";
  std::string cmd = "uopc";
  if (op.origin == OpOrigin::library) {
    cmd += " --ops " + op.library;
  } else if (op.origin != OpOrigin::builtin) {
    return "";
  }
  cmd += " check " + op.name + " --backend " + backend + " --dtype " + dtype_name(c.dtype) +
         " --seed " + std::to_string(c.seed) + " --trials 1";
  for (auto& [name, dims] : c.shapes) cmd += " --shape " + shapes_text({{name, dims}});
  for (auto& [name, v] : c.params) cmd += " --param " + name + "=" + std::to_string(v);
  return cmd;
}

// The case UOPS_ORACLE_REPLAY holds when it is one of `op`'s.
std::optional<Case> replay_from_environment(const OpDef& op) {
  const char* text = std::getenv("UOPS_ORACLE_REPLAY");
  if (!text) return std::nullopt;
  std::istringstream is(text);
  std::string name;
  is >> name;
  if (name != op.name) return std::nullopt;
  return parse_case(op, text);
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
  std::optional<Case> only = options.only ? options.only : replay_from_environment(op);
  CheckReport r;
  r.op = op.name;
  r.backend = options.backend;
  r.dtype = only ? only->dtype : options.dtype;
  r.has_reference =
      options.against_eigen && op.origin == OpOrigin::builtin && has_reference(op.name);
  Generator gen(op, r.dtype, options.max_elements, options.max_axis);
  auto own = op.tolerance.find(r.dtype);
  Tolerance base = options.tolerance           ? *options.tolerance
                   : own != op.tolerance.end() ? own->second
                                               : tolerance(r.dtype);
  Judge j{op, gen, canonical(op, r.dtype), impl, r.has_reference, base, nullptr};
  int total = only ? 1 : options.trials;
  std::set<std::string> seen;
  for (int i = 0; i < total; ++i) {
    int redrawn = 0;
    Case c = only ? *only : gen.random(trial_seed(options.seed, i), i, &redrawn);
    r.redrawn += redrawn;
    seen.insert(shapes_text(c.shapes) + " " + params_text(c.params));
    Outcome o = run_case(j, c);
    if (options.progress) options.progress(i + 1, total);
    if (o.too_large) {
      if (only)
        throw LimitError(op.name + ": the case " + case_text(c) +
                         " is too large to run: " + o.limit);
      ++r.skipped;
      continue;
    }
    ++r.cases;
    r.worst_error = std::max(r.worst_error, o.worst);
    r.reference_error = std::max(r.reference_error, o.reference);
    if (o.ok) continue;
    r.passed = false;
    r.culprit = o.culprit;
    r.original = c;
    // Greedy shrinking: take the first smaller case that still fails the same way. Candidates
    // are never larger than the case they shrink, and one too large to run is passed over.
    Case best = c;
    for (bool progress = options.shrink; progress;) {
      progress = false;
      for (const Case& n : gen.shrink(best)) {
        Outcome m = run_case(j, n);
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
    r.repro = repro_command(op, options.backend, best);
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
  if (passed) {
    os << cases << " cases passed (" << distinct << " distinct shapes";
    if (redrawn) os << ", " << redrawn << " draws redrawn as invalid";
    os << ")";
    if (skipped) os << " (" << skipped << " too large to run, skipped)";
    os << "; worst error " << worst_error << " x the tolerance";
    if (has_reference) os << ", uops vs Eigen " << reference_error << " x";
    os << "\n";
    if (mostly_invalid())
      os << "  warning: most random draws were invalid (" << redrawn << " of "
         << redrawn + cases + skipped
         << "); declare the parameters' ranges (param_ranges) or the op's rule (invalid)\n";
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
  return os.str();
}

}  // namespace uops::oracle
