// Placing a graph's nodes on several devices by GrCUDA's policies, with transfer accounting.
//
// Nodes are placed one at a time in insertion order (the order a host program would launch
// them). Every buffer starts valid on one device (device 0, the host's side, unless
// `initially_on` says otherwise); a node's inputs (reads and
// writes) that its device lacks are copied there from the holder with the highest bandwidth
// first, and a write leaves the node's device the only valid holder. A buffer without a
// declared size still holds data: its copies are listed, at 0 bytes and 0 ns. After the last
// node, every buffer a node wrote and device 0 no longer holds is gathered back to device 0.
// placed_graph (devices.h) runs a placement for real. Policies:
// - round_robin: devices in turn.
// - stream_aware: the device with the fewest busy streams when the node becomes ready, in a
//   simulation where every node takes its declared cost (1 when undeclared) and each device
//   has `streams_per_device` streams; ties go to the lowest index.
// - min_transfer_size: the device that needs the fewest bytes copied in.
// - minmin_transfer_time: the smallest total copy time (copies one after another).
// - minmax_transfer_time: the smallest longest copy (copies in parallel).
// The transfer policies break ties by the fewest nodes placed so far, then the lowest index.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

enum class PlacementPolicy {
  round_robin,
  stream_aware,
  min_transfer_size,
  minmin_transfer_time,
  minmax_transfer_time
};

struct PlacementOptions {
  std::size_t devices = 2;
  std::size_t streams_per_device = 1;
  // Bytes of each buffer; buffers not listed count as 0 bytes.
  std::unordered_map<BufferId, std::size_t> bytes;
  std::unordered_map<BufferId, DeviceIndex> initially_on;  // default: device 0
  // bandwidth[from][to] in bytes per nanosecond; empty means 1 between every pair.
  std::vector<std::vector<double>> bandwidth;
};

struct Transfer {
  BufferId buffer;
  DeviceIndex from, to;
  NodeIndex before;  // the node that needs it
  std::size_t bytes;
  double time_ns;
};

struct Placement {
  std::vector<DeviceIndex> device_of;  // per node
  std::vector<Transfer> transfers;     // in the order the nodes need them
  std::size_t bytes_moved = 0;
  double transfer_ns = 0;  // sum of the transfers' times
  // Copies back to device 0 after the last node (`before` is the node count), by buffer id;
  // not counted in bytes_moved or transfer_ns, which are what the nodes needed.
  std::vector<Transfer> gather;
};

// Throws Error on zero devices or streams, or a bandwidth matrix of the wrong shape or with a
// non-positive entry between distinct devices.
Placement place(const Graph& graph, PlacementPolicy policy, const PlacementOptions& options);

}  // namespace uops::runtime
