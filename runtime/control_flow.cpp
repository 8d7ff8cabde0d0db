#include "uops/runtime/control_flow.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "cuda_driver.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

void add_accesses(const Graph& graph, Node& node) {
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    const Node& inner = graph.node(n);
    node.reads.insert(node.reads.end(), inner.reads.begin(), inner.reads.end());
    node.writes.insert(node.writes.end(), inner.writes.begin(), inner.writes.end());
  }
  for (auto* list : {&node.reads, &node.writes}) {
    std::sort(list->begin(), list->end());
    list->erase(std::unique(list->begin(), list->end()), list->end());
  }
}

// The loop and the branch choice, shared by the CPU and CUDA variants: each adds the accesses
// of its graphs to `node` and runs each graph on an Executor of its own (held by shared_ptr: a
// Node's kernel must be copyable, an executor is not).
template <typename Executor, typename Options>
std::function<void()> while_loop(Node& node, std::function<bool()> keep_going, Graph body,
                                 std::size_t max_iterations, const Options& options) {
  if (!keep_going) throw Error("while node '" + node.name + "' has no condition");
  add_accesses(body, node);
  auto executor = std::make_shared<Executor>(std::move(body), options);
  return [name = node.name, executor, keep_going = std::move(keep_going), max_iterations] {
    for (std::size_t i = 0; keep_going(); ++i) {
      if (i == max_iterations) {
        throw Error("while node '" + name + "' ran " + std::to_string(max_iterations) +
                    " iterations without its condition turning false");
      }
      executor->run();
    }
  };
}

template <typename Executor, typename Options>
std::function<void()> case_branch(Node& node, std::function<std::size_t()> select,
                                  std::vector<Graph> branches, const Options& options) {
  if (!select) throw Error("case node '" + node.name + "' has no selector");
  std::vector<std::shared_ptr<Executor>> executors;
  for (Graph& branch : branches) {
    add_accesses(branch, node);
    executors.push_back(std::make_shared<Executor>(std::move(branch), options));
  }
  return [name = node.name, executors = std::move(executors), select = std::move(select)] {
    const std::size_t i = select();
    if (i >= executors.size()) {
      throw Error("case node '" + name + "' selected branch " + std::to_string(i) + " of " +
                  std::to_string(executors.size()));
    }
    executors[i]->run();
  };
}

// The CUDA kernel of a control-flow node: wait for the stream, then decide on the host.
CudaKernel on_host(std::function<void()> decide) {
  std::string why;
  const cuda::Driver* cu = cuda::load_driver(&why);
  if (!cu) throw Error("CUDA driver unavailable: " + why);
  return [cu, decide = std::move(decide)](CudaStream stream) {
    cuda::check(*cu, cu->cuStreamSynchronize(static_cast<cuda::CUstream>(stream)),
                "cuStreamSynchronize");
    decide();
  };
}

}  // namespace

Node while_node(std::string name, BufferId condition, std::function<bool()> keep_going, Graph body,
                std::size_t max_iterations, CpuExecutorOptions options) {
  Node node{std::move(name), {}, {}, {condition}, {}, {}};
  node.cpu = while_loop<CpuExecutor>(node, std::move(keep_going), std::move(body), max_iterations,
                                     options);
  return node;
}

Node case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
               std::vector<Graph> branches, CpuExecutorOptions options) {
  Node node{std::move(name), {}, {}, {selector}, {}, {}};
  node.cpu = case_branch<CpuExecutor>(node, std::move(select), std::move(branches), options);
  return node;
}

Node cuda_while_node(std::string name, BufferId condition, std::function<bool()> keep_going,
                     Graph body, std::size_t max_iterations, CudaOptions options) {
  Node node{std::move(name), {}, {}, {condition}, {}, {}};
  node.cuda = on_host(while_loop<CudaExecutor>(node, std::move(keep_going), std::move(body),
                                               max_iterations, options));
  return node;
}

Node cuda_case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
                    std::vector<Graph> branches, CudaOptions options) {
  Node node{std::move(name), {}, {}, {selector}, {}, {}};
  node.cuda =
      on_host(case_branch<CudaExecutor>(node, std::move(select), std::move(branches), options));
  return node;
}

}  // namespace uops::runtime
