// A chain of programs bound to its buffers (uops/backends/runtime_nodes.h states the rules): the
// storage every step's tensors live in and the kernel ABI's arrays of each step, fixed at bind
// time. The runtime nodes and the wavefront kernels both run from it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "uops/backends/runtime_nodes.h"
#include "uops/ir/binding.h"

namespace uops::sched {

using namespace ir;

struct BoundStep {
  ChainStep chain;
  Binding binding;
  std::vector<std::string> names;      // per program tensor: its buffer (empty: a temporary)
  std::vector<Tensor*> tensors;        // per program tensor: a shared buffer or a temporary
  std::vector<Tensor> temporaries;     // indexed like the tensor table; only temporaries used
  std::vector<void*> pointers;         // tensors[t]->bytes.data(): buffers never reallocate
  std::vector<int64_t> sizes, params;  // the kernel ABI's arrays
};

// std::map and a vector that is never resized: the Tensor objects stay where they are, so their
// addresses serve as buffer ids and as the kernels' pointers. Bind it where it will stay.
struct BoundChain {
  TensorMap buffers;
  std::vector<BoundStep> steps;

  BoundChain() = default;
  BoundChain(const BoundChain&) = delete;
};

// Binds every step in order, as ChainNodes' constructor documents (every misuse an Error).
void bind_chain(BoundChain& out, std::vector<ChainStep> steps, TensorMap inputs);

// The buffers between runs, by name (an Error for an unknown name or a wrong dtype or shape).
const Tensor& read_buffer(const BoundChain& chain, const std::string& buffer);
void write_buffer(BoundChain& chain, const std::string& buffer, const Tensor& value);

}  // namespace uops::sched
