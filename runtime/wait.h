// Waiting on a 32-bit atomic the way every thread of the runtime does: poll for a bounded
// time (a futex round trip costs more than a short kernel), then sleep on the futex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace uops::runtime {

inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Returns the value of `signal` once it differs from `old`: polling for up to `spin` (pausing
// first, then yielding the core to other runnable threads), then sleeping. A zero `spin`
// sleeps at once. Whoever changes the value must notify_all() for sleepers to wake.
inline std::uint32_t await_change(const std::atomic<std::uint32_t>& signal, std::uint32_t old,
                                  std::chrono::steady_clock::duration spin) {
  constexpr int kPauses = 256;  // before polling switches from pause to yield
  std::uint32_t now = signal.load(std::memory_order_acquire);
  if (now != old || spin.count() == 0) {
    for (; now == old; now = signal.load(std::memory_order_acquire)) {
      signal.wait(old, std::memory_order_acquire);
    }
    return now;
  }
  const auto deadline = std::chrono::steady_clock::now() + spin;
  for (int polls = 0; now == old; now = signal.load(std::memory_order_acquire), ++polls) {
    if (polls < kPauses) {
      cpu_pause();
    } else if (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    } else {
      signal.wait(old, std::memory_order_acquire);
    }
  }
  return now;
}

}  // namespace uops::runtime
