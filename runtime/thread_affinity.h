// Moving the calling thread off one core. A new thread starts on its creator's core, and a
// woken one is sometimes queued behind the thread that woke it while the other core idles;
// the kernel takes milliseconds to move it, and the two take turns on one core meanwhile.
#pragma once

namespace uops::runtime {

// Keeps the calling thread off `cpu` for good (the hand-off probes' short-lived threads).
// Does nothing where `cpu` is negative or the only core the thread may use.
void keep_off(int cpu);

// Moves the calling thread off `cpu` now and then allows it its old cores again: the kernel
// wakes a thread where it last ran, so later wake-ups start on the new core too.
void step_off(int cpu);

// Whether fewer threads are runnable on the whole machine than the calling thread may use
// cores (from /proc/loadavg, the reader itself counted): then some core it may use is idle,
// and stepping off a shared core gains one. False where that cannot be read.
bool idle_core_likely();

}  // namespace uops::runtime
