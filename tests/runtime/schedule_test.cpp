// Schedules of hand-drawn graphs, with stream and signal counts derived by hand from the
// algorithm, and properties every schedule of a random DAG must have.
#include "uops/runtime/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

using Edges = std::vector<std::pair<NodeIndex, NodeIndex>>;
using Streams = std::vector<std::vector<NodeIndex>>;

// Builds through the public builder, so the schedule sees reduced edges as in real use.
Graph graph_of(std::size_t nodes, const Edges& edges, std::size_t max_streams = 4) {
  GraphBuilder b;
  std::vector<NodeRef> refs;
  for (std::size_t i = 0; i < nodes; ++i) {
    refs.push_back(b.add(std::string("n") + std::to_string(i), [] {}, {}, {}));
  }
  for (auto [from, to] : edges) refs[from].then(refs[to]);
  return std::move(b).build(BuildOptions{.max_streams = max_streams});
}

TEST(Schedule, ChainIsOneStreamWithoutSignals) {
  Graph g = graph_of(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1, 2, 3, 4}}));
  EXPECT_TRUE(g.schedule().signals.empty());
}

TEST(Schedule, ForkJoin) {
  // a -> {b, c, d} -> e: a claims b; e is claimable only once c and d are placed, so d's
  // stream takes it. Signals: a->c, a->d, b->e, c->e.
  Graph g = graph_of(5, {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}});
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1}, {2}, {3, 4}}));
  EXPECT_EQ(g.schedule().signals.size(), 4u);
}

TEST(Schedule, ForkJoinOnOneStream) {
  Graph g = graph_of(5, {{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}}, 1);
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1, 2, 3, 4}}));
  EXPECT_TRUE(g.schedule().signals.empty());
}

TEST(Schedule, Diamond) {
  Graph g = graph_of(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1}, {2, 3}}));
  ASSERT_EQ(g.schedule().signals.size(), 2u);
  EXPECT_EQ(g.schedule().signals[0].producer, 0u);
  EXPECT_EQ(g.schedule().signals[0].consumer, 2u);
  EXPECT_EQ(g.schedule().signals[1].producer, 1u);
  EXPECT_EQ(g.schedule().signals[1].consumer, 3u);
}

TEST(Schedule, RepeatedBranchAndMerge) {
  // m0 -> {b0, c0} -> m1 -> {b1, c1} -> m2 -> {b2, c2} -> m3, numbered m0 b0 c0 m1 b1 c1 ...
  // Each c_i recycles the stream whose last node b_{i-1} is its ancestor, so two streams
  // suffice, and each branch-and-merge costs two signals (c_i waits m_i, m_{i+1} waits b_i).
  Edges edges;
  for (NodeIndex i = 0; i < 3; ++i) {
    const NodeIndex m = 3 * i, b = m + 1, c = m + 2, next = m + 3;
    edges.insert(edges.end(), {{m, b}, {m, c}, {b, next}, {c, next}});
  }
  Graph g = graph_of(10, edges);
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1, 5, 6, 7}, {2, 3, 4, 8, 9}}));
  EXPECT_EQ(g.schedule().signals.size(), 6u);
}

TEST(Schedule, IndependentNodesShareStreamsAtTheLimit) {
  Graph g = graph_of(6, {}, 2);
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 2, 4}, {1, 3, 5}}));
  EXPECT_TRUE(g.schedule().signals.empty());
}

TEST(Schedule, ChainsClaimOnlyNodesWhosePredecessorsArePlaced) {
  // Were 0 to claim 2 before 1 is placed, one stream would hold 0, 2, 1: 2 waiting on 1
  // behind it, a deadlock.
  Graph g = graph_of(3, {{0, 2}, {1, 2}}, 1);
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 1, 2}}));
}

