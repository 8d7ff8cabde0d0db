#include "uops/backends/runtime_nodes.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "backends/codegen/kernel_writer.h"
#include "backends/scheduled/c_block_kernels.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"

namespace uops {

using namespace ir;

namespace {

// The buffer each program tensor is bound to (empty for temporaries), after checking that no two
// of them share one.
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

TensorMap step_inputs(const ChainStep& step, const std::vector<std::string>& names,
                      const TensorMap& buffers) {
  TensorMap inputs;
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
Tensor& output_buffer(const ChainStep& step, const std::string& name, DType dtype,
                      const std::vector<int64_t>& shape, TensorMap& buffers) {
  auto [it, created] = buffers.try_emplace(name, dtype, shape);
  if (!created && (it->second.dtype != dtype || it->second.shape != shape))
    throw Error("step '" + step.label + "' writes buffer '" + name + "' as " + dtype_name(dtype) +
                " " + Tensor(dtype, shape).shape_text() + ", but it is " +
                dtype_name(it->second.dtype) + " " + it->second.shape_text());
  return it->second;
}

// Tensors read through Data leaves: an i32 tensor whose elements are indices (select, and the
// scatter of its gradient, which stores at positions it reads).
void index_reads(const Index& e, std::set<int>& reads) {
  if (!e) return;
  if (e->kind == IndexKind::Data) reads.insert(int(e->value));
  index_reads(e->a, reads);
  index_reads(e->b, reads);
  for (const Index& arg : e->args) index_reads(arg, reads);
}

void value_reads(const Value& v, std::set<int>& reads) {
  if (!v) return;
  if (v->kind == ValueKind::Load) reads.insert(v->tensor);
  for (const Index& i : v->index) index_reads(i, reads);
  index_reads(v->ivalue, reads);
  value_reads(v->a, reads);
  value_reads(v->b, reads);
  value_reads(v->c, reads);
}

// A block's accesses: every tensor a statement stores to is written (an accumulation also
// reads it, which a write already orders), every other tensor it loads, or reads an index
// from, is read.
void block_accesses(const Block& b, std::set<int>& reads, std::set<int>& writes) {
  for (const Loop& l : b.loops) {
    index_reads(l.start, reads);
    index_reads(l.end, reads);
    for (const Stmt& s : l.stmts) {
      if (s.kind != StmtKind::reduce) writes.insert(s.tensor);
      for (const Index& i : s.index) index_reads(i, reads);
      index_reads(s.arg, reads);
      value_reads(s.value, reads);
    }
  }
  for (int t : writes) reads.erase(t);
}

}  // namespace

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

Program copy_program(int rank, DType dtype) {
  Graph g;
  Node x = g.input("x", rank, dtype);
  std::vector<std::string> shape, index;
  for (int a = 0; a < rank; ++a) {
    shape.push_back("dA" + std::to_string(a));
    index.push_back("i" + std::to_string(a));
  }
  g.output("y", g.reindex(x, shape, index));
  return lower(g);
}

struct ChainNodes::State {
  struct Step {
    ChainStep chain;
    std::vector<Tensor*> tensors;        // per program tensor: a shared buffer or a temporary
    std::vector<Tensor> temporaries;     // indexed like the tensor table; only temporaries used
    std::vector<void*> pointers;         // tensors[t]->bytes.data(): buffers never reallocate
    std::vector<int64_t> sizes, params;  // the kernel ABI's arrays, fixed at bind time
    std::vector<cgen::BlockFn> blocks;
  };
  // std::map and a vector that is never resized: the Tensor objects stay where they are, so
  // their addresses serve as the runtime's buffer ids and as the kernels' pointers.
  TensorMap buffers;
  std::vector<Step> steps;
};

ChainNodes::ChainNodes(std::vector<ChainStep> steps, TensorMap inputs, CCompileOptions options)
    : state_(std::make_shared<State>()) {
  state_->buffers = std::move(inputs);
  state_->steps.resize(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    State::Step& s = state_->steps[i];
    s.chain = std::move(steps[i]);
    const Program& p = s.chain.program;
    std::vector<std::string> names = bound_names(s.chain);
    TensorMap step_in = step_inputs(s.chain, names, state_->buffers);
    Binding b;
    try {
      b = uops::bind(p, step_in, s.chain.params);
    } catch (const Error& e) {
      throw Error("step '" + s.chain.label + "': " + e.what());
    }
    s.temporaries.resize(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorInfo& info = p.tensors[t];
      if (info.role == Role::input) {
        s.tensors.push_back(&state_->buffers.at(names[t]));
      } else if (info.role == Role::output) {
        s.tensors.push_back(
            &output_buffer(s.chain, names[t], info.dtype, b.shapes[t], state_->buffers));
      } else {
        s.temporaries[t] = Tensor(info.dtype, b.shapes[t]);
        s.tensors.push_back(&s.temporaries[t]);
      }
      s.pointers.push_back(s.tensors[t]->bytes.data());
      s.sizes.insert(s.sizes.end(), b.shapes[t].begin(), b.shapes[t].end());
    }
    for (const std::string& name : p.params) s.params.push_back(b.params.at(name));
  }

  // The runtime's streams are the parallelism: OpenMP inside a node would oversubscribe the
  // cores, and libgomp's threads are invisible to ThreadSanitizer, which checks the runtime.
  options.openmp = false;
  std::vector<Program> programs;
  for (const State::Step& s : state_->steps) programs.push_back(s.chain.program);
  std::vector<std::vector<cgen::BlockFn>> kernels = cgen::compile_block_kernels(programs, options);
  for (size_t i = 0; i < steps.size(); ++i) state_->steps[i].blocks = std::move(kernels[i]);
}

void ChainNodes::add_to(runtime::GraphBuilder& builder) const {
  for (size_t i = 0; i < state_->steps.size(); ++i) {
    const State::Step& s = state_->steps[i];
    const Program& p = s.chain.program;
    auto id = [&](int t) { return runtime::buffer_id(s.tensors[t]); };

    std::vector<runtime::BufferId> zeroed;
    for (size_t t = 0; t < p.tensors.size(); ++t)
      if (p.tensors[t].role != Role::input) zeroed.push_back(id(int(t)));
    builder.add(
        s.chain.label + ": zero",
        [state = state_, i] {
          const State::Step& s = state->steps[i];
          for (size_t t = 0; t < s.tensors.size(); ++t)
            if (s.chain.program.tensors[t].role != Role::input)
              std::fill(s.tensors[t]->bytes.begin(), s.tensors[t]->bytes.end(), 0);
        },
        {}, zeroed);

    for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
      std::set<int> reads, writes;
      block_accesses(p.blocks[bi], reads, writes);
      std::vector<runtime::BufferId> read_ids, write_ids;
      for (int t : reads) read_ids.push_back(id(t));
      for (int t : writes) write_ids.push_back(id(t));
      std::string name =
          s.chain.label + ": block " + std::to_string(bi) + " (" + p.blocks[bi].origin + ")";
      builder.add(
          name,
          [state = state_, i, fn = s.blocks[bi]] {
            const State::Step& s = state->steps[i];
            if (int rc = fn(s.pointers.data(), s.sizes.data(), s.params.data(), 1))
              throw Error("step '" + s.chain.label + "': " + codegen::kernel_error_message(rc));
          },
          read_ids, write_ids);
    }
  }
}

const Tensor& ChainNodes::read(const std::string& buffer) const {
  auto it = state_->buffers.find(buffer);
  if (it == state_->buffers.end()) throw Error("no buffer named '" + buffer + "'");
  return it->second;
}

void ChainNodes::write(const std::string& buffer, const Tensor& value) {
  auto it = state_->buffers.find(buffer);
  if (it == state_->buffers.end()) throw Error("no buffer named '" + buffer + "'");
  Tensor& b = it->second;
  if (b.dtype != value.dtype || b.shape != value.shape)
    throw Error("buffer '" + buffer + "' is " + dtype_name(b.dtype) + " " + b.shape_text() +
                ", not " + dtype_name(value.dtype) + " " + value.shape_text());
  std::copy(value.bytes.begin(), value.bytes.end(), b.bytes.begin());
}

}  // namespace uops
