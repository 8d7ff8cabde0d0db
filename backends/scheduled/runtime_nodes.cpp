#include "uops/backends/runtime_nodes.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "backends/codegen/kernel_writer.h"
#include "backends/scheduled/bound_chain.h"
#include "backends/scheduled/c_block_kernels.h"
#include "backends/scheduled/chain_binding.h"
#include "uops/error.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"

namespace uops {

using namespace ir;

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
  sched::BoundChain chain;
  std::vector<std::vector<cgen::BlockFn>> blocks;  // per step, per block
};

ChainNodes::ChainNodes(std::vector<ChainStep> steps, TensorMap inputs, CCompileOptions options)
    : state_(std::make_shared<State>()) {
  sched::bind_chain(state_->chain, std::move(steps), std::move(inputs));
  // The runtime's streams are the parallelism: OpenMP inside a node would oversubscribe the
  // cores, and libgomp's threads are invisible to ThreadSanitizer, which checks the runtime.
  options.openmp = false;
  std::vector<Program> programs;
  for (const sched::BoundStep& s : state_->chain.steps) programs.push_back(s.chain.program);
  state_->blocks = cgen::compile_block_kernels(programs, options);
}

void ChainNodes::add_to(runtime::GraphBuilder& builder) const {
  for (size_t i = 0; i < state_->chain.steps.size(); ++i) {
    const sched::BoundStep& s = state_->chain.steps[i];
    const Program& p = s.chain.program;
    auto id = [&](int t) { return runtime::buffer_id(s.tensors[t]); };

    std::vector<runtime::BufferId> zeroed;
    for (size_t t = 0; t < p.tensors.size(); ++t)
      if (p.tensors[t].role != Role::input) zeroed.push_back(id(int(t)));
    builder.add(
        s.chain.label + ": zero",
        [state = state_, i] {
          const sched::BoundStep& s = state->chain.steps[i];
          for (size_t t = 0; t < s.tensors.size(); ++t)
            if (s.chain.program.tensors[t].role != Role::input)
              std::fill(s.tensors[t]->bytes.begin(), s.tensors[t]->bytes.end(), 0);
        },
        {}, zeroed);

    for (size_t bi = 0; bi < p.blocks.size(); ++bi) {
      std::set<int> reads, writes;
      chain::reads_and_writes(p.blocks[bi], reads, writes);
      std::vector<runtime::BufferId> read_ids, write_ids;
      for (int t : reads) read_ids.push_back(id(t));
      for (int t : writes) write_ids.push_back(id(t));
      std::string name =
          s.chain.label + ": block " + std::to_string(bi) + " (" + p.blocks[bi].origin + ")";
      builder.add(
          name,
          [state = state_, i, fn = state_->blocks[i][bi]] {
            const sched::BoundStep& s = state->chain.steps[i];
            if (int rc = fn(s.pointers.data(), s.sizes.data(), s.params.data(), 1))
              throw Error("step '" + s.chain.label + "': " + codegen::kernel_error_message(rc));
          },
          read_ids, write_ids);
    }
  }
}

const Tensor& ChainNodes::read(const std::string& buffer) const {
  return sched::read_buffer(state_->chain, buffer);
}

void ChainNodes::write(const std::string& buffer, const Tensor& value) {
  sched::write_buffer(state_->chain, buffer, value);
}

}  // namespace uops
