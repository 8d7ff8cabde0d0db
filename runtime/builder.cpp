#include "uops/runtime/builder.h"

#include <algorithm>
#include <string>
#include <utility>

#include "dependencies.h"
#include "uops/runtime/error.h"

namespace uops::runtime {

namespace {

Schedule schedule_with_costs(const Graph::Data& data, const BuildOptions& options) {
  const std::vector<std::uint32_t> command = command_ids(data.nodes);
  const bool declared = std::any_of(data.nodes.begin(), data.nodes.end(),
                                    [](const Node& node) { return node.cost_ns.has_value(); });
  if (!declared) {
    return make_schedule(data.successors, data.predecessors, options.max_streams, {}, 0, 0,
                         command);
  }
  std::vector<double> cost_ns;
  cost_ns.reserve(data.nodes.size());
  for (const Node& node : data.nodes)
    cost_ns.push_back(node.cost_ns.value_or(10 * options.handoff_ns));
  return make_schedule(data.successors, data.predecessors, options.max_streams, cost_ns,
                       options.handoff_ns, options.wakeup_ns.value_or(options.handoff_ns), command);
}

}  // namespace

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

NodeRef NodeRef::cost(double nanoseconds) const {
  state_->check_usable();
  if (!(nanoseconds >= 0))
    throw Error("cost of node '" + state_->nodes[index_].name +
                "' must be a non-negative number of nanoseconds");
  state_->nodes[index_].cost_ns = nanoseconds;
  return *this;
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
  return add(Node{std::move(name), std::move(kernel), {}, std::move(reads), std::move(writes), {}});
}

NodeRef GraphBuilder::add_cuda(std::string name, CudaKernel kernel, std::vector<BufferId> reads,
                               std::vector<BufferId> writes) {
  return add(Node{std::move(name), {}, std::move(kernel), std::move(reads), std::move(writes), {}});
}

Graph GraphBuilder::build(const BuildOptions& options) && {
  if (!state_) throw Error("GraphBuilder used after being moved from");
  state_->check_usable();
  state_->consumed = true;
  auto data = std::make_shared<Graph::Data>();
  data->nodes = std::move(state_->nodes);

  Adjacency successors = infer_dependencies(data->nodes);
  // Each list grows once to take its explicit edges, rather than by doubling.
  std::vector<std::uint32_t> explicit_out(successors.size(), 0);
  for (auto [from, to] : state_->explicit_edges) ++explicit_out[from];
  for (NodeIndex v = 0; v < successors.size(); ++v) {
    if (explicit_out[v] != 0) successors[v].reserve(successors[v].size() + explicit_out[v]);
  }
  for (auto [from, to] : state_->explicit_edges) successors[from].push_back(to);
  TopologicalOrder topo = topological_order(successors);
  if (topo.on_cycle) {
    throw Error("dependency cycle through node '" + data->nodes[*topo.on_cycle].name + "'");
  }
  data->successors = transitive_reduction(std::move(successors), topo.order);
  data->predecessors = predecessors_of(data->successors);
  data->schedule = schedule_with_costs(*data, options);
  return Graph(std::move(data));
}

Graph Graph::rescheduled(std::span<const double> cost_ns, const BuildOptions& options) const {
  if (cost_ns.size() != size()) {
    throw Error("rescheduled(): " + std::to_string(cost_ns.size()) + " costs for " +
                std::to_string(size()) + " nodes");
  }
  auto data = std::make_shared<Data>(*data_);
  for (NodeIndex n = 0; n < size(); ++n) {
    if (!(cost_ns[n] >= 0))
      throw Error("rescheduled(): cost of node " + std::to_string(n) +
                  " is not a non-negative number");
    data->nodes[n].cost_ns = cost_ns[n];
  }
  data->schedule = schedule_with_costs(*data, options);
  return Graph(std::move(data));
}

std::size_t Graph::edge_count() const {
  std::size_t count = 0;
  for (const auto& list : data_->successors) count += list.size();
  return count;
}

}  // namespace uops::runtime
