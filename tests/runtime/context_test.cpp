// Eager mode: results equal to a sequential run, and GrCUDA's rules stated one by one:
// concurrent readers, FIFO stream reuse, host access waiting only for its work, and
// computations retired once later writes cover all they access.
#include "uops/runtime/context.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

using Ids = std::vector<ComputationId>;
using namespace std::chrono_literals;

// Waits (bounded, so a broken rule fails instead of hanging) until `flag` is set.
bool wait_until(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(EagerContext, RandomProgramsComputeAsSequentially) {
  std::mt19937 rng(11);
  constexpr std::size_t kBuffers = 12, kLaunches = 300;
  for (std::size_t max_streams : {1, 2, 3}) {
    Context context(ContextOptions{.max_streams = max_streams});
    std::vector<long> cells(kBuffers, 0), expected(kBuffers, 0);
    for (std::size_t i = 0; i < kLaunches; ++i) {
      std::vector<BufferId> reads, writes;
      for (std::size_t k = rng() % 3; k > 0; --k) reads.push_back(rng() % kBuffers);
      for (std::size_t k = 1 + rng() % 2; k > 0; --k) writes.push_back(rng() % kBuffers);
      auto step = [reads, writes, i](std::vector<long>& c) {
        long sum = long(i);
        for (BufferId b : reads) sum += c[b];
        for (BufferId b : writes) c[b] = sum % 1000003;
      };
      step(expected);
      context.launch(
          "k", [&cells, step] { step(cells); }, reads, writes);
      // Now and then the host reads a buffer: it must see every earlier write to it.
      if (rng() % 10 == 0) {
        const BufferId b = rng() % kBuffers;
        context.read(b);
        ASSERT_EQ(cells[b], expected[b]) << "launch " << i << " buffer " << b;
      }
    }
    context.sync();
    EXPECT_EQ(cells, expected);
    EXPECT_TRUE(context.active().empty());
    EXPECT_LE(context.stream_count(), max_streams);
  }
}

// Two kernels that only read a buffer do not order each other: each waits for the other to
// have started, which only works if they run at the same time.
TEST(EagerContext, ReadersOfOneBufferRunConcurrently) {
  Context context(ContextOptions{.max_streams = 2});
  Launched writer = context.launch("w", [] {}, {}, {1});
  std::atomic<bool> a_started{false}, b_started{false};
  bool a_saw_b = false, b_saw_a = false;
  Launched a = context.launch("a",
                              [&] {
                                a_started = true;
                                a_saw_b = wait_until(b_started);
                              },
                              {1}, {2});
  Launched b = context.launch("b",
                              [&] {
                                b_started = true;
                                b_saw_a = wait_until(a_started);
                              },
                              {1}, {3});
  EXPECT_EQ(a.dependencies, Ids{writer.id});
  EXPECT_EQ(b.dependencies, Ids{writer.id});
  EXPECT_EQ(a.stream, writer.stream);  // the writer's child takes over its stream
  EXPECT_NE(b.stream, a.stream);
  context.sync();
  EXPECT_TRUE(a_saw_b);
  EXPECT_TRUE(b_saw_a);
}

// Streams that ran out of work are reused in the order they did, and a new stream is made
// only when none is free.
TEST(EagerContext, FreeStreamsAreReusedInFifoOrder) {
  Context context(ContextOptions{.max_streams = 3});
  std::atomic<bool> open[3] = {false, false, false};
  for (int i = 0; i < 3; ++i) {
    Launched l = context.launch("gated", [&open, i] { wait_until(open[i]); }, {}, {BufferId(i)});
    EXPECT_EQ(l.stream, StreamIndex(i));
  }
  // Streams run out of work in the order 1, 2, 0.
  for (int i : {1, 2, 0}) {
    open[i] = true;
    context.read(BufferId(i));
  }
  for (StreamIndex expected : {1, 2, 0}) {
    Launched l = context.launch("independent", [] {}, {}, {BufferId(10 + expected)});
    EXPECT_TRUE(l.dependencies.empty());
    EXPECT_EQ(l.stream, expected);
  }
  context.sync();
  EXPECT_EQ(context.stream_count(), 3u);

  Context lazy(ContextOptions{.max_streams = 4});
  lazy.launch("first", [] {}, {}, {1});
  lazy.read(1);
  EXPECT_EQ(lazy.launch("second", [] {}, {}, {2}).stream, 0u);
  EXPECT_EQ(lazy.stream_count(), 1u);
}

// A host read or write waits for the computations touching that buffer, not for others.
TEST(EagerContext, HostAccessWaitsOnlyForItsBuffer) {
  Context context(ContextOptions{.max_streams = 2});
  std::atomic<bool> open{false}, slow_done{false};
  context.launch("slow",
                 [&] {
                   wait_until(open);
                   slow_done = true;
                 },
                 {}, {1});
  int y = 0;
  context.launch("fast", [&] { y = 42; }, {}, {2});
  context.read(2);  // would wait forever if it synchronized with "slow"
  EXPECT_EQ(y, 42);
  context.write(2);
  EXPECT_FALSE(slow_done.load());
  open = true;
  context.read(1);
  EXPECT_TRUE(slow_done.load());
  context.sync();
}

// A computation stays active until later writes cover every buffer it accesses; after that,
// later launches no longer depend on it directly.
TEST(EagerContext, CoveredComputationsRetire) {
  Context context(ContextOptions{.max_streams = 2});
  std::atomic<bool> open{false};
  Launched a = context.launch("a", [&] { wait_until(open); }, {7}, {8});  // reads 7, writes 8
  EXPECT_EQ(context.active(), Ids{a.id});
  Launched b = context.launch("b", [] {}, {}, {8});  // covers a's write
  EXPECT_EQ(b.dependencies, Ids{a.id});
  EXPECT_EQ(context.active(), (Ids{a.id, b.id}));    // a still reads 7
  Launched c = context.launch("c", [] {}, {}, {7});  // covers a's read
  EXPECT_EQ(c.dependencies, Ids{a.id});
  EXPECT_EQ(context.active(), (Ids{b.id, c.id}));
  Launched d = context.launch("d", [] {}, {8}, {});
  EXPECT_EQ(d.dependencies, Ids{b.id});
  open = true;
  context.sync();
  EXPECT_TRUE(context.active().empty());
}

TEST(EagerContext, KernelErrorIsReportedAndLaterWorkSkipped) {
  Context context(ContextOptions{.max_streams = 2});
  bool later_ran = false;
  context.launch("throws", [] { throw std::runtime_error("kernel failed"); }, {}, {1});
  context.launch("later", [&] { later_ran = true; }, {1}, {2});
  EXPECT_THROW(context.read(2), std::runtime_error);
  EXPECT_THROW(context.sync(), std::runtime_error);
  EXPECT_FALSE(later_ran);
  // Reported once; the context works again.
  context.launch("again", [&] { later_ran = true; }, {1}, {2});
  context.sync();
  EXPECT_TRUE(later_ran);
}

TEST(EagerContext, RejectsMisuse) {
  EXPECT_THROW(Context(ContextOptions{.max_streams = 0}), Error);
  Context context;
  EXPECT_THROW(context.launch("none", nullptr, {}, {}), Error);
  context.read(99);  // never touched: nothing to wait for
  context.sync();
}

}  // namespace
}  // namespace uops::runtime
