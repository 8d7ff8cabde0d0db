// uopc check: the randomized oracle over ops, backends and dtypes, with a progress line on a
// terminal and a summary table; any failure prints its shrunk case and reproduction command.
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <memory>
#include <sstream>

#include "commands.h"
#include "uops/backends/backends.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/error.h"
#include "uops/ops/op_gradient.h"
#include "uops/oracle/harness.h"
#include "uops/passes/pipeline.h"

namespace uops::tools {

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

oracle::Shapes parse_shapes(const std::vector<std::string>& items) {
  oracle::Shapes shapes;
  for (auto& item : items) {
    auto [name, dims] = split_assignment(item, "--shape");
    std::vector<int64_t> sizes;
    for (auto& d : split_list(dims)) {
      size_t used = 0;
      int64_t v = -1;
      try {
        v = std::stoll(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != d.size() || v < 0) throw Error("--shape " + item + ": '" + d + "' is not a size");
      sizes.push_back(v);
    }
    shapes[name] = sizes;
  }
  return shapes;
}

}  // namespace

int check(const CheckArgs& a) {
  std::vector<const OpDef*> ops;
  std::deque<OpDef> gradients;  // grad:OP, the gradient of OP as an op
  for (auto& name : a.ops) {
    if (name.rfind("grad:", 0) == 0) {
      gradients.push_back(gradient_op(find_op(name.substr(5))));
      ops.push_back(&gradients.back());
    } else {
      ops.push_back(&find_op(name));
    }
  }
  if (ops.empty())
    for (auto& op : all_ops()) ops.push_back(&op);
  std::vector<std::string> available = available_backends();
  std::vector<std::string> backends = a.backends.empty() ? available : split_list(a.backends);
  if (backends.empty()) throw Error("--backend: no backend named");
  if (a.backends.empty() && cuda_unavailable_reason().size())
    std::fprintf(stderr, "uopc: cuda not checked: %s\n", cuda_unavailable_reason().c_str());
  for (auto& b : backends)
    if (std::find(available.begin(), available.end(), b) == available.end()) {
      make_backend(b, forward_program(*ops.front(), DType::f32));  // throws, saying why
      throw Error("backend '" + b + "' cannot run here");
    }
  std::vector<DType> dtypes = a.dtype == "all" ? std::vector<DType>{DType::f32, DType::f64}
                                               : std::vector<DType>{dtype_from_name(a.dtype)};
  bool replay = !a.shapes.empty() || !a.params.empty();
  if (replay && ops.size() != 1) throw Error("--shape and --param replay a case of one op");
  oracle::Shapes shapes = parse_shapes(a.shapes);
  ParamMap params = parse_params(a.params);

  bool tty = ::isatty(STDERR_FILENO);
  std::vector<oracle::CheckReport> reports;
  for (const OpDef* op : ops)
    for (auto& backend : backends)
      for (DType dtype : dtypes) {
        oracle::CheckOptions o;
        o.dtype = dtype;
        o.trials = a.trials;
        o.seed = a.seed;
        o.backend = backend;
        if (replay) o.only = oracle::fixed_case(*op, dtype, a.seed, shapes, params);
        if (tty)
          o.progress = [&](int done, int total) {
            std::fprintf(stderr, "\r\033[K%-18s %-6s %s  %d/%d", op->name.c_str(), backend.c_str(),
                         dtype_name(dtype), done, total);
          };
        std::shared_ptr<Executable> exe =
            make_backend(backend, optimize(forward_program(*op, dtype)));
        reports.push_back(oracle::check(
            *op, [exe](const TensorMap& in, const ParamMap& p) { return exe->run(in, p); }, o));
      }
  if (tty) std::fprintf(stderr, "\r\033[K");

  int failures = 0;
  double total_seconds = 0;
  std::printf("%-18s %-7s %-5s %6s %12s %12s %9s  %s\n", "op", "backend", "dtype", "cases",
              "worst error", "uops/eigen", "time", "result");
  for (auto& r : reports) {
    failures += !r.passed;
    total_seconds += r.seconds;
    char reference[32] = "-";  // a user's op has no Eigen reference
    if (r.has_reference) std::snprintf(reference, sizeof reference, "%.3g", r.reference_error);
    std::printf("%-18s %-7s %-5s %6d %12.3g %12s %8.3fs  %s\n", r.op.c_str(), r.backend.c_str(),
                dtype_name(r.dtype), r.cases, r.worst_error, reference, r.seconds,
                r.passed ? "pass" : "FAIL");
  }
  std::printf("%zu checks, %d failed, %.2fs (errors are in units of the tolerance)\n",
              reports.size(), failures, total_seconds);
  for (auto& r : reports)
    if (!r.passed) std::printf("\n%s", r.message().c_str());
  return failures ? 1 : 0;
}

}  // namespace uops::tools
