// Placed runs on several CPU devices: every policy's placement of random programs, executed with
// explicit copy nodes on separate worker pools, computes what one device computes.
#include "uops/runtime/devices.h"

#include <gtest/gtest.h>

#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/cpu_executor.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

using Buffers = std::vector<std::vector<long>>;  // per buffer id, its elements

struct Op {
  std::vector<BufferId> reads, writes;
  long salt;
  void operator()(Buffers& b) const {
    for (BufferId w : writes) {
      for (std::size_t i = 0; i < b[w].size(); ++i) {
        long sum = salt + long(i);
        for (BufferId r : reads) sum += 3 * b[r][i];
        b[w][i] = (sum + b[w][i]) % 1000003;  // reads what it writes, too
      }
    }
  }
};

constexpr std::size_t kBuffers = 10, kElements = 16;

std::vector<Op> random_program(std::mt19937& rng, std::size_t launches) {
  std::vector<Op> ops;
  for (std::size_t i = 0; i < launches; ++i) {
    Op op{{}, {}, long(i)};
    for (std::size_t k = rng() % 3; k > 0; --k) op.reads.push_back(rng() % kBuffers);
    op.writes.push_back(rng() % kBuffers);
    ops.push_back(op);
  }
  return ops;
}

Buffers initial_buffers() {
  Buffers b(kBuffers, std::vector<long>(kElements));
  for (std::size_t i = 0; i < kBuffers; ++i) {
    for (std::size_t j = 0; j < kElements; ++j) b[i][j] = long(i * 100 + j);
  }
  return b;
}

TEST(Devices, EveryPolicysPlacedRunEqualsTheSingleDeviceRun) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    const std::vector<Op> ops = random_program(rng, 60);
    Buffers host = initial_buffers();
    GraphBuilder builder;
    for (const Op& op : ops) {
      builder
          .add(
              "op", [&host, op] { op(host); }, op.reads, op.writes)
          .cost(1 + rng() % 5);
    }
    const Graph graph = std::move(builder).build();
    Buffers expected = host;
    for (int run = 0; run < 2; ++run) {
      for (const Op& op : ops) op(expected);
    }

    for (PlacementPolicy policy :
         {PlacementPolicy::round_robin, PlacementPolicy::stream_aware,
          PlacementPolicy::min_transfer_size, PlacementPolicy::minmin_transfer_time,
          PlacementPolicy::minmax_transfer_time}) {
      PlacementOptions options{.devices = 2 + std::size_t(trial % 2),
                               .streams_per_device = 1 + std::size_t(trial / 2 % 2)};
      for (BufferId b = 0; b < kBuffers; ++b) options.bytes[b] = 8 * kElements * (1 + b % 3);
      const Placement placement = place(graph, policy, options);

      // Devices other than 0 start with garbage: a missing copy shows in the results.
      std::vector<Buffers> device(options.devices,
                                  Buffers(kBuffers, std::vector<long>(kElements, -7)));
      device[0] = initial_buffers();
      std::mutex mutex;
      std::vector<std::set<std::thread::id>> threads(options.devices);
      DeviceWork work{[&](NodeIndex n, DeviceIndex d) {
                        ops[n](device[d]);
                        std::lock_guard lock(mutex);
                        threads[d].insert(std::this_thread::get_id());
                      },
                      [&](BufferId b, DeviceIndex from, DeviceIndex to) {
                        device[to][b] = device[from][b];
                        std::lock_guard lock(mutex);
                        threads[to].insert(std::this_thread::get_id());
                      }};
      const Graph placed = placed_graph(graph, placement, options, work);
      ASSERT_EQ(placed.size(), graph.size() + placement.transfers.size() + placement.gather.size());
      ASSERT_EQ(placed.schedule().streams.size(), options.devices * options.streams_per_device);
      CpuExecutor executor(placed);
      executor.run();
      executor.run();  // again, from the results of the first run
      EXPECT_EQ(device[0], expected) << "trial " << trial << " policy " << int(policy);

      // Each device's work ran on threads of its own.
      for (std::size_t a = 0; a < options.devices; ++a) {
        for (std::size_t b = a + 1; b < options.devices; ++b) {
          for (std::thread::id t : threads[a]) EXPECT_EQ(threads[b].count(t), 0u);
        }
      }
    }
  }
}

// Round robin over two devices: the copy nodes sit where the transfers say, on the destination
// device's stream, and the result comes back to device 0.
TEST(Devices, CopyNodesFollowTheTransfers) {
  GraphBuilder b;
  b.add("produce", [] {}, {}, {1});
  b.add("consume", [] {}, {1}, {2});
  const Graph graph = std::move(b).build();
  PlacementOptions options{.devices = 2, .bytes = {{1, 8}, {2, 8}}};
  const Placement placement = place(graph, PlacementPolicy::round_robin, options);
  ASSERT_EQ(placement.device_of, (std::vector<DeviceIndex>{0, 1}));
  std::vector<std::string> log;
  std::mutex mutex;
  DeviceWork work{[&](NodeIndex n, DeviceIndex d) {
                    std::lock_guard lock(mutex);
                    log.push_back("run " + std::to_string(n) + " on " + std::to_string(d));
                  },
                  [&](BufferId buffer, DeviceIndex from, DeviceIndex to) {
                    std::lock_guard lock(mutex);
                    log.push_back("copy " + std::to_string(buffer) + " " + std::to_string(from) +
                                  "->" + std::to_string(to));
                  }};
  const Graph placed = placed_graph(graph, placement, options, work);
  std::vector<std::string> names;
  for (NodeIndex n = 0; n < placed.size(); ++n) names.push_back(placed.node(n).name);
  EXPECT_EQ(names, (std::vector<std::string>{"produce", "copy 1 d0->d1", "copy 2 d0->d1", "consume",
                                             "copy 2 d1->d0"}));
  EXPECT_EQ(placed.schedule().streams, (std::vector<std::vector<NodeIndex>>{{0, 4}, {1, 2, 3}}));
  CpuExecutor(placed).run();
  EXPECT_EQ(log, (std::vector<std::string>{"run 0 on 0", "copy 1 0->1", "copy 2 0->1", "run 1 on 1",
                                           "copy 2 1->0"}));
}

TEST(Devices, RejectsPlacementsThatDoNotFit) {
  GraphBuilder b;
  b.add("k", [] {}, {}, {1});
  const Graph graph = std::move(b).build();
  DeviceWork work{[](NodeIndex, DeviceIndex) {}, [](BufferId, DeviceIndex, DeviceIndex) {}};
  PlacementOptions options{.devices = 2};
  Placement placement = place(graph, PlacementPolicy::round_robin, options);
  EXPECT_THROW(placed_graph(graph, placement, options, DeviceWork{}), Error);
  EXPECT_THROW(placed_graph(graph, placement, PlacementOptions{.devices = 0}, work), Error);
  Placement wrong = placement;
  wrong.device_of = {2};
  EXPECT_THROW(placed_graph(graph, wrong, options, work), Error);
  wrong.device_of = {0, 1};
  EXPECT_THROW(placed_graph(graph, wrong, options, work), Error);
  wrong = placement;
  wrong.transfers.push_back(Transfer{1, 0, 1, 1, 0, 0});
  EXPECT_THROW(placed_graph(graph, wrong, options, work), Error);
}

}  // namespace
}  // namespace uops::runtime
