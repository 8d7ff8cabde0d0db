#include "uops/runtime/builder.h"

#include <algorithm>
#include <utility>

#include "dependencies.h"
#include "uops/runtime/error.h"

namespace uops::runtime {

struct NodeRef::State {
  std::vector<Node> nodes;
  std::vector<std::pair<NodeIndex, NodeIndex>> explicit_edges;
  bool consumed = false;

  void check_usable() const {
    if (consumed) throw Error("GraphBuilder used after build()");
  }
};

NodeRef NodeRef::then(NodeRef next) const {
  state_->check_usable();
  if (next.state_ != state_) throw Error("then(): nodes belong to different builders");
  state_->explicit_edges.emplace_back(index_, next.index_);
  return next;
}

NodeRef Join::then(NodeRef next) const {
  for (const NodeRef& node : nodes) node.then(next);
  return next;
}

Join when_all(std::vector<NodeRef> nodes) {
  return Join{std::move(nodes)};
}

GraphBuilder::GraphBuilder() : state_(std::make_shared<NodeRef::State>()) {}

NodeRef GraphBuilder::add(Node node) {
  if (!state_) throw Error("GraphBuilder used after being moved from");
  state_->check_usable();
  if (!node.cpu && !node.cuda) throw Error("node '" + node.name + "' has no kernel");
  state_->nodes.push_back(std::move(node));
  return NodeRef(state_, static_cast<NodeIndex>(state_->nodes.size() - 1));
}

NodeRef GraphBuilder::add(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
                          std::vector<BufferId> writes) {
  return add(Node{std::move(name), std::move(kernel), {}, std::move(reads), std::move(writes)});
}

NodeRef GraphBuilder::add_cuda(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                               std::vector<BufferId> writes) {
  return add(Node{std::move(name), {}, std::move(kernel), std::move(reads), std::move(writes)});
}

Graph GraphBuilder::build(const BuildOptions& options) && {
  if (!state_) throw Error("GraphBuilder used after being moved from");
  state_->check_usable();
  state_->consumed = true;
  auto data = std::make_shared<Graph::Data>();
  data->nodes = std::move(state_->nodes);

  Adjacency successors = infer_dependencies(data->nodes);
  for (auto [from, to] : state_->explicit_edges) successors[from].push_back(to);
  TopologicalOrder topo = topological_order(successors);
  if (topo.on_cycle) {
    throw Error("dependency cycle through node '" + data->nodes[*topo.on_cycle].name + "'");
  }
  data->successors = transitive_reduction(successors, topo.order);
  data->predecessors = predecessors_of(data->successors);
  data->schedule = make_schedule(data->successors, options.max_streams);
  return Graph(std::move(data));
}

std::size_t Graph::edge_count() const {
  std::size_t count = 0;
  for (const auto& list : data_->successors) count += list.size();
  return count;
}

}  // namespace uops::runtime
