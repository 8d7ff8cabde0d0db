// uopc check-kernel: a hand-written CUDA kernel (a .cu file) checked against an op on random
// cases, on the GPU where there is one and on the CPU emulation otherwise (docs/cuda-kernels.md).
#include <fstream>
#include <sstream>

#include "backends/c/c_compiler.h"
#include "commands.h"
#include "reports.h"
#include "uops/error.h"
#include "uops/oracle/cuda_kernel.h"

namespace uops::tools {

namespace {

std::string read_source(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("--cuda " + path + ": cannot read it");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The command that reruns the report's shrunk case on the same file.
std::string replay_command(const CheckKernelArgs& a, const std::string& dtype,
                           const std::string& case_text) {
  std::string s = "uopc";
  for (const std::string& lib : a.op_libraries) s += " --ops " + cgen::shell_quote(lib);
  s += " check-kernel " + cgen::shell_quote(a.op) + " --cuda " + cgen::shell_quote(a.file) +
       " --entry " + cgen::shell_quote(a.entry) + " --args " + cgen::shell_quote(a.args) +
       " --grid " + cgen::shell_quote(a.grid) + " --block " + cgen::shell_quote(a.block);
  if (a.shared != "0") s += " --shared " + cgen::shell_quote(a.shared);
  if (a.target != "auto") s += " --target " + a.target;
  return s + " --dtype " + dtype + " --replay " + cgen::shell_quote(case_text);
}

}  // namespace

int check_kernel(const CheckKernelArgs& a) {
  oracle::CudaKernel k;
  k.source = read_source(a.file);
  k.file = a.file;
  k.entry = a.entry;
  std::stringstream args(a.args);
  for (std::string item; std::getline(args, item, ',');) k.args.push_back(item);
  k.grid = a.grid;
  k.block = a.block;
  k.shared_bytes = a.shared;
  oracle::CudaTarget target = a.target == "device"      ? oracle::CudaTarget::device
                              : a.target == "emulation" ? oracle::CudaTarget::emulation
                                                        : oracle::CudaTarget::automatic;
  const OpDef& op = find_op(a.op);
  std::string why;
  std::string where = oracle::cuda_kernel_backend(target, &why);
  if (!why.empty())
    std::fprintf(stderr, "uopc: no GPU (%s): the kernel runs on the emulation\n", why.c_str());
  std::vector<DType> dtypes = dtypes_named(a.dtype);
  oracle::Implementation impl = oracle::cuda_kernel(op, k, target);
  std::vector<oracle::CheckReport> reports;
  for (DType dtype : dtypes) {
    oracle::CheckOptions o = check_options(dtype, a.trials, a.seed, where);
    oracle::CheckReport r =
        a.replay.empty() ? oracle::check(op, impl, o) : oracle::replay(op, impl, a.replay, o);
    if (!r.passed && !r.replay.empty()) r.repro = replay_command(a, dtype_name(dtype), r.replay);
    reports.push_back(std::move(r));
  }
  nlohmann::json doc = reports_json(Campaign{a.seed, a.trials, 0, 1}, reports);
  if (!a.json.empty()) write_atomically(a.json, doc.dump(2) + "\n");
  return print_summary(doc) ? 1 : 0;
}

}  // namespace uops::tools
