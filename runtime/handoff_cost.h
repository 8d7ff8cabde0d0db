// What handing work to another thread costs on this machine, measured once per process: the
// figures the CPU executor re-plans with and bounds its polling by.
#pragma once

namespace uops::runtime {

struct HandoffCost {
  // From one thread publishing a signal to another, polling for it, seeing it.
  double signal_ns;
  // From one thread notifying a futex to another, asleep on it, running again.
  double wakeup_ns;
  // What reading the steady clock costs, to take off a kernel's timed duration.
  double clock_ns;
};

// Measured on first use with a thread of its own (a few milliseconds); later calls return the
// same figures.
const HandoffCost& measured_handoff_cost();

}  // namespace uops::runtime
