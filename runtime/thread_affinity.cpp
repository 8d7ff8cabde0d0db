#include "thread_affinity.h"

#include <sched.h>

namespace uops::runtime {
namespace {

// Narrows the calling thread to its allowed cores but `cpu`; false where nothing is left.
bool exclude(int cpu, cpu_set_t& allowed) {
  if (cpu < 0 || sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  cpu_set_t without = allowed;
  CPU_CLR(cpu, &without);
  return CPU_COUNT(&without) > 0 && sched_setaffinity(0, sizeof without, &without) == 0;
}

}  // namespace

void keep_off(int cpu) {
  cpu_set_t allowed;
  exclude(cpu, allowed);
}

void step_off(int cpu) {
  cpu_set_t allowed;
  if (exclude(cpu, allowed)) sched_setaffinity(0, sizeof allowed, &allowed);
}

}  // namespace uops::runtime
