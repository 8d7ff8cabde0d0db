#include "backends/scheduled/bound_chain.h"

#include <algorithm>

#include "backends/scheduled/chain_binding.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/analysis.h"

namespace uops {

using namespace ir;

namespace chain {

std::vector<std::string> bound_names(const ChainStep& step) {
  const Program& p = step.program;
  std::vector<std::string> names(p.tensors.size());
  std::set<std::string> seen;
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TensorInfo& info = p.tensors[t];
    if (info.role == Role::temporary) continue;
    auto it = step.buffers.find(info.name);
    names[t] = it == step.buffers.end() ? info.name : it->second;
    if (!seen.insert(names[t]).second)
      throw Error("step '" + step.label + "' binds two tensors to buffer '" + names[t] +
                  "' (a program cannot write what it reads, nor one tensor twice)");
  }
  return names;
}

void reads_and_writes(const Block& b, std::set<int>& reads, std::set<int>& writes) {
  for (const Access& a : block_accesses(b)) (a.write ? writes : reads).insert(a.tensor);
  for (int t : writes) reads.erase(t);
}

}  // namespace chain

using chain::bound_names;
using chain::output_buffer;
using chain::step_inputs;

void interpret_chain(const std::vector<ChainStep>& steps, TensorMap& buffers) {
  for (const ChainStep& step : steps) {
    std::vector<std::string> names = bound_names(step);
    TensorMap outputs = interpret(step.program, step_inputs(step, names, buffers), step.params);
    for (int t : step.program.outputs()) {
      Tensor& result = outputs.at(step.program.tensors[t].name);
      output_buffer(step, names[t], result.dtype, result.shape, buffers) = std::move(result);
    }
  }
}

namespace sched {

void bind_chain(BoundChain& out, std::vector<ChainStep> steps, TensorMap inputs) {
  out.buffers = std::move(inputs);
  out.steps.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    BoundStep& s = out.steps[i];
    s.chain = std::move(steps[i]);
    const Program& p = s.chain.program;
    s.names = bound_names(s.chain);
    TensorMap step_in = step_inputs(s.chain, s.names, out.buffers);
    try {
      s.binding = uops::bind(p, step_in, s.chain.params);
    } catch (const Error& e) {
      throw Error("step '" + s.chain.label + "': " + e.what());
    }
    const Binding& b = s.binding;
    s.temporaries.resize(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorInfo& info = p.tensors[t];
      if (info.role == Role::input) {
        s.tensors.push_back(&out.buffers.at(s.names[t]));
      } else if (info.role == Role::output) {
        s.tensors.push_back(
            &output_buffer(s.chain, s.names[t], info.dtype, b.shapes[t], out.buffers));
      } else {
        s.temporaries[t] = Tensor(info.dtype, b.shapes[t]);
        s.tensors.push_back(&s.temporaries[t]);
      }
      s.pointers.push_back(s.tensors[t]->bytes.data());
      s.sizes.insert(s.sizes.end(), b.shapes[t].begin(), b.shapes[t].end());
    }
    for (const std::string& name : p.params) s.params.push_back(b.params.at(name));
  }
}

const Tensor& read_buffer(const BoundChain& chain, const std::string& buffer) {
  auto it = chain.buffers.find(buffer);
  if (it == chain.buffers.end()) throw Error("no buffer named '" + buffer + "'");
  return it->second;
}

void write_buffer(BoundChain& chain, const std::string& buffer, const Tensor& value) {
  auto it = chain.buffers.find(buffer);
  if (it == chain.buffers.end()) throw Error("no buffer named '" + buffer + "'");
  Tensor& b = it->second;
  if (b.dtype != value.dtype || b.shape != value.shape)
    throw Error("buffer '" + buffer + "' is " + dtype_name(b.dtype) + " " + b.shape_text() +
                ", not " + dtype_name(value.dtype) + " " + value.shape_text());
  std::copy(value.bytes.begin(), value.bytes.end(), b.bytes.begin());
}

}  // namespace sched

}  // namespace uops
