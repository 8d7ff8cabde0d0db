// What several benchmark programs share: a passive OpenMP wait policy, random f32 inputs, and
// huge pages for every library's buffers.
#pragma once

#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "uops/ir/tensor.h"

namespace uops::bench {

// libgomp reads its wait policy once, when it loads, before main: unless the caller chose one,
// the program restarts itself (with the same arguments) with a passive policy, as c_backend.h
// advises for shared machines (spinning workers take the core the next run's serial part needs).
// Call it first in main. Not where the environment binds threads (OMP_PROC_BIND other than false,
// OMP_PLACES, GOMP_CPU_AFFINITY): libgomp has then bound this thread to one place as it loaded,
// and the restarted program would inherit that one-CPU mask and run every team on one core (at 2
// threads bench_backends timed matmul 512^3 at its 1-thread 2.39 ms, oneDNN alike).
inline void restart_with_passive_omp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY")) return;
  const char* bind = std::getenv("OMP_PROC_BIND");
  if ((bind && strcasecmp(bind, "false") != 0) || std::getenv("OMP_PLACES") ||
      std::getenv("GOMP_CPU_AFFINITY")) {
    std::fprintf(stderr,
                 "threads are bound (OMP_PROC_BIND, OMP_PLACES or GOMP_CPU_AFFINITY): running with "
                 "libgomp's default wait policy; set OMP_WAIT_POLICY for another\n");
    return;
  }
  setenv("OMP_WAIT_POLICY", "passive", 1);
  execv("/proc/self/exe", argv);  // returns only on failure: then the run goes on as it is
}

// An f32 tensor of `shape` drawn uniformly from [-1, 1), the same for the same seed.
inline Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t(DType::f32, std::move(shape));
  std::mt19937 rng{static_cast<uint32_t>(seed)};
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// uops' allocator gives each large tensor huge pages (ir/tensor.cpp), which other libraries'
// buffers and the bench's own do not get where the system gives them only on request (the
// "madvise" setting): a copy of 16 MiB ran 5-12% faster on them, so a peer would lose to memory
// pages rather than to kernels. This asks for huge pages over every private anonymous mapping of
// 2 MiB and more that is at least half touched (the buffers allocated so far; not thread stacks)
// and collapses the pages already there into huge ones (MADV_COLLAPSE, Linux 6.1; on older
// kernels only later pages change). Returns the bytes it asked for. Call it once the peers have
// run once, before timing.
inline std::size_t huge_pages_for_every_buffer() {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  struct Range {
    uintptr_t begin = 0, end = 0;
    bool anonymous = false;
  };
  std::vector<Range> ranges;
  {
    std::ifstream smaps("/proc/self/smaps");
    Range r;
    for (std::string line; std::getline(smaps, line);) {
      std::istringstream in(line);
      uintptr_t begin = 0, end = 0;
      char dash = 0;
      std::string perms, offset, device, inode, path;
      if (in >> std::hex >> begin >> dash >> end >> perms >> offset >> device >> inode &&
          dash == '-') {
        in >> path;
        r = {begin, end, perms == "rw-p" && inode == "0" && (path.empty() || path == "[heap]")};
      } else if (r.anonymous && line.rfind("Rss:", 0) == 0) {
        std::size_t kb = std::stoull(line.substr(4));
        if (r.end - r.begin >= kHuge && kb * 1024 * 2 >= r.end - r.begin) ranges.push_back(r);
      }
    }
  }
  std::size_t bytes = 0;
  for (const Range& r : ranges) {
    uintptr_t begin = (r.begin + kHuge - 1) / kHuge * kHuge, end = r.end / kHuge * kHuge;
    if (begin >= end) continue;
    void* p = reinterpret_cast<void*>(begin);
#ifdef MADV_HUGEPAGE
    if (madvise(p, end - begin, MADV_HUGEPAGE) == 0) bytes += end - begin;
#endif
    madvise(p, end - begin, 25 /* MADV_COLLAPSE, absent from older headers */);
  }
  return bytes;
}

}  // namespace uops::bench