TEST(Schedule, RanksAreComputedFromSuccessors) {
  // Edges run against insertion order, so an order-of-insertion pass would read successors'
  // ranks before computing them.
  Graph g = graph_of(4, {{3, 2}, {2, 1}, {1, 0}});
  EXPECT_EQ(g.schedule().rank, (std::vector<std::uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(g.schedule().streams, (Streams{{3, 2, 1, 0}}));
}

TEST(Schedule, ClaimsTheHighestRankedSuccessor) {
  // 0 -> 1 (a sink) and 0 -> 2 -> 3: the chain from 0 continues into the longer branch.
  Graph g = graph_of(4, {{0, 1}, {0, 2}, {2, 3}});
  EXPECT_EQ(g.schedule().streams, (Streams{{0, 2, 3}, {1}}));
  EXPECT_EQ(g.schedule().signals.size(), 1u);
}

TEST(Schedule, StreamWaitsOnceForAProducer) {
  // 0 -> 1 -> 4 stays on stream 0; 2 and 3 go to stream 1, where waiting for 0 before 2 also
  // covers the unreduced edge 0 -> 3.
  std::vector<std::vector<NodeIndex>> successors = {{1, 2, 3}, {4}, {3}, {}, {}};
  Schedule s = make_schedule(successors, 2);
  EXPECT_EQ(s.streams, (Streams{{0, 1, 4}, {2, 3}}));
  ASSERT_EQ(s.signals.size(), 1u);
  EXPECT_EQ(s.signals[0].producer, 0u);
  EXPECT_EQ(s.signals[0].consumer, 2u);
}

TEST(Schedule, RejectsZeroStreamsAndCycles) {
  EXPECT_THROW(make_schedule({{}}, 0), Error);
  EXPECT_THROW(make_schedule({{1}, {0}}, 2), Error);
}

// Happens-before of a schedule: each stream's order plus its signals.
std::vector<std::vector<NodeIndex>> happens_before(const Schedule& s, std::size_t skip_signal) {
  std::vector<std::vector<NodeIndex>> next(s.stream_of.size());
  for (const auto& stream : s.streams) {
    for (std::size_t i = 1; i < stream.size(); ++i) next[stream[i - 1]].push_back(stream[i]);
  }
  for (std::size_t i = 0; i < s.signals.size(); ++i) {
    if (i != skip_signal) next[s.signals[i].producer].push_back(s.signals[i].consumer);
  }
  return next;
}

bool reaches(const std::vector<std::vector<NodeIndex>>& next, NodeIndex from, NodeIndex to) {
  std::vector<bool> seen(next.size(), false);
  std::vector<NodeIndex> todo = {from};
  while (!todo.empty()) {
    NodeIndex v = todo.back();
    todo.pop_back();
    if (v == to) return true;
    for (NodeIndex w : next[v]) {
      if (!seen[w]) {
        seen[w] = true;
        todo.push_back(w);
      }
    }
  }
  return false;
}

// Two chains whose every rung also waits on the other chain's previous rung.
Edges ladder(std::size_t n) {
  Edges edges;
  for (NodeIndex i = 2; i < n; ++i) {
    edges.emplace_back(i - 2, i);
    edges.emplace_back(i % 2 == 0 ? i - 1 : i - 3, i);
  }
  return edges;
}

std::vector<std::vector<NodeIndex>> successors_of(std::size_t n, const Edges& edges) {
  std::vector<std::vector<NodeIndex>> successors(n);
  for (auto [from, to] : edges) successors[from].push_back(to);
  return successors;
}

TEST(Schedule, CheapKernelsWithCrossEdgesStayOnOneStream) {
  const auto successors = successors_of(100, ladder(100));
  // Without costs every cross edge of the two chains becomes a signal.
  Schedule free = make_schedule(successors, 2);
  EXPECT_EQ(free.streams.size(), 2u);
  EXPECT_GT(free.signals.size(), 90u);
  // Kernels much cheaper than a hand-off: one stream, no signals.
  const std::vector<double> cheap(100, 50.0);
  Schedule costed = make_schedule(successors, 2, cheap, 2000);
  EXPECT_EQ(costed.streams.size(), 1u);
  EXPECT_TRUE(costed.signals.empty());
  EXPECT_EQ(costed.order.size(), 100u);
  // Kernels that dwarf the hand-offs: both chains run side by side again.
  const std::vector<double> dear(100, 1e6);
  EXPECT_EQ(make_schedule(successors, 2, dear, 2000).streams.size(), 2u);
}

TEST(Schedule, CostsDecideHowManyBranchesRunInParallel) {
  // 0 -> {2, 3, 4, 5} -> 1.
  Edges edges;
  for (NodeIndex b = 2; b < 6; ++b) {
    edges.emplace_back(0, b);
    edges.emplace_back(b, 1);
  }
  const auto successors = successors_of(6, edges);
  std::vector<double> cost_ns = {0, 0, 5e5, 5e5, 5e5, 5e5};
  EXPECT_EQ(make_schedule(successors, 4, cost_ns, 2000).streams.size(), 4u);
  EXPECT_EQ(make_schedule(successors, 2, cost_ns, 2000).streams.size(), 2u);
  // Branches of 1 us cannot pay for a 2 us hand-off.
  std::fill(cost_ns.begin() + 2, cost_ns.end(), 1000);
  EXPECT_EQ(make_schedule(successors, 4, cost_ns, 2000).streams.size(), 1u);
  // Only one branch is dear: a second stream for it, not four.
  cost_ns[2] = 5e5;
  EXPECT_EQ(make_schedule(successors, 4, cost_ns, 2000).streams.size(), 2u);
}

TEST(Schedule, RejectsCostsOfTheWrongSize) {
  const std::vector<double> cost_ns(3, 1.0);
  EXPECT_THROW(make_schedule(successors_of(4, {}), 2, cost_ns, 2000), Error);
}

TEST(Schedule, DeclaredAndMeasuredCostsReachTheBuilder) {
  GraphBuilder b;
  std::vector<NodeRef> refs;
  for (int i = 0; i < 100; ++i) refs.push_back(b.add("k", [] {}, {}, {}).cost(10));
  for (auto [from, to] : ladder(100)) refs[from].then(refs[to]);
  EXPECT_THROW(refs[0].cost(-1), Error);
  Graph g = std::move(b).build(BuildOptions{.max_streams = 2});
  EXPECT_EQ(g.schedule().streams.size(), 1u);
  ASSERT_TRUE(g.node(0).cost_ns.has_value());
  EXPECT_EQ(*g.node(0).cost_ns, 10.0);
  // The same graph measured as dear (say from a trace) is spread again; the original stays.
  const std::vector<double> measured(100, 1e6);
  Graph spread = g.rescheduled(measured, BuildOptions{.max_streams = 2});
  EXPECT_EQ(spread.schedule().streams.size(), 2u);
  EXPECT_EQ(spread.edge_count(), g.edge_count());
  EXPECT_EQ(g.schedule().streams.size(), 1u);
  EXPECT_THROW(g.rescheduled(std::vector<double>(99, 1.0)), Error);
  EXPECT_THROW(g.rescheduled(std::vector<double>(100, -1.0)), Error);
}

// Every edge is enforced by stream order or signals, no signal is redundant or repeated, and
// streams never wait on each other in a circle.
void expect_sound(const Schedule& s, const std::vector<std::vector<NodeIndex>>& successors) {
  const std::size_t n = successors.size();
  std::size_t placed = 0;
  for (const auto& stream : s.streams) placed += stream.size();
  ASSERT_EQ(placed, n);
  auto hb = happens_before(s, s.signals.size());
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex w : successors[v]) {
      ASSERT_TRUE(reaches(hb, v, w)) << "edge " << v << "->" << w << " not enforced";
    }
  }
  std::set<std::pair<NodeIndex, StreamIndex>> waited;
  for (std::size_t i = 0; i < s.signals.size(); ++i) {
    const Signal& signal = s.signals[i];
    ASSERT_NE(s.stream_of[signal.producer], signal.stream);
    ASSERT_TRUE(waited.insert({signal.producer, signal.stream}).second)
        << "stream " << signal.stream << " waits twice on " << signal.producer;
    ASSERT_FALSE(reaches(happens_before(s, i), signal.producer, signal.consumer))
        << "signal " << signal.producer << "->" << signal.consumer << " is redundant";
  }
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex w : hb[v]) ASSERT_FALSE(reaches(hb, w, v));
  }
}

