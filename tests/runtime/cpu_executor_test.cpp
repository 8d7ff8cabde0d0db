// The CPU executor: results, failures, and a randomized check that no inferred dependency is
// ever violated.
#include "uops/runtime/cpu_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "uops/runtime/builder.h"
#include "uops/runtime/error.h"

#if defined(__SANITIZE_THREAD__)
#define UOPS_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UOPS_UNDER_TSAN 1
#endif
#endif

namespace uops::runtime {
namespace {

#ifdef UOPS_UNDER_TSAN
constexpr std::size_t kRandomNodes = 1500;
constexpr int kRandomRuns = 8;
#else
constexpr std::size_t kRandomNodes = 4000;
constexpr int kRandomRuns = 25;
#endif

TEST(CpuExecutor, ComputesThroughDependencies) {
  int x = 0, y = 0, z = 0, w = 0;
  GraphBuilder b;
  b.add("x", [&] { x = 1; }, {}, {buffer_id(&x)});
  b.add("y", [&] { y = x + 1; }, {buffer_id(&x)}, {buffer_id(&y)});
  b.add("z", [&] { z = x * 10; }, {buffer_id(&x)}, {buffer_id(&z)});
  b.add("w", [&] { w += y + z; }, {buffer_id(&y), buffer_id(&z), buffer_id(&w)}, {buffer_id(&w)});
  CpuExecutor executor(std::move(b).build());
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u);
  for (int run = 1; run <= 3; ++run) {
    executor.run();
    EXPECT_EQ(w, 12 * run);
  }
}

TEST(CpuExecutor, EmptyGraphRuns) {
  CpuExecutor executor(GraphBuilder().build());
  Trace trace;
  executor.run(&trace);
  EXPECT_TRUE(trace.events.empty());
}

TEST(CpuExecutor, RejectsNodesWithoutCpuKernel) {
  GraphBuilder b;
  b.add_cuda("gpu only", [](CudaStream) {}, {}, {});
  EXPECT_THROW(CpuExecutor(std::move(b).build()), Error);
}

TEST(CpuExecutor, ThrowingKernelStopsTheRunAndGraphRunsAgain) {
  std::atomic<bool> fail{true};
  std::vector<std::atomic<int>> ran(6);
  auto count = [&](int i) { return [&ran, i] { ran[i].fetch_add(1); }; };
  GraphBuilder b;
  NodeRef a = b.add("a", count(0), {}, {});
  NodeRef bad = b.add("bad",
                      [&] {
                        ran[1].fetch_add(1);
                        if (fail) throw std::logic_error("boom");
                      },
                      {}, {});
  NodeRef after = b.add("after", count(2), {}, {});
  NodeRef side1 = b.add("side1", count(3), {}, {});
  NodeRef side2 = b.add("side2", count(4), {}, {});
  NodeRef join = b.add("join", count(5), {}, {});
  a.then(bad).then(after);
  a.then(side1).then(side2);
  when_all({after, side2}).then(join);
  CpuExecutor executor(std::move(b).build(BuildOptions{.max_streams = 2}));
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u);

  try {
    executor.run();
    FAIL() << "error not rethrown";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "boom");
  }
  EXPECT_EQ(ran[0], 1);
  EXPECT_EQ(ran[1], 1);
  EXPECT_EQ(ran[2], 0);  // depends on the failed kernel
  EXPECT_EQ(ran[5], 0);

  fail = false;
  executor.run();
  EXPECT_EQ(ran[0], 2);
  EXPECT_EQ(ran[1], 2);
  EXPECT_EQ(ran[2], 1);
  EXPECT_EQ(ran[5], 1);
}

TEST(CpuExecutor, EveryKernelThrowingStillReturnsOneError) {
  GraphBuilder b;
  for (int i = 0; i < 50; ++i) {
    b.add(std::string("n") + std::to_string(i),
          [i] { throw std::runtime_error(std::to_string(i)); }, {}, {});
  }
  CpuExecutor executor(std::move(b).build(BuildOptions{.max_streams = 4}));
  for (int run = 0; run < 20; ++run) EXPECT_THROW(executor.run(), std::runtime_error);
}

