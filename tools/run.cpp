// uopc run: an op (or its gradient) on .npy files. Everything is validated and computed before
// the first output is written, and each output goes to a temporary name that is renamed into
// place only when all of them are written, so a failed run leaves no output file.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "backends/kernel_cache.h"
#include "commands.h"
#include "npy.h"
#include "uops/backends/backends.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/memory_budget.h"
#include "uops/passes/pipeline.h"

namespace uops::tools {

using namespace ir;

namespace {

// The float type the given inputs agree on; index inputs must be i32.
DType input_dtype(const OpDef& op, const TensorMap& given) {
  std::set<std::string> index_inputs;
  for (auto& i : op.inputs)
    if (i.is_index) index_inputs.insert(i.name);
  std::string first;
  DType dtype = DType::f32;
  for (auto& [name, t] : given) {
    if (index_inputs.count(name)) {
      if (t.dtype != DType::i32)
        throw Error("input '" + name + "' must be i32 (<i4), not " + dtype_name(t.dtype));
      continue;
    }
    if (!is_float(t.dtype))
      throw Error("input '" + name + "' must be f32 or f64, not " +
                  std::string(dtype_name(t.dtype)));
    if (first.empty()) {
      first = name;
      dtype = t.dtype;
    } else if (t.dtype != dtype) {
      throw Error("input '" + name + "' is " + dtype_name(t.dtype) + " but '" + first + "' is " +
                  dtype_name(dtype) + "; all float inputs must have one dtype");
    }
  }
  if (first.empty()) throw Error(op.name + ": no float input given");
  return dtype;
}

}  // namespace

int run(const RunArgs& a) {
  const OpDef& op = find_op(a.op);
  ParamMap params = parse_params(a.params);
  // The inputs count against the budget too: each is refused before its data is read when it
  // would take more than what the ones before it left.
  if (!a.memory_budget.empty()) set_memory_budget(parse_byte_size(a.memory_budget));
  int64_t left = memory_budget();
  TensorMap given;
  for (auto& item : a.inputs) {
    auto [name, path] = split_assignment(item, "--in");
    if (given.count(name)) throw Error("--in " + name + " is given twice");
    Tensor& t = given[name] = npy::read(path, left);
    left -= int64_t(t.bytes.size());
  }
  std::map<std::string, std::string> outputs;
  for (auto& item : a.outputs) {
    auto [name, path] = split_assignment(item, "--out");
    if (!outputs.emplace(name, path).second) throw Error("--out " + name + " is given twice");
  }
  Program p = op_program(op, input_dtype(op, given), a.grad);
  Shapes shapes;
  for (auto& i : op.inputs)
    if (given.count(i.name)) shapes[i.name] = given.at(i.name).shape;
  check_valid(op, shapes, params);

  // The program's inputs must all be given; forward inputs its gradient does not read may be.
  std::set<std::string> known;
  for (auto& i : op.inputs) known.insert(i.name);
  TensorMap inputs;
  for (int t : p.inputs()) {
    const std::string& name = p.tensors[t].name;
    known.insert(name);
    auto it = given.find(name);
    if (it == given.end()) throw Error("missing input '" + name + "' (--in " + name + "=FILE.npy)");
    inputs[name] = std::move(it->second);  // held once
  }
  for (auto& [name, t] : given)
    if (!known.count(name)) throw Error("'" + name + "' is not an input of " + op.name);
  std::string names;
  for (int t : p.outputs()) names += (names.empty() ? "" : ", ") + p.tensors[t].name;
  for (auto& [name, path] : outputs)
    if (p.find_tensor(name) < 0 || p.tensors[p.find_tensor(name)].role != Role::output)
      throw Error("--out " + name + ": " + op.name + (a.grad ? " --grad" : "") +
                  " has no output '" + name + "'; its outputs are: " + names);

  TensorMap result = make_backend(a.backend, optimize(p))->run(inputs, params);

  // Each output goes to a temporary created exclusively beside it (a file or link planted at a
  // predictable name is never followed); only when all are written are they renamed into place,
  // and on any failure every temporary left is removed.
  std::vector<std::pair<std::filesystem::path, std::string>> written;  // temporary, final
  auto remove_temporaries = [&](size_t from) {
    for (size_t i = from; i < written.size(); ++i) ::unlink(written[i].first.c_str());
  };
  try {
    for (auto& [name, path] : outputs)
      written.emplace_back(write_temporary(path, npy::encode(result.at(name)), 0666), path);
  } catch (...) {
    remove_temporaries(0);
    throw;
  }
  for (size_t i = 0; i < written.size(); ++i) {
    if (std::rename(written[i].first.c_str(), written[i].second.c_str()) != 0) {
      int err = errno;
      remove_temporaries(i);
      throw Error(written[i].second + ": cannot rename into place: " + std::strerror(err));
    }
  }
  return 0;
}

}  // namespace uops::tools
