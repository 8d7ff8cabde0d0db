// Compiled programs as nodes of the scheduled runtime (docs/design.md §3.8): the glue between the
// C backend and uops/runtime.
//
// A chain is a list of steps, each a program whose tensors are bound to named buffers. Steps
// that name the same buffer share it, so a forward op, its gradient and an optimizer update can
// be chained through buffers like "h" or "dw1" and the runtime infers the order between them.
//
// Each block of each program becomes one node, whose reads and writes are the buffers its
// statements load and store; each step also gets a first node that zero-fills its outputs and
// temporaries, because the IR says they start at zero (docs/design.md §3.4). Dependencies then
// follow the step order for every buffer, exactly as if the steps ran one after the other, which is
// what interpret_chain does with the interpreter.
//
// A program cannot write its own inputs, so a step may not bind an output to a buffer it also
// reads; an in-place update (w -= lr * dw) is two steps: one writes "w.next", the next copies it
// back into "w" (see copy_program).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "uops/backends/c/c_backend.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"
#include "uops/runtime/builder.h"

namespace uops {

struct ChainStep {
  std::string label;  // names the step's nodes: "<label>: block 1 (mul)"
  Program program;
  // Program tensor name -> buffer name. Inputs and outputs not listed use their own name;
  // temporaries always belong to the step alone. Names that are no input or output of the
  // program are ignored, so one map serves an op's forward and gradient programs, whose
  // inputs vary with what the gradient reads.
  std::map<std::string, std::string> buffers;
  ParamMap params;
};

// Runs the steps in order with the interpreter: each reads its inputs from `buffers` and
// stores its outputs there. The meaning a scheduled chain must reproduce.
void interpret_chain(const std::vector<ChainStep>& steps, TensorMap& buffers);

// y = x for a tensor of the given rank and dtype: the step that copies "w.next" back to "w".
Program copy_program(int rank, DType dtype);

// The steps of a chain compiled to C, one entry point per block, in one compiler call, and bound
// to their buffers. Copies share the same state; the nodes added to a builder keep it alive.
class ChainNodes {
 public:
  // `inputs` are the buffers that exist before the first step (data, weights, constants); every
  // other buffer is created, with the shape binding gives it, by the first step that writes it.
  // Every step is bound in order the way the interpreter binds it (uops/ir/binding.h), so a
  // missing buffer, a wrong dtype, rank or size, a missing parameter or a broken equality is a
  // uops::Error here, before anything runs. So is a step that reads a buffer it writes, binds
  // two tensors to one buffer, or writes an existing buffer with another dtype or shape.
  // `options` choose the compiler and flags; OpenMP is always off, since the streams are the
  // parallelism (and libgomp's threads would hide races from ThreadSanitizer).
  ChainNodes(std::vector<ChainStep> steps, TensorMap inputs, CCompileOptions options = {});

  // Adds every step's nodes to `builder`, in step order.
  void add_to(runtime::GraphBuilder& builder) const;

  // The buffers between runs (never while a graph built from these nodes is running). A
  // buffer's runtime::BufferId is the address of the Tensor read() returns, so nodes added by
  // hand can declare accesses to it.
  const Tensor& read(const std::string& buffer) const;
  // Overwrites a buffer's contents; `value` must have its dtype and shape.
  void write(const std::string& buffer, const Tensor& value);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace uops
