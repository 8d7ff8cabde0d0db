#include "uops/runtime/devices.h"

#include <map>
#include <string>
#include <utility>

#include "dependencies.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

void check(const Graph& graph, const Placement& placement, const PlacementOptions& options,
           const DeviceWork& work) {
  if (!work.run || !work.copy) throw Error("placed_graph: DeviceWork needs run and copy");
  if (options.devices == 0 || options.streams_per_device == 0) {
    throw Error("placed_graph: at least one device and one stream per device");
  }
  if (placement.device_of.size() != graph.size()) {
    throw Error("placed_graph: a placement of " + std::to_string(placement.device_of.size()) +
                " nodes for a graph of " + std::to_string(graph.size()));
  }
  auto check_device = [&](DeviceIndex d) {
    if (d >= options.devices) {
      throw Error("placed_graph: device " + std::to_string(d) + " of " +
                  std::to_string(options.devices));
    }
  };
  for (DeviceIndex d : placement.device_of) check_device(d);
  for (const auto* list : {&placement.transfers, &placement.gather}) {
    for (const Transfer& t : *list) {
      check_device(t.from);
      check_device(t.to);
      if (t.before > graph.size() || (list == &placement.transfers && t.before == graph.size())) {
        throw Error("placed_graph: a transfer before node " + std::to_string(t.before) + " of " +
                    std::to_string(graph.size()));
      }
    }
  }
}

}  // namespace

Graph placed_graph(const Graph& graph, const Placement& placement, const PlacementOptions& options,
                   DeviceWork work) {
  check(graph, placement, options, work);
  auto data = std::make_shared<Graph::Data>();
  std::vector<DeviceIndex> device_of;
  std::vector<NodeIndex> placed_index(graph.size());
  // Dependencies come from the nodes' accesses to per-device copies, numbered densely here.
  std::map<std::pair<BufferId, DeviceIndex>, BufferId> copy_ids;
  auto on = [&](BufferId b, DeviceIndex d) {
    return copy_ids.try_emplace({b, d}, BufferId(copy_ids.size())).first->second;
  };
  std::vector<Node> qualified;
  auto add_copy = [&](const Transfer& t) {
    const BufferId b = t.buffer;
    data->nodes.push_back(Node{
        "copy " + std::to_string(b) + " d" + std::to_string(t.from) + "->d" + std::to_string(t.to),
        [copy = work.copy, b, from = t.from, to = t.to] { copy(b, from, to); },
        {},
        {b},
        {b},
        {}});
    qualified.push_back(Node{{}, {}, {}, {on(b, t.from)}, {on(b, t.to)}, {}});
    device_of.push_back(t.to);
  };
  std::size_t next_transfer = 0;
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    for (; next_transfer < placement.transfers.size() &&
           placement.transfers[next_transfer].before == n;
         ++next_transfer) {
      add_copy(placement.transfers[next_transfer]);
    }
    const Node& node = graph.node(n);
    const DeviceIndex d = placement.device_of[n];
    placed_index[n] = static_cast<NodeIndex>(data->nodes.size());
    data->nodes.push_back(Node{node.name,
                               [run = work.run, n, d] { run(n, d); },
                               {},
                               node.reads,
                               node.writes,
                               node.cost_ns});
    Node& q = qualified.emplace_back();
    for (BufferId b : node.reads) q.reads.push_back(on(b, d));
    for (BufferId b : node.writes) q.writes.push_back(on(b, d));
    device_of.push_back(d);
  }
  if (next_transfer != placement.transfers.size()) {
    throw Error("placed_graph: transfers out of node order");
  }
  for (const Transfer& t : placement.gather) add_copy(t);

  Adjacency successors = infer_dependencies(qualified);
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    for (NodeIndex s : graph.successors(n)) successors[placed_index[n]].push_back(placed_index[s]);
  }
  TopologicalOrder topo = topological_order(successors);
  if (topo.on_cycle) {
    throw Error("placed_graph: the graph's edges contradict its node order at node '" +
                data->nodes[*topo.on_cycle].name + "'");
  }
  data->successors = transitive_reduction(std::move(successors), topo.order);
  data->predecessors = predecessors_of(data->successors);
  const std::vector<std::uint32_t> command = command_ids(data->nodes);
  data->schedule = make_device_schedule(data->successors, device_of, options.devices,
                                        options.streams_per_device, command);
  return Graph(std::move(data));
}

}  // namespace uops::runtime
