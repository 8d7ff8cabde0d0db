#include "thread_affinity.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>

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

bool idle_core_likely() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return false;
  // "0.28 1.39 1.72 2/345 12345": the fourth field is runnable/all threads.
  const int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128];
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0) return false;
  text[got] = 0;
  long runnable = 0;
  if (std::sscanf(text, "%*s %*s %*s %ld/", &runnable) != 1) return false;
  return runnable <= CPU_COUNT(&allowed);
}

}  // namespace uops::runtime
