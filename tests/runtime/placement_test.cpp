// Each placement policy places a known graph as its rule says, and transfers are accounted.
#include "uops/runtime/placement.h"

#include <gtest/gtest.h>

#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

using Devices = std::vector<DeviceIndex>;

// One node reading the given buffers (and writing a scratch buffer of 0 bytes).
Graph reader_of(std::vector<BufferId> buffers) {
  GraphBuilder b;
  b.add("k", [] {}, std::move(buffers), {99});
  return std::move(b).build();
}

TEST(Placement, RoundRobinTakesDevicesInTurnAndCountsTransfers) {
  GraphBuilder b;
  b.add("produce", [] {}, {}, {1});
  b.add("consume", [] {}, {1}, {2});
  b.add("again", [] {}, {1, 2}, {});
  PlacementOptions options{
      .devices = 2, .bytes = {{1, 100}, {2, 40}}, .bandwidth = {{0, 10}, {4, 0}}};
  Placement p = place(std::move(b).build(), PlacementPolicy::round_robin, options);
  EXPECT_EQ(p.device_of, (Devices{0, 1, 0}));
  // "consume" on device 1 needs 1 and 2 (a buffer it writes too) from device 0; "again" on
  // device 0 needs 2 back from device 1, its only holder after the write.
  ASSERT_EQ(p.transfers.size(), 3u);
  auto expect = [&](std::size_t i, BufferId buffer, DeviceIndex from, NodeIndex before,
                    double time_ns) {
    EXPECT_EQ(p.transfers[i].buffer, buffer) << i;
    EXPECT_EQ(p.transfers[i].from, from) << i;
    EXPECT_EQ(p.transfers[i].to, p.device_of[before]) << i;
    EXPECT_EQ(p.transfers[i].before, before) << i;
    EXPECT_DOUBLE_EQ(p.transfers[i].time_ns, time_ns) << i;
  };
  expect(0, 1, 0, 1, 10.0);
  expect(1, 2, 0, 1, 4.0);
  expect(2, 2, 1, 2, 10.0);
  EXPECT_EQ(p.bytes_moved, 180u);
  EXPECT_DOUBLE_EQ(p.transfer_ns, 24.0);
}

// The three transfer policies disagree on purpose. Device 0 needs A (100 bytes over a fast
// link), device 1 needs B (10 bytes over a slow one).
TEST(Placement, MinTransferSizeCountsBytesNotTime) {
  PlacementOptions options{.devices = 2,
                           .bytes = {{1, 100}, {2, 10}},
                           .initially_on = {{1, 1}, {2, 0}},
                           .bandwidth = {{0, 0.1}, {100, 0}}};
  const Graph g = reader_of({1, 2});
  EXPECT_EQ(place(g, PlacementPolicy::min_transfer_size, options).device_of, Devices{1});
  EXPECT_EQ(place(g, PlacementPolicy::minmin_transfer_time, options).device_of, Devices{0});
  EXPECT_EQ(place(g, PlacementPolicy::minmax_transfer_time, options).device_of, Devices{0});
}

// Device 0 needs one copy of 40 ns; device 1 three of 20 ns; device 2 is slow for all.
TEST(Placement, MinminSumsCopiesMinmaxTakesTheLongest) {
  PlacementOptions options{
      .devices = 3,
      .bytes = {{1, 100}, {2, 20}, {3, 20}, {4, 20}},
      .initially_on = {{1, 1}},
      .bandwidth = {{0, 1, 0.5}, {2.5, 0, 1}, {1, 1, 0}},
  };
  const Graph g = reader_of({1, 2, 3, 4});
  Placement minmin = place(g, PlacementPolicy::minmin_transfer_time, options);
  EXPECT_EQ(minmin.device_of, Devices{0});
  EXPECT_DOUBLE_EQ(minmin.transfer_ns, 40.0);
  Placement minmax = place(g, PlacementPolicy::minmax_transfer_time, options);
  EXPECT_EQ(minmax.device_of, Devices{1});
  EXPECT_DOUBLE_EQ(minmax.transfer_ns, 60.0);
  // Buffers 2, 3, 4, and the scratch buffer 99 at 0 bytes; 99 goes back to device 0 after.
  EXPECT_EQ(minmax.transfers.size(), 4u);
  ASSERT_EQ(minmax.gather.size(), 1u);
  EXPECT_EQ(minmax.gather[0].buffer, 99u);
  EXPECT_EQ(minmax.gather[0].from, 1u);
  EXPECT_EQ(minmax.gather[0].to, 0u);
}

// A long node keeps device 0's only stream busy, so the chain that follows goes to device 1,
// where round robin would alternate.
TEST(Placement, StreamAwareAvoidsBusyDevices) {
  GraphBuilder b;
  b.add("long", [] {}, {}, {1}).cost(100);
  NodeRef first = b.add("short", [] {}, {}, {2}).cost(1);
  NodeRef second = b.add("next", [] {}, {}, {}).cost(1);
  NodeRef third = b.add("last", [] {}, {}, {}).cost(1);
  first.then(second).then(third);
  const Graph g = std::move(b).build();
  PlacementOptions options{.devices = 2};
  EXPECT_EQ(place(g, PlacementPolicy::stream_aware, options).device_of, (Devices{0, 1, 1, 1}));
  EXPECT_EQ(place(g, PlacementPolicy::round_robin, options).device_of, (Devices{0, 1, 0, 1}));
}

TEST(Placement, RejectsBadOptions) {
  const Graph g = reader_of({1});
  EXPECT_THROW(place(g, PlacementPolicy::round_robin, PlacementOptions{.devices = 0}), Error);
  EXPECT_THROW(place(g, PlacementPolicy::round_robin,
                     PlacementOptions{.devices = 2, .streams_per_device = 0}),
               Error);
  EXPECT_THROW(place(g, PlacementPolicy::minmin_transfer_time,
                     PlacementOptions{.devices = 2, .bandwidth = {{0, 1}}}),
               Error);
  EXPECT_THROW(place(g, PlacementPolicy::minmin_transfer_time,
                     PlacementOptions{.devices = 2, .bandwidth = {{0, 1}, {0, 0}}}),
               Error);
  EXPECT_THROW(place(g, PlacementPolicy::minmin_transfer_time,
                     PlacementOptions{.devices = 2, .initially_on = {{1, 2}}}),
               Error);
}

}  // namespace
}  // namespace uops::runtime