std::vector<std::vector<NodeIndex>> random_dag(std::mt19937& rng, std::size_t n) {
  std::vector<std::vector<NodeIndex>> successors(n);
  for (NodeIndex v = 0; v < n; ++v) {
    for (NodeIndex w = v + 1; w < n; ++w) {
      if (rng() % 100 < 4) successors[v].push_back(w);
    }
  }
  return successors;
}

TEST(Schedule, RandomDagsAreCoveredByMinimalSignals) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 30 + trial * 5;
    const std::size_t max_streams = 1 + trial % 6;
    std::vector<std::vector<NodeIndex>> successors = random_dag(rng, n);
    // Every other trial with random costs: placement and stream count differ, the guarantees
    // do not.
    std::vector<double> cost_ns;
    if (trial % 2 == 1) {
      for (std::size_t v = 0; v < n; ++v) cost_ns.push_back(double(rng() % 5000));
    }
    Schedule s = make_schedule(successors, max_streams, cost_ns, 2000);
    ASSERT_LE(s.streams.size(), max_streams);
    expect_sound(s, successors);
  }
}

// a (0) and b (1) are sources, p (2) follows both, v (4) follows a, p and the source c (3),
// and c's chain claims z (5) and z2 (6), which outrank v. When v is placed, stream 0 ends with
// a and stream 1 with p; a -> v is implied through p, so following a saves no signal: v
// follows p, and waits only for c.
TEST(Schedule, AnImpliedPredecessorIsNotFollowed) {
  const Edges reduced = {{0, 2}, {1, 2}, {2, 4}, {3, 4}, {3, 5}, {5, 6}};
  Edges with_implied = reduced;
  with_implied.emplace_back(0, 4);
  for (const Edges& edges : {reduced, with_implied}) {
    Schedule s = make_schedule(successors_of(7, edges), 4);
    EXPECT_EQ(s.streams, (Streams{{0}, {1, 2, 4}, {3, 5, 6}}));
    ASSERT_EQ(s.signals.size(), 2u);  // a -> p and c -> v
  }
}

