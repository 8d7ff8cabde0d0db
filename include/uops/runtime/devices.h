// Running a placement (placement.h) for real, on several devices. On a machine without GPUs the
// devices are CPU worker pools: device d owns streams d * k .. d * k + k - 1 (k streams per
// device), each a thread of a CpuExecutor, and none of them ever runs another device's work;
// the calling thread is device 0's first stream. Every buffer has one copy per device, kept by
// the caller, and data moves between devices only through explicit copy nodes.
#pragma once

#include <functional>

#include "uops/runtime/graph.h"
#include "uops/runtime/placement.h"

namespace uops::runtime {

struct DeviceWork {
  // Runs node `node` of the placed graph's source on `device`, on that device's copies of the
  // buffers the node accesses.
  std::function<void(NodeIndex node, DeviceIndex device)> run;
  // Copies buffer `buffer` from device `from`'s copy into device `to`'s.
  std::function<void(BufferId buffer, DeviceIndex from, DeviceIndex to)> copy;
};

// The graph as `placement` runs it: each node of `graph` on its device, each of the placement's
// transfers (then its gather) a copy node named "copy <buffer> d<from>->d<to>" on the
// destination device, right before the node that needs it. Dependencies are inferred as the
// builder does, from accesses to each device's copy of a buffer (a copy reads the source's and
// writes the destination's), plus the graph's own edges, so the placed run computes what a
// single-device run of `graph` computes, with the results gathered on device 0. Nodes keep
// their names and declared buffers; copies declare their buffer as read and written. Run it
// with CpuExecutor. Throws Error if the placement does not fit the graph and options (sizes,
// device indices), or `work` lacks a function.
Graph placed_graph(const Graph& graph, const Placement& placement, const PlacementOptions& options,
                   DeviceWork work);

}  // namespace uops::runtime