TEST(CpuExecutor, TraceFollowsDependencies) {
  GraphBuilder b;
  for (int i = 0; i < 20; ++i) {
    b.add(std::string("k") + std::to_string(i), [] {}, {BufferId(i % 3)}, {BufferId(i % 4)});
  }
  Graph graph = std::move(b).build(BuildOptions{.max_streams = 3});
  CpuExecutor executor(graph);
  Trace trace;
  executor.run(&trace);
  ASSERT_EQ(trace.events.size(), graph.size());
  EXPECT_EQ(trace.stream_count, graph.schedule().streams.size());
  std::vector<const TraceEvent*> by_node(graph.size());
  for (const TraceEvent& e : trace.events) by_node[e.node] = &e;
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    ASSERT_NE(by_node[n], nullptr);
    EXPECT_EQ(by_node[n]->stream, graph.schedule().stream_of[n]);
    EXPECT_GE(by_node[n]->start_us, 0.0);
    for (NodeIndex s : graph.successors(n)) {
      EXPECT_GE(by_node[s]->start_us, by_node[n]->start_us + by_node[n]->duration_us);
    }
  }
}

// Random access sets over a few dozen buffers. Every kernel does plain (non-atomic) reads and
// writes of its buffers, so a missing dependency shows up three ways: as a start/end order
// violation, as a result differing from sequential execution, and as a race under TSan.
struct RandomProgram {
  static constexpr std::size_t kBuffers = 40;
  std::vector<std::vector<BufferId>> reads, writes;
  std::vector<std::pair<NodeIndex, NodeIndex>> explicit_edges;

  RandomProgram(std::size_t n, std::mt19937& rng) : reads(n), writes(n) {
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t k = rng() % 4; k > 0; --k) reads[i].push_back(rng() % kBuffers);
      for (std::size_t k = rng() % 3; k > 0; --k) writes[i].push_back(rng() % kBuffers);
      if (i > 0 && rng() % 20 == 0) {
        explicit_edges.emplace_back(static_cast<NodeIndex>(rng() % i), static_cast<NodeIndex>(i));
      }
    }
  }

  // What each node computes: the sum of what it reads, plus its index, into what it writes.
  static void step(std::vector<long>& cells, const std::vector<BufferId>& in,
                   const std::vector<BufferId>& out, long index) {
    long sum = index;
    for (BufferId b : in) sum += cells[b];
    for (BufferId b : out) cells[b] = sum % 1000003;
  }

  std::vector<long> sequential() const {
    std::vector<long> cells(kBuffers, 0);
    for (std::size_t i = 0; i < reads.size(); ++i) step(cells, reads[i], writes[i], long(i));
    return cells;
  }

  // Pairs that must run in order: an explicit edge, or a write conflicting with an access.
  std::vector<std::pair<NodeIndex, NodeIndex>> ordered_pairs() const {
    auto pairs = explicit_edges;
    auto touches = [](const std::vector<BufferId>& set, BufferId b) {
      return std::find(set.begin(), set.end(), b) != set.end();
    };
    for (NodeIndex j = 0; j < reads.size(); ++j) {
      for (NodeIndex i = 0; i < j; ++i) {
        bool conflict = false;
        for (BufferId b : writes[i]) conflict |= touches(reads[j], b) || touches(writes[j], b);
        for (BufferId b : reads[i]) conflict |= touches(writes[j], b);
        if (conflict) pairs.emplace_back(i, j);
      }
    }
    return pairs;
  }
};

// A random program built as a graph, and the checks after each of its runs. Its kernels take
// the clock before and after their step. Relaxed: a stronger order would synchronize the
// kernels with each other and hide a missing dependency from TSan; coherence still orders the
// clock values of kernels the executor orders.
struct RandomRuns {
  const RandomProgram& program;
  std::vector<long> cells = std::vector<long>(RandomProgram::kBuffers);
  std::atomic<std::uint64_t> clock{0};
  std::vector<std::uint64_t> start, end;
  const std::vector<long> expected;
  const std::vector<std::pair<NodeIndex, NodeIndex>> pairs;

  explicit RandomRuns(const RandomProgram& p)
      : program(p),
        start(p.reads.size()),
        end(p.reads.size()),
        expected(p.sequential()),
        pairs(p.ordered_pairs()) {}

  // `work(i)`, if given, runs in node i's kernel before its step.
  Graph graph(std::size_t max_streams, std::function<void(std::size_t)> work = {}) {
    GraphBuilder b;
    std::vector<NodeRef> refs;
    for (std::size_t i = 0; i < program.reads.size(); ++i) {
      refs.push_back(b.add(
          "n" + std::to_string(i),
          [this, i, work] {
            start[i] = clock.fetch_add(1, std::memory_order_relaxed);
            if (work) work(i);
            RandomProgram::step(cells, program.reads[i], program.writes[i], long(i));
            end[i] = clock.fetch_add(1, std::memory_order_relaxed);
          },
          program.reads[i], program.writes[i]));
    }
    for (auto [from, to] : program.explicit_edges) refs[from].then(refs[to]);
    return std::move(b).build(BuildOptions{.max_streams = max_streams});
  }