// The builder keeps implied edges that span far (see transitive_reduction), so the schedule
// must be that of the reduced graph whatever implied edges come with it: the same streams, the
// same signals and waits, the same ranks. random_dag's graphs have many implied edges.
TEST(Schedule, ImpliedEdgesChangeNothing) {
  std::mt19937 rng(11);
  std::size_t implied = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 30 + trial * 5;
    const std::size_t max_streams = 1 + trial % 6;
    const std::vector<std::vector<NodeIndex>> successors = random_dag(rng, n);
    // reach[v]: nodes reachable from v by one or more edges; an edge is implied when another
    // successor reaches its target.
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    std::vector<std::vector<NodeIndex>> reduced(n);
    for (std::size_t v = n; v-- > 0;) {
      for (NodeIndex w : successors[v]) {
        reach[v][w] = true;
        for (std::size_t x = w + 1; x < n; ++x) reach[v][x] = reach[v][x] || reach[w][x];
      }
      for (NodeIndex w : successors[v]) {
        const bool through_another = std::any_of(successors[v].begin(), successors[v].end(),
                                                 [&](NodeIndex other) { return reach[other][w]; });
        if (through_another) {
          ++implied;
        } else {
          reduced[v].push_back(w);
        }
      }
    }
    std::vector<double> cost_ns;
    if (trial % 2 == 1) {
      for (std::size_t v = 0; v < n; ++v) cost_ns.push_back(double(rng() % 5000));
    }
    const Schedule with = make_schedule(successors, max_streams, cost_ns, 2000);
    const Schedule without = make_schedule(reduced, max_streams, cost_ns, 2000);
    ASSERT_EQ(with.streams, without.streams) << "trial " << trial;
    ASSERT_EQ(with.order, without.order) << "trial " << trial;
    ASSERT_EQ(with.rank, without.rank) << "trial " << trial;
    ASSERT_EQ(with.waits, without.waits) << "trial " << trial;
    ASSERT_EQ(with.signals.size(), without.signals.size()) << "trial " << trial;
    for (std::size_t i = 0; i < with.signals.size(); ++i) {
      EXPECT_EQ(with.signals[i].producer, without.signals[i].producer);
      EXPECT_EQ(with.signals[i].consumer, without.signals[i].consumer);
      EXPECT_EQ(with.signals[i].stream, without.signals[i].stream);
    }
  }
  EXPECT_GT(implied, 1000u);
}

