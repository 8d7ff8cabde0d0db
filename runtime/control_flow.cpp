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

// The loop and the branch choice, shared by the CPU and CUDA variants.
template <typename Executor>
std::function<void()> while_loop(std::string name, std::function<bool()> keep_going,
                                 std::shared_ptr<Executor> executor, std::size_t max_iterations) {
  return [name = std::move(name), executor, keep_going = std::move(keep_going), max_iterations] {
    for (std::size_t i = 0; keep_going(); ++i) {
      if (i == max_iterations) {
        throw Error("while node '" + name + "' ran " + std::to_string(max_iterations) +
                    " iterations without its condition turning false");
      }
      executor->run();
    }
  };
}

template <typename Executor>
std::function<void()> case_branch(std::string name, std::function<std::size_t()> select,
                                  std::vector<std::shared_ptr<Executor>> executors) {
  return [name = std::move(name), executors = std::move(executors), select = std::move(select)] {
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
  if (!keep_going) throw Error("while node '" + name + "' has no condition");
  Node node{name, {}, {}, {condition}, {}, {}};
  add_accesses(body, node);
  // shared_ptr: a Node's kernel must be copyable, an executor is not.
  node.cpu = while_loop(name, std::move(keep_going),
                        std::make_shared<CpuExecutor>(std::move(body), options), max_iterations);
  return node;
}

Node case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
               std::vector<Graph> branches, CpuExecutorOptions options) {
  if (!select) throw Error("case node '" + name + "' has no selector");
  Node node{name, {}, {}, {selector}, {}, {}};
  std::vector<std::shared_ptr<CpuExecutor>> executors;
  for (Graph& branch : branches) {
    add_accesses(branch, node);
    executors.push_back(std::make_shared<CpuExecutor>(std::move(branch), options));
  }
  node.cpu = case_branch(name, std::move(select), std::move(executors));
  return node;
}

Node cuda_while_node(std::string name, BufferId condition, std::function<bool()> keep_going,
                     Graph body, std::size_t max_iterations, CudaOptions options) {
  if (!keep_going) throw Error("while node '" + name + "' has no condition");
  Node node{name, {}, {}, {condition}, {}, {}};
  add_accesses(body, node);
  node.cuda =
      on_host(while_loop(name, std::move(keep_going),
                         std::make_shared<CudaExecutor>(std::move(body), options), max_iterations));
  return node;
}

Node cuda_case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
                    std::vector<Graph> branches, CudaOptions options) {
  if (!select) throw Error("case node '" + name + "' has no selector");
  Node node{name, {}, {}, {selector}, {}, {}};
  std::vector<std::shared_ptr<CudaExecutor>> executors;
  for (Graph& branch : branches) {
    add_accesses(branch, node);
    executors.push_back(std::make_shared<CudaExecutor>(std::move(branch), options));
  }
  node.cuda = on_host(case_branch(name, std::move(select), std::move(executors)));
  return node;
}

}  // namespace uops::runtime
