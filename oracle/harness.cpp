#include "uops/oracle/harness.h"

#include <chrono>
#include <limits>
#include <memory>
#include <sstream>

#include "uops/backends/interpreter.h"
#include "uops/ir/printer.h"
#include "uops/oracle/reference.h"

namespace uops::oracle {

namespace {

struct Outcome {
  bool ok = true;
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

Outcome run_case(const OpDef& op, const Case& c, const Implementation& canon,
                 const Implementation& impl, bool against_eigen) {
  TensorMap inputs = make_inputs(op, c);
  TensorMap expected;
  try {
    expected = canon(inputs, c.params);
  } catch (const std::exception& e) {
    return fail("uops vs eigen", std::string("the canonical implementation threw: ") + e.what());
  }
  Outcome o;
  if (against_eigen) {
    Comparison ref = compare(reference(op.name, inputs, c.params), expected, c.dtype);
    o.reference =
        ref.problem.empty() ? ref.worst.scaled_error : std::numeric_limits<double>::infinity();
    if (!ref.ok) {
      o.ok = false;
      o.culprit = "uops vs eigen";
      o.cmp = ref;
      o.worst = ref.worst.scaled_error;
      return o;
    }
  }
  TensorMap got;
  try {
    got = impl(inputs, c.params);
  } catch (const std::exception& e) {
    return fail("implementation", std::string("the implementation threw: ") + e.what());
  }
  o.cmp = compare(expected, got, c.dtype);
  o.ok = o.cmp.ok;
  o.culprit = o.ok ? "" : "implementation";
  o.worst =
      o.cmp.problem.empty() ? o.cmp.worst.scaled_error : std::numeric_limits<double>::infinity();
  return o;
}

std::string repro_command(const CheckReport& r, const Case& c) {
  std::string cmd = "uopc check " + r.op + " --backend " + r.backend + " --dtype " +
                    dtype_name(c.dtype) + " --seed " + std::to_string(c.seed) + " --trials 1";
  for (auto& [name, dims] : c.shapes) cmd += " --shape " + shapes_text({{name, dims}});
  for (auto& [name, v] : c.params) cmd += " --param " + name + "=" + std::to_string(v);
  return cmd;
}

}  // namespace

Implementation canonical(const OpDef& op, DType dtype) {
  std::shared_ptr<Executable> exe = make_interpreter(forward_program(op, dtype));
  return
      [exe](const TensorMap& inputs, const ParamMap& params) { return exe->run(inputs, params); };
}

CheckReport check(const OpDef& op, const Implementation& impl, const CheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  CheckReport r;
  r.op = op.name;
  r.backend = options.backend;
  r.dtype = options.dtype;
  Implementation canon = canonical(op, options.dtype);
  int total = options.only ? 1 : options.trials;
  for (int i = 0; i < total; ++i) {
    Case c = options.only ? *options.only : random_case(op, options.dtype, options.seed + i);
    Outcome o = run_case(op, c, canon, impl, options.against_eigen);
    ++r.cases;
    r.worst_error = std::max(r.worst_error, o.worst);
    r.reference_error = std::max(r.reference_error, o.reference);
    if (options.progress) options.progress(i + 1, total);
    if (o.ok) continue;
    r.passed = false;
    r.culprit = o.culprit;
    r.original = c;
    // Greedy shrinking: take the first smaller case that still fails the same way.
    Case best = c;
    for (bool progress = options.shrink; progress;) {
      progress = false;
      for (const Case& n : shrink_candidates(op, best)) {
        Outcome m = run_case(op, n, canon, impl, options.against_eigen);
        if (!m.ok && m.culprit == o.culprit) {
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
    r.repro = repro_command(r, best);
    break;
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string CheckReport::message() const {
  std::ostringstream os;
  os << op << " on " << backend << " (" << dtype_name(dtype) << "): ";
  if (passed) {
    os << cases << " cases passed; worst error " << worst_error
       << " x the tolerance, uops vs Eigen " << reference_error << " x\n";
    return os.str();
  }
  os << (culprit == "uops vs eigen" ? "the uop description disagrees with the Eigen reference"
                                    : "the implementation disagrees with the uop description")
     << " at case " << cases << " (seed " << original.seed << ")\n";
  os << "  case:   " << shapes_text(original.shapes) << " " << params_text(original.params) << "\n";
  os << "  shrunk: " << shapes_text(shrunk.shapes) << " " << params_text(shrunk.params) << "\n";
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
  os << "  reproduce: " << repro << "\n";
  return os.str();
}

}  // namespace uops::oracle