// NNC's tie-break. Three sources fill three streams; "join" and the "relu" after it follow the
// last source on stream 2. The last node may then recycle stream 0 or 1 (both ran only its
// ancestors): it takes the one that ran its command, else the lower index.
TEST(Schedule, TiesGoToTheStreamThatRanTheSameCommand) {
  auto streams_with_last_named = [](const std::string& name) {
    GraphBuilder b;
    std::vector<NodeRef> refs;
    for (const char* source : {"conv", "gemm", "relu"})
      refs.push_back(b.add(source, [] {}, {}, {}));
    NodeRef join = b.add("join", [] {}, {}, {});
    when_all(refs).then(join);
    join.then(b.add("relu", [] {}, {}, {}));
    join.then(b.add(name, [] {}, {}, {}));
    return std::move(b).build(BuildOptions{.max_streams = 3}).schedule().streams;
  };
  EXPECT_EQ(streams_with_last_named("gemm"), (Streams{{0}, {1, 5}, {2, 3, 4}}));
  EXPECT_EQ(streams_with_last_named("conv"), (Streams{{0, 5}, {1}, {2, 3, 4}}));
  EXPECT_EQ(streams_with_last_named("other"), (Streams{{0, 5}, {1}, {2, 3, 4}}));

  // The same through make_schedule's command ids; without them the lower index wins.
  std::vector<std::vector<NodeIndex>> successors = {{3}, {3}, {3}, {4, 5}, {}, {}};
  const std::vector<std::uint32_t> command = {7, 8, 9, 10, 9, 8};
  EXPECT_EQ(make_schedule(successors, 3, {}, 0, command).streams,
            (Streams{{0}, {1, 5}, {2, 3, 4}}));
  EXPECT_EQ(make_schedule(successors, 3).streams, (Streams{{0, 5}, {1}, {2, 3, 4}}));
  EXPECT_THROW(make_schedule(successors, 3, {}, 0, std::vector<std::uint32_t>(5, 0)), Error);
}

// Bound to devices, nodes stay on their device's streams, and the guarantees still hold.
TEST(Schedule, DeviceSchedulesKeepNodesOnTheirDevices) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 30 + trial * 7, devices = 1 + trial % 3, per_device = 1 + trial % 2;
    std::vector<std::vector<NodeIndex>> successors = random_dag(rng, n);
    std::vector<DeviceIndex> device_of(n);
    for (auto& d : device_of) d = DeviceIndex(rng() % devices);
    Schedule s = make_device_schedule(successors, device_of, devices, per_device);
    ASSERT_EQ(s.streams.size(), devices * per_device);
    for (NodeIndex v = 0; v < n; ++v) {
      ASSERT_EQ(s.stream_of[v] / per_device, device_of[v]) << "node " << v;
    }
    expect_sound(s, successors);
  }
  const std::vector<DeviceIndex> on_two = {0, 1};
  EXPECT_THROW(make_device_schedule({{1}, {}}, on_two, 1, 1), Error);
  EXPECT_THROW(make_device_schedule({{1}, {}}, on_two, 2, 0), Error);
  EXPECT_THROW(make_device_schedule({{1}, {}, {}}, on_two, 2, 1), Error);
}

}  // namespace
}  // namespace uops::runtime