  void run_and_check(CpuExecutor& executor) {
    std::fill(cells.begin(), cells.end(), 0);
    const std::uint64_t run_start = clock.load();
    executor.run();
    ASSERT_EQ(clock.load() - run_start, 2 * program.reads.size()) << "some kernel did not run once";
    for (auto [i, j] : pairs) {
      ASSERT_LT(end[i], start[j]) << "node " << j << " started before node " << i << " ended";
    }
    ASSERT_EQ(cells, expected);
  }
};

TEST(CpuExecutor, RandomDagsNeverViolateADependency) {
  std::mt19937 rng(2024);
  // Each stream count with another wait policy: passive (sleep at once), a poll that often
  // runs out and sleeps, and a long poll.
  const std::chrono::microseconds spins[] = {
      std::chrono::microseconds(0), std::chrono::microseconds(20), std::chrono::microseconds(1000)};
  for (std::size_t max_streams : {2, 3, 4}) {
    RandomProgram program(kRandomNodes, rng);
    RandomRuns runs(program);
    // Not re-planned: these kernels are cheap enough to end on one stream.
    CpuExecutor executor(runs.graph(max_streams),
                         CpuExecutorOptions{.spin = spins[max_streams - 2], .measured_runs = 0});
    ASSERT_EQ(executor.graph().schedule().streams.size(), max_streams);
    ASSERT_FALSE(executor.graph().schedule().signals.empty());
    for (int run = 0; run < kRandomRuns; ++run)
      ASSERT_NO_FATAL_FAILURE(runs.run_and_check(executor));
  }
}

// The same check through a re-plan and the trial against one stream, which switch schedules
// between runs while the workers stay: one node in 50 computes for about 20 us, so that the
// re-plan keeps several streams and the trial runs.
TEST(CpuExecutor, RandomDagsStayOrderedThroughRePlans) {
  std::mt19937 rng(7);
  RandomProgram program(kRandomNodes / 4, rng);
  RandomRuns runs(program);
  CpuExecutor executor(runs.graph(3,
                                  [](std::size_t i) {
                                    if (i % 50 != 0) return;
                                    const auto until = std::chrono::steady_clock::now() +
                                                       std::chrono::microseconds(20);
                                    while (std::chrono::steady_clock::now() < until) {
                                    }
                                  }),
                       CpuExecutorOptions{.spin = std::chrono::microseconds(20)});
  std::set<std::size_t> stream_counts = {executor.graph().schedule().streams.size()};
  for (int run = 0; run < 12; ++run) {
    ASSERT_NO_FATAL_FAILURE(runs.run_and_check(executor)) << "run " << run;
    stream_counts.insert(executor.graph().schedule().streams.size());
  }
  EXPECT_GT(stream_counts.size(), 1u) << "no re-plan changed the schedule";
}

// Empty kernels with a hand-off at every rung: the first run measures them, and the re-plan
// (with its trial of the plans against one stream) puts the ladder on one stream.
TEST(CpuExecutor, CheapNodesEndOnOneStreamAfterMeasuring) {
  GraphBuilder b;
  std::vector<NodeRef> nodes;
  for (int i = 0; i < 200; ++i) nodes.push_back(b.add("k", [] {}, {}, {}));
  for (std::size_t i = 2; i < nodes.size(); ++i) {
    nodes[i - 2].then(nodes[i]);
    nodes[i % 2 == 0 ? i - 1 : i - 3].then(nodes[i]);
  }
  CpuExecutor executor(std::move(b).build(BuildOptions{.max_streams = 2}));
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u);
  for (int run = 0; run < 6; ++run) executor.run();
  const Schedule& plan = executor.graph().schedule();
  EXPECT_EQ(plan.streams.size(), 1u);
  EXPECT_TRUE(plan.signals.empty());
  EXPECT_GT(plan.wakeup_ns, 0.0);
  for (NodeIndex n = 0; n < executor.graph().size(); ++n) {
    EXPECT_TRUE(executor.graph().node(n).cost_ns.has_value()) << n;
  }
}

// Branches that take far longer than a wake-up stay on their own streams: after the measured
// run, the trial against one stream takes six runs.
TEST(CpuExecutor, LongBranchesStayParallelAfterMeasuring) {
  GraphBuilder b;
  NodeRef source = b.add("source", [] {}, {}, {});
  NodeRef sink = b.add("sink", [] {}, {}, {});
  for (int i = 0; i < 2; ++i) {
    source
        .then(b.add("branch", [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); },
                    {}, {}))
        .then(sink);
  }
  CpuExecutor executor(std::move(b).build(BuildOptions{.max_streams = 2}));
  for (int run = 0; run < 7; ++run) executor.run();
  EXPECT_EQ(executor.graph().schedule().streams.size(), 2u);
  EXPECT_GT(executor.graph().schedule().handoff_ns, 0.0);
}

