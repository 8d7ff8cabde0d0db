// What the C and the CUDA glue (runtime_nodes.h, cuda_runtime_nodes.h) share about binding a
// chain's steps to named buffers: which buffer each tensor uses, the checks and their messages,
// and which tensors a block reads and writes. `Buffer` is a host Tensor or, for device buffers,
// a TensorType: anything with a dtype and a shape.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "uops/backends/runtime_nodes.h"
#include "uops/error.h"

namespace uops::chain {

using namespace ir;

// The buffer each program tensor is bound to (empty for temporaries), after checking that no two
// of them share one.
std::vector<std::string> bound_names(const ChainStep& step);

// A block's accesses: every tensor a statement stores to is written (an accumulation also
// reads it, which a write already orders), every other tensor it loads, or reads an index
// from, is read.
void reads_and_writes(const Block& b, std::set<int>& reads, std::set<int>& writes);

// The step's inputs by program tensor name, from the buffers bound to them.
template <class Buffer>
std::map<std::string, Buffer> step_inputs(const ChainStep& step,
                                          const std::vector<std::string>& names,
                                          const std::map<std::string, Buffer>& buffers) {
  std::map<std::string, Buffer> inputs;
  for (int t : step.program.inputs()) {
    auto it = buffers.find(names[t]);
    if (it == buffers.end())
      throw Error("step '" + step.label + "' reads buffer '" + names[t] +
                  "', which is no input of the chain and no earlier step writes");
    inputs[step.program.tensors[t].name] = it->second;
  }
  return inputs;
}

// The buffer an output goes to: created when new, else it must keep its dtype and shape.
template <class Buffer>
Buffer& output_buffer(const ChainStep& step, const std::string& name, DType dtype,
                      const std::vector<int64_t>& shape, std::map<std::string, Buffer>& buffers) {
  auto [it, created] = buffers.try_emplace(name, dtype, shape);
  if (!created && (it->second.dtype != dtype || it->second.shape != shape))
    throw Error("step '" + step.label + "' writes buffer '" + name + "' as " + dtype_name(dtype) +
                " " + shape_text(shape) + ", but it is " + dtype_name(it->second.dtype) + " " +
                shape_text(it->second.shape));
  return it->second;
}

}  // namespace uops::chain
