#include "handoff_cost.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "thread_affinity.h"
#include "wait.h"

namespace uops::runtime {
namespace {

using Clock = std::chrono::steady_clock;

double nanoseconds(Clock::duration d) {
  return std::chrono::duration<double, std::nano>(d).count();
}

// Polls until `signal` holds `value`, yielding the core after a while so that on a loaded
// machine the thread it waits for can run.
void poll_until(const std::atomic<std::uint32_t>& signal, std::uint32_t value) {
  for (int polls = 0; signal.load(std::memory_order_acquire) != value; ++polls) {
    if (polls < 256) {
      cpu_pause();
    } else {
      std::this_thread::yield();
    }
  }
}

double fastest(const std::vector<double>& values) {
  return *std::min_element(values.begin(), values.end());
}

// Round trips between two polling threads; a batch's time per one-way hand-off, the fastest
// batch. The fastest, not a typical one: on a loaded machine most batches wait for a core,
// and an optimistic figure only sends a plan to the executor's trial against one stream,
// where real runs decide.
double signal_ns() {
  constexpr int kBatches = 7, kRoundTrips = 50;
  std::atomic<std::uint32_t> ping{0}, pong{0};
  std::thread echo([&, cpu = sched_getcpu()] {
    // Started on this core, it would measure a switch between two threads of one core (8 us
    // instead of 0.03), not what workers settled on their own cores pay.
    keep_off(cpu);
    for (std::uint32_t i = 1; i <= kBatches * kRoundTrips; ++i) {
      poll_until(ping, i);
      pong.store(i, std::memory_order_release);
    }
  });
  std::vector<double> batches;
  std::uint32_t i = 0;
  for (int b = 0; b < kBatches; ++b) {
    const auto start = Clock::now();
    for (int r = 0; r < kRoundTrips; ++r) {
      ping.store(++i, std::memory_order_release);
      poll_until(pong, i);
    }
    batches.push_back(nanoseconds(Clock::now() - start) / (2.0 * kRoundTrips));
  }
  echo.join();
  return fastest(batches);
}

// A thread asleep on a futex, notified after it has had time to fall asleep; the shortest
// delay from the notification to its first instruction after the wait (see signal_ns).
double wakeup_ns() {
  constexpr int kSamples = 9;
  std::atomic<std::uint32_t> bell{0};
  std::atomic<std::int64_t> woke{0};
  std::thread sleeper([&, cpu = sched_getcpu()] {
    keep_off(cpu);
    for (std::uint32_t i = 1; i <= kSamples; ++i) {
      bell.wait(i - 1, std::memory_order_acquire);
      woke.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
      woke.notify_one();
    }
  });
  std::vector<double> samples;
  for (std::uint32_t i = 1; i <= kSamples; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const std::int64_t before = woke.load(std::memory_order_acquire);
    const auto at = Clock::now();
    bell.store(i, std::memory_order_release);
    bell.notify_one();
    woke.wait(before, std::memory_order_acquire);
    samples.push_back(double(woke.load(std::memory_order_acquire) - at.time_since_epoch().count()) *
                      (1e9 * Clock::period::num / Clock::period::den));
  }
  sleeper.join();
  return fastest(samples);
}

double clock_ns() {
  constexpr int kReads = 1000;
  const auto start = Clock::now();
  for (int i = 0; i < kReads; ++i) (void)Clock::now();
  return nanoseconds(Clock::now() - start) / kReads;
}

}  // namespace

const HandoffCost& measured_handoff_cost() {
  static const HandoffCost cost{signal_ns(), wakeup_ns(), clock_ns()};
  return cost;
}

}  // namespace uops::runtime
