#include "runtime/thread_affinity.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>
#include <vector>

namespace uops::runtime {
namespace {

cpu_set_t allowed_now() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  EXPECT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  return allowed;
}

// Each test runs on a thread of its own, so that the narrowed masks die with it.
template <typename Body>
void on_a_thread(Body body) {
  std::thread([&] { body(); }).join();
}

TEST(ThreadAffinity, StepOffMovesTheThreadAndGivesBackItsCores) {
  on_a_thread([] {
    const cpu_set_t before = allowed_now();
    if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "needs two cores";
    // The kernel may move the thread back on its own between two calls; one of three tries
    // must see it elsewhere.
    bool moved = false;
    for (int attempt = 0; attempt < 3 && !moved; ++attempt) {
      const int cpu = sched_getcpu();
      step_off(cpu);
      moved = sched_getcpu() != cpu;
    }
    EXPECT_TRUE(moved);
    const cpu_set_t after = allowed_now();
    EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "its cores were not given back";
  });
}

TEST(ThreadAffinity, KeepOffLeavesTheCoreOutOfTheMask) {
  on_a_thread([] {
    const cpu_set_t before = allowed_now();
    if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "needs two cores";
    const int cpu = sched_getcpu();
    keep_off(cpu);
    const cpu_set_t after = allowed_now();
    EXPECT_FALSE(CPU_ISSET(cpu, &after));
    EXPECT_EQ(CPU_COUNT(&after), CPU_COUNT(&before) - 1);
    EXPECT_NE(sched_getcpu(), cpu);
  });
}

TEST(ThreadAffinity, TheOnlyCoreIsKept) {
  on_a_thread([] {
    cpu_set_t one;
    CPU_ZERO(&one);
    const int cpu = sched_getcpu();
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    step_off(cpu);
    keep_off(cpu);
    const cpu_set_t after = allowed_now();
    EXPECT_TRUE(CPU_EQUAL(&one, &after));
    EXPECT_EQ(sched_getcpu(), cpu);
    step_off(-1);  // an unknown core: nothing to move off
    const cpu_set_t still = allowed_now();
    EXPECT_TRUE(CPU_EQUAL(&one, &still));
  });
}

// More threads spinning than the machine has cores: no core is idle.
TEST(ThreadAffinity, NoIdleCoreWhileEveryCoreSpins) {
  const cpu_set_t allowed = allowed_now();
  std::atomic<bool> stop{false};
  std::atomic<int> spinning{0};
  std::vector<std::thread> spinners;
  for (int i = 0; i <= CPU_COUNT(&allowed); ++i) {
    spinners.emplace_back([&] {
      spinning.fetch_add(1);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  while (spinning.load() < int(spinners.size())) std::this_thread::yield();
  const bool idle = idle_core_likely();
  stop = true;
  for (std::thread& t : spinners) t.join();
  EXPECT_FALSE(idle);
}

}  // namespace
}  // namespace uops::runtime
