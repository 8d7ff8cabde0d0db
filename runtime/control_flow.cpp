#include "uops/runtime/control_flow.h"

#include <algorithm>
#include <memory>
#include <utility>

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

}  // namespace

Node while_node(std::string name, BufferId condition, std::function<bool()> keep_going, Graph body,
                std::size_t max_iterations, CpuExecutorOptions options) {
  if (!keep_going) throw Error("while node '" + name + "' has no condition");
  Node node{name, {}, {}, {condition}, {}, {}};
  add_accesses(body, node);
  // shared_ptr: a Node's kernel must be copyable, an executor is not.
  auto executor = std::make_shared<CpuExecutor>(std::move(body), options);
  node.cpu = [name, executor, keep_going = std::move(keep_going), max_iterations] {
    for (std::size_t i = 0; keep_going(); ++i) {
      if (i == max_iterations) {
        throw Error("while node '" + name + "' ran " + std::to_string(max_iterations) +
                    " iterations without its condition turning false");
      }
      executor->run();
    }
  };
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
  node.cpu = [name, executors = std::move(executors), select = std::move(select)] {
    const std::size_t i = select();
    if (i >= executors.size()) {
      throw Error("case node '" + name + "' selected branch " + std::to_string(i) + " of " +
                  std::to_string(executors.size()));
    }
    executors[i]->run();
  };
  return node;
}

}  // namespace uops::runtime
