#include "uops/ir/memory_budget.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "uops/error.h"

namespace uops {

namespace {

std::atomic<int64_t> budget_override{0};

}  // namespace

int64_t parse_byte_size(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  int shift = 0;
  if (end && *end) {
    std::string suffix = end;
    shift = suffix == "K" ? 10 : suffix == "M" ? 20 : suffix == "G" ? 30 : suffix == "T" ? 40 : -1;
  }
  if (end == text.c_str() || errno || v <= 0 || shift < 0 || v > (INT64_MAX >> shift))
    throw Error("memory budget '" + text +
                "' is not a positive number of bytes (like 8G, 512M or 1000000)");
  return int64_t(v) << shift;
}

std::string byte_size_text(int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

int64_t memory_budget() {
  if (int64_t b = budget_override.load()) return b;
  if (const char* env = std::getenv("UOPS_MEMORY_BUDGET"); env && *env) return parse_byte_size(env);
  // Read once: sysconf(_SC_PHYS_PAGES) is a system call (2 us here, two thirds of binding a
  // pool's program: a twentieth of its run).
  static const int64_t half_physical = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages <= 0 || page <= 0 ? int64_t(1) << 34 : int64_t(pages) * page / 2;
  }();
  return half_physical;
}

void set_memory_budget(int64_t bytes) {
  budget_override = bytes > 0 ? bytes : 0;
}

}  // namespace uops
