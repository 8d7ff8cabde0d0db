// uopc check: the randomized oracle over ops, backends and dtypes, with a progress line on a
// terminal and a summary table; any failure prints its shrunk case and reproduction command.
#include <unistd.h>

#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>
#include <sstream>
#include <tuple>

#include "commands.h"
#include "reports.h"
#include "uops/backends/backends.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/error.h"
#include "uops/ir/memory_budget.h"
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
      std::optional<int64_t> v = parse_integer(d);
      if (!v || *v < 0) throw Error("--shape " + item + ": '" + d + "' is not a size");
      sizes.push_back(*v);
    }
    shapes[name] = sizes;
  }
  return shapes;
}

// "K/N" with 0 <= K < N.
std::pair<int, int> parse_shard(const std::string& text) {
  size_t slash = text.find('/');
  auto number = [](const std::string& s) -> int64_t {
    std::optional<int64_t> v = parse_integer(s);
    return v && s[0] != '-' && s[0] != '+' ? *v : -1;
  };
  int64_t k = slash == std::string::npos ? -1 : number(text.substr(0, slash));
  int64_t n = slash == std::string::npos ? -1 : number(text.substr(slash + 1));
  if (k < 0 || n < 1 || k >= n || n > 1000000)
    throw Error("--shard " + text + ": expected K/N with 0 <= K < N (like 0/4 ... 3/4)");
  return {int(k), int(n)};
}

// A report file is written only after the whole run: refuse a path that cannot take it first.
void check_output_path(const std::string& path, const char* option) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(std::string(option) + " " + path + ": is a folder");
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    throw Error(std::string(option) + " " + path + ": no folder " + parent.string());
}

void write_reports(const nlohmann::json& doc, const std::string& json, const std::string& junit) {
  if (!json.empty()) write_atomically(json, doc.dump(2) + "\n");
  if (!junit.empty()) write_atomically(junit, junit_xml(doc));
}

}  // namespace

std::vector<DType> dtypes_named(const std::string& name) {
  if (name == "all") return {DType::f32, DType::f64};
  return {dtype_from_name(name)};
}

oracle::CheckOptions check_options(DType dtype, int trials, uint64_t seed,
                                   const std::string& backend) {
  oracle::CheckOptions o;
  o.dtype = dtype;
  o.trials = trials;
  o.seed = seed;
  o.backend = backend;
  return o;
}

int check(const CheckArgs& a) {
  if (!a.memory_budget.empty()) set_memory_budget(parse_byte_size(a.memory_budget));
  memory_budget();  // a malformed UOPS_MEMORY_BUDGET is said once, here
  Campaign campaign{a.seed, a.trials, 0, 1};
  if (!a.shard.empty()) std::tie(campaign.shard, campaign.shards) = parse_shard(a.shard);
  if (!a.json.empty()) check_output_path(a.json, "--json");
  if (!a.junit.empty()) check_output_path(a.junit, "--junit");
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
  std::vector<DType> dtypes = dtypes_named(a.dtype);
  bool replay = !a.shapes.empty() || !a.params.empty();
  if (replay && ops.size() != 1) throw Error("--shape and --param replay a case of one op");
  if (replay && campaign.shards > 1) throw Error("--shard splits random cases, not a replay");
  oracle::Shapes shapes = parse_shapes(a.shapes);
  ParamMap params = parse_params(a.params);

  bool tty = ::isatty(STDERR_FILENO);
  std::vector<oracle::CheckReport> reports;
  for (const OpDef* op : ops)
    for (auto& backend : backends)
      for (DType dtype : dtypes) {
        oracle::CheckOptions o = check_options(dtype, a.trials, a.seed, backend);
        o.uopc_backend = true;
        o.shard = campaign.shard;
        o.shards = campaign.shards;
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

  nlohmann::json doc = reports_json(campaign, reports);
  write_reports(doc, a.json, a.junit);
  return print_summary(doc) ? 1 : 0;
}

int merge_reports(const MergeArgs& a) {
  if (!a.json.empty()) check_output_path(a.json, "--json");
  if (!a.junit.empty()) check_output_path(a.junit, "--junit");
  std::vector<nlohmann::json> docs;
  for (auto& path : a.reports) docs.push_back(read_reports(path));
  nlohmann::json merged = tools::merge_reports(docs);
  write_reports(merged, a.json, a.junit);
  return print_summary(merged) ? 1 : 0;
}

}  // namespace uops::tools