TEST(CpuExecutor, DeclaredCostsAreNeverReplanned) {
  GraphBuilder b;
  std::vector<NodeRef> nodes;
  for (int i = 0; i < 50; ++i) nodes.push_back(b.add("k", [] {}, {}, {}).cost(1e6));
  for (std::size_t i = 2; i < nodes.size(); ++i) nodes[i - 2].then(nodes[i]);
  Graph graph = std::move(b).build(BuildOptions{.max_streams = 2});
  ASSERT_EQ(graph.schedule().streams.size(), 2u);
  CpuExecutor executor(graph);
  for (int run = 0; run < 6; ++run) executor.run();
  executor.remeasure();
  for (int run = 0; run < 6; ++run) executor.run();
  EXPECT_EQ(executor.graph().schedule().stream_of, graph.schedule().stream_of);
  for (NodeIndex n = 0; n < graph.size(); ++n) EXPECT_EQ(executor.graph().node(n).cost_ns, 1e6);
}

// With workers that sleep at once (no polling), the caller reaches the join long before a
// worker wakes up: it runs the other stream's branch itself instead of waiting for the wake-up.
TEST(CpuExecutor, CallerTakesOverAStreamWhoseWorkerIsAsleep) {
  const std::thread::id caller = std::this_thread::get_id();
  std::thread::id ran_on;
  GraphBuilder b;
  NodeRef source = b.add("source", [] {}, {}, {});
  NodeRef sink = b.add("sink", [] {}, {}, {});
  source.then(b.add("a", [] {}, {}, {})).then(sink);
  source.then(b.add("b", [&] { ran_on = std::this_thread::get_id(); }, {}, {})).then(sink);
  CpuExecutor executor(
      std::move(b).build(BuildOptions{.max_streams = 2}),
      CpuExecutorOptions{.spin = std::chrono::microseconds(0), .measured_runs = 0});
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u);
  int taken = 0;
  for (int run = 0; run < 50; ++run) {
    ran_on = {};
    executor.run();
    ASSERT_NE(ran_on, std::thread::id());
    taken += ran_on == caller;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  EXPECT_GT(taken, 0);
}

// A stream is claimed node by node: when the caller started on a sleeping worker's stream, the
// worker, once awake, takes the nodes the caller has not reached.
TEST(CpuExecutor, AWorkerThatWakesLateTakesTheRestOfItsStream) {
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran_on(3);
  GraphBuilder b;
  NodeRef source = b.add("source", [] {}, {}, {});
  NodeRef sink = b.add("sink", [] {}, {}, {});
  NodeRef a = source.then(b.add("a0", [] {}, {}, {}));
  for (int i = 1; i < 4; ++i) a = a.then(b.add("a" + std::to_string(i), [] {}, {}, {}));
  a.then(sink);
  NodeRef branch = source;
  for (std::size_t i = 0; i < ran_on.size(); ++i) {
    branch = branch.then(b.add("b" + std::to_string(i),
                               [&ran_on, i, caller] {
                                 ran_on[i] = std::this_thread::get_id();
                                 // On the caller, leave the woken worker time to claim the next
                                 // node.
                                 if (ran_on[i] == caller)
                                   std::this_thread::sleep_for(std::chrono::milliseconds(20));
                               },
                               {}, {}));
  }
  branch.then(sink);
  CpuExecutor executor(
      std::move(b).build(BuildOptions{.max_streams = 2}),
      CpuExecutorOptions{.spin = std::chrono::microseconds(0), .measured_runs = 0});
  const Graph& graph = executor.graph();
  ASSERT_EQ(graph.schedule().streams.size(), 2u);
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    const char kind = graph.node(n).name[0];
    if (kind == 'a' || kind == 'b') {
      ASSERT_EQ(graph.schedule().stream_of[n], kind == 'b' ? 1u : 0u) << n;
    }
  }
  int split = 0;
  for (int run = 0; run < 20 && split == 0; ++run) {
    std::fill(ran_on.begin(), ran_on.end(), std::thread::id());
    executor.run();
    for (const std::thread::id& id : ran_on) ASSERT_NE(id, std::thread::id());
    split += ran_on.front() == caller && ran_on.back() != caller;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(split, 0);
}

}  // namespace
}  // namespace uops::runtime
