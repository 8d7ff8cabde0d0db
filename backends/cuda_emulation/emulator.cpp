// Fibers switch with _setjmp/_longjmp (no system call; the fortified longjmp would reject a jump
// to another stack), except under the sanitizers, which follow swapcontext only.
#undef _FORTIFY_SOURCE
#include "backends/cuda_emulation/emulator.h"

#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "backends/cuda_emulation/module.h"
#include "uops/error.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UOPS_EMU_SWAPCONTEXT 1
#endif
#if defined(__SANITIZE_THREAD__)
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void __tsan_destroy_fiber(void* fiber);
}
#endif

namespace uops::cuda_emulation {

namespace {

using uops_emu::Dim3;

constexpr size_t kStackBytes = 256 * 1024;
constexpr size_t kGuard = size_t(1) << 20;  // unmapped bytes on each side of an allocation
constexpr size_t kSharedSlot = 65536;       // each shared array's alignment (device_api.h)
// Accesses a thread makes before it lets the others run: a spin-wait on another thread of the
// block then ends, as under independent thread scheduling.
constexpr unsigned kSpin = 1u << 16;

std::string dims(Dim3 d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

const char* kind_name(int k) {
  return k == uops_emu::kRead ? "read" : k == uops_emu::kWrite ? "write" : "atomic";
}

// Two accesses by different threads, unordered, conflict when one is a plain write. A plain read
// against an atomic does not: it sees one value or another, and the CUDA guide's own CAS loops
// (`old = *p; do { ... } while (atomicCAS(p, ...) != old)`) start with one.
bool conflict(int a, int b) {
  return a == uops_emu::kWrite || b == uops_emu::kWrite;
}

// The accesses of one kind to one element in the current barrier epoch of its block.
struct Record {
  int thread = -1;  // the first thread (linear in the block); -1: none
  int warp = -1;
  unsigned lanes = 0;       // the lanes of `warp` that made them
  bool many_warps = false;  // threads of other warps too
  uint64_t clock = 0;       // the latest warp-sync clock among them
};

// What one element (4 bytes of shared memory, one element of an allocation) saw.
struct Shadow {
  uint64_t stamp = 0;  // launch (global) or block (shared) the rest belongs to
  unsigned block = 0, epoch = 0;
  unsigned fences = 0;             // the block's __threadfence count at its last write
  unsigned char other_blocks = 0;  // kinds earlier blocks did, unpublished
  bool written = false;            // shared: since the block started
  Record rec[3];
};

struct Region {
  uintptr_t begin = 0, claim_end = 0;  // [begin, claim_end): accesses belong to this region
  size_t valid = 0;                    // bytes from begin that may be accessed
  size_t granule = 4;
  std::string name;
  bool shared = false;
  std::vector<Shadow>* shadow = nullptr;
};

struct Allocation {
  std::string name;
  size_t bytes = 0, element = 1;
  void* map = nullptr;
  size_t map_bytes = 0;
  std::vector<Shadow> shadow;
};

enum class Wait { ready, barrier, warp, done };

struct Fiber {
  ucontext_t context;
  jmp_buf jump;
  bool started = false;
  void* stack = nullptr;
#if defined(__SANITIZE_THREAD__)
  void* tsan = nullptr;
#endif
};

struct Thread {
  Wait wait = Wait::ready;
  // At a warp intrinsic:
  int op = 0, operand = 0, width = 32;
  unsigned mask = 0;
  uint64_t value = 0, result = 0;
  // At a barrier:
  int predicate = 0, count = 0;
  const void* pc = nullptr;
};

// Per OS thread: a fiber never resumes on another thread than the one it started on.
struct Fibers {
  std::vector<Fiber> fibers;
  ~Fibers() {
    for (Fiber& f : fibers) {
      if (f.stack) munmap(f.stack, kStackBytes);
#if defined(__SANITIZE_THREAD__)
      if (f.tsan) __tsan_destroy_fiber(f.tsan);
#endif
    }
  }
};

}  // namespace

struct Emulator::Impl {
  // Device memory, by its first byte.
  std::map<uintptr_t, std::unique_ptr<Allocation>> allocations;
  Allocation* last = nullptr;
  uintptr_t last_base = 0;

  // The launch in progress.
  const Launch* launch = nullptr;
  uops_emu::State* state = nullptr;
  std::vector<Region> shared_regions;
  std::vector<std::vector<Shadow>> shared_shadows;
  std::vector<Thread> threads;
  std::vector<unsigned> block_fences;
  Fibers* fibers = nullptr;
  unsigned nthreads = 0, active = 0;
  unsigned block_linear = 0, epoch = 0;
  uint64_t launch_stamp = 0, block_stamp = 0, sync_clock = 0;
  // Per warp: the __syncwarp groups since the last barrier, as (clock, mask).
  std::vector<std::vector<std::pair<uint64_t, unsigned>>> warp_syncs;
  unsigned since_switch = 0;
  uint64_t accesses = 0;
  std::chrono::steady_clock::time_point deadline;
  double time_limit = 60;
  std::string fault;

  ucontext_t scheduler{};
  jmp_buf scheduler_jump;
#if defined(__SANITIZE_THREAD__)
  void* scheduler_tsan = nullptr;
#endif
  static thread_local Impl* current;

  Impl() {
    if (const char* t = std::getenv("UOPS_EMULATION_TIMEOUT"); t && *t) time_limit = std::atof(t);
  }

  // ---- memory ----------------------------------------------------------------------------------

  Allocation* find(uintptr_t a) {
    if (last && a >= last_base - kGuard && a < last_base + last->bytes + kGuard) return last;
    auto it = allocations.upper_bound(a + kGuard);
    if (it == allocations.begin()) return nullptr;
    --it;
    if (a + kGuard < it->first || a >= it->first + it->second->bytes + kGuard) return nullptr;
    last = it->second.get();
    last_base = it->first;
    return last;
  }

  // ---- faults ----------------------------------------------------------------------------------

  std::string where(const void* pc) const {
    std::string s = " (kernel " + launch->kernel + ", block " + dims(state->block) + ", thread " +
                    dims(state->thread);
    if (pc && launch->module) {
      std::string line = launch->module->source_line(pc);
      if (!line.empty()) s += ", at " + line;
    }
    return s + ")";
  }

  // Records the first fault. From a kernel's thread it never returns: the thread (and with it
  // the launch) is abandoned before the faulting access happens.
  void raise(const std::string& what, const void* pc, bool in_fiber) {
    if (fault.empty()) fault = what + where(pc);
    if (in_fiber) abandon();
  }

  [[noreturn]] void abandon() {
    Fiber& f = fibers->fibers[active];
    f.started = false;  // its stack is given up; it restarts from scratch next time
    to_scheduler(f);
    __builtin_unreachable();
  }

  // ---- the access check
  // --------------------------------------------------------------------------

  void access(const void* address, size_t bytes, int kind, const void* pc) {
    if ((++accesses & 0xffff) == 0 && std::chrono::steady_clock::now() > deadline)
      raise("the kernel ran past the time limit of " + std::to_string(int(time_limit)) +
                " s (an endless loop, or a spin-wait on another block: the emulation runs "
                "blocks one after another; UOPS_EMULATION_TIMEOUT sets the limit)",
            pc, true);
    auto a = uintptr_t(address);
    const Region* region = nullptr;
    for (const Region& r : shared_regions)
      if (a >= r.begin && a < r.claim_end) region = &r;
    Region global;
    if (!region) {
      if (Allocation* alloc = find(a)) {
        global.begin = last_base;
        global.valid = alloc->bytes;
        global.granule = alloc->element;
        global.name = alloc->name;
        global.shadow = &alloc->shadow;
        region = &global;
      }
    }
    if (!region) {
      Fiber& f = fibers->fibers[active];
      auto stack = uintptr_t(f.stack);
      if (a >= stack && a + bytes <= stack + kStackBytes) return;  // the thread's own locals
      for (auto& [begin, end] : launch->module->segments)
        if (a >= begin && a + bytes <= end) return;  // the module's own data
      char hex[32];
      std::snprintf(hex, sizeof hex, "%#lx", (unsigned long)a);
      raise(std::string("out of bounds: ") + kind_name(kind) + " of " + std::to_string(bytes) +
                " bytes at " + hex + ", outside every allocation and shared array",
            pc, true);
    }
    if (a < region->begin || a + bytes > region->begin + region->valid) {
      long long first = (long long)(a - region->begin) / (long long)region->granule;
      if (a < region->begin)
        first = -(long long)((region->begin - a + region->granule - 1) / region->granule);
      raise(std::string("out of bounds: ") + kind_name(kind) + " of " +
                (region->shared ? "shared memory " : "") + region->name + "[" +
                std::to_string(first) + "], which has " +
                std::to_string(region->valid / region->granule) + " elements" +
                (region->shared ? " of " + std::to_string(region->granule) + " bytes" : ""),
            pc, true);
    }
    size_t g0 = (a - region->begin) / region->granule,
           g1 = (a + bytes - 1 - region->begin) / region->granule;
    for (size_t g = g0; g <= g1; ++g) touch(*region, g, kind, pc);
    if (++since_switch >= kSpin) yield();
  }

  void touch(const Region& region, size_t g, int kind, const void* pc) {
    Shadow& s = (*region.shadow)[g];
    uint64_t stamp = region.shared ? block_stamp : launch_stamp;
    if (s.stamp != stamp) {
      s = Shadow{};
      s.stamp = stamp;
      s.block = block_linear;
      s.epoch = epoch;
    }
    if (s.block != block_linear) {
      // An earlier block of this launch: ordered only where it published with a fence.
      unsigned char did = 0;
      for (int k = 0; k < 3; ++k)
        if (s.rec[k].thread >= 0) did |= (unsigned char)(1 << k);
      if (block_fences[s.block] <= s.fences) s.other_blocks |= did;
      for (Record& r : s.rec) r = Record{};
      s.block = block_linear;
      s.epoch = epoch;
    } else if (s.epoch != epoch) {
      for (Record& r : s.rec) r = Record{};  // ordered by the barrier
      s.epoch = epoch;
    }
    unsigned t = current_thread(), w = t / 32, lane = t % 32;
    auto element = [&] {
      return (region.shared ? "shared memory " : "") + region.name + "[" + std::to_string(g) + "]";
    };
    if (region.shared && kind != uops_emu::kWrite && !s.written)
      raise("read of uninitialised shared memory: " + element() +
                " was not written by any thread of this block before this " + kind_name(kind) +
                " (a __syncthreads missing between the writes and this read?)",
            pc, true);
    for (int k = 0; k < 3; ++k) {
      if (!conflict(kind, k)) continue;
      if ((s.other_blocks >> k) & 1)
        raise("race on " + element() + ": " + kind_name(kind) + " against a " + kind_name(k) +
                  " by a thread of another block (blocks are not ordered; a __threadfence "
                  "after the " +
                  kind_name(k) + " would publish it)",
              pc, true);
      const Record& r = s.rec[k];
      if (r.thread < 0 || (!r.many_warps && r.warp == int(w) && r.lanes == (1u << lane))) continue;
      if (!r.many_warps && r.warp == int(w) && synced_after(w, r.clock, r.lanes | (1u << lane)))
        continue;
      std::string who = unsigned(r.thread) == t ? std::string("other threads")
                                                : "thread " + dims(thread_dims(unsigned(r.thread)));
      raise("race on " + element() + ": " + kind_name(kind) + " against a " + kind_name(k) +
                " by " + who + " of the same block with no __syncthreads between them",
            pc, true);
    }
    Record& r = s.rec[kind];
    if (r.thread < 0) {
      r.thread = int(t);
      r.warp = int(w);
    } else if (r.warp != int(w)) {
      r.many_warps = true;
    }
    if (r.warp == int(w)) r.lanes |= 1u << lane;
    r.clock = sync_clock;
    if (kind != uops_emu::kRead) {
      s.fences = block_fences[block_linear];
      s.written = true;
    }
  }

  // Whether a __syncwarp of all of `lanes` happened in warp `w` after `clock`.
  bool synced_after(unsigned w, uint64_t clock, unsigned lanes) const {
    const auto& events = warp_syncs[w];
    for (auto it = events.rbegin(); it != events.rend() && it->first > clock; ++it)
      if ((it->second & lanes) == lanes) return true;
    return false;
  }

  unsigned current_thread() const {
    const Dim3& t = state->thread;
    const Dim3& d = launch->block;
    return (t.z * d.y + t.y) * d.x + t.x;
  }
  Dim3 thread_dims(unsigned t) const {
    const Dim3& d = launch->block;
    return {t % d.x, t / d.x % d.y, t / (d.x * d.y)};
  }

  // ---- fibers
  // ------------------------------------------------------------------------------------

  void to_scheduler(Fiber& f) {
#if defined(UOPS_EMU_SWAPCONTEXT)
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(scheduler_tsan, 0);
#endif
    swapcontext(&f.context, &scheduler);
#else
    if (_setjmp(f.jump) == 0) _longjmp(scheduler_jump, 1);
#endif
  }

  // Runs thread t until it blocks, yields, finishes or faults.
  void resume(unsigned t) {
    Fiber& f = fibers->fibers[t];
    active = t;
    state->thread = thread_dims(t);
    since_switch = 0;
    current = this;
#if defined(UOPS_EMU_SWAPCONTEXT)
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(f.tsan, 0);
#endif
    if (!f.started) start(f);
    f.started = true;
    swapcontext(&scheduler, &f.context);
#else
    if (_setjmp(scheduler_jump) == 0) {
      if (f.started) _longjmp(f.jump, 1);
      start(f);
      f.started = true;
      setcontext(&f.context);
    }
#endif
  }

  void start(Fiber& f) {
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, &Impl::fiber_main, 0);
  }

  static void fiber_main() {
    for (;;) {
      Impl* d = current;
      d->launch->entry(d->launch->args);
      d->threads[d->active].wait = Wait::done;
      d->to_scheduler(d->fibers->fibers[d->active]);
    }
  }

  void yield() {
    since_switch = 0;
    to_scheduler(fibers->fibers[active]);
  }

  // ---- barriers and warps
  // ------------------------------------------------------------------------

  int barrier(int predicate, const void* pc) {
    if (!launch->barriers)
      raise("__syncthreads in a kernel the launch plan runs without a block reduction", pc, true);
    Thread& th = threads[active];
    th.wait = Wait::barrier;
    th.predicate = predicate;
    th.pc = pc;
    to_scheduler(fibers->fibers[active]);
    return th.count;
  }

  uint64_t warp(int op, unsigned mask, uint64_t value, int operand, int width, const void* pc) {
    Thread& th = threads[active];
    th.wait = Wait::warp;
    th.op = op;
    th.mask = mask;
    th.value = value;
    th.operand = operand;
    th.width = width;
    th.pc = pc;
    to_scheduler(fibers->fibers[active]);
    return th.result;
  }

  static const char* op_name(int op) {
    static const char* names[] = {"__shfl_sync",     "__shfl_up_sync", "__shfl_down_sync",
                                  "__shfl_xor_sync", "__ballot_sync",  "__any_sync",
                                  "__all_sync",      "__syncwarp",     "__activemask"};
    return op >= 0 && op < 9 ? names[op] : "a warp intrinsic";
  }

  std::string mask_text(unsigned m) const {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", m);
    return buf;
  }

  // Fault at a lane of warp w waiting at an intrinsic (reported as that thread).
  void warp_fault(unsigned t, const std::string& what) {
    state->thread = thread_dims(t);
    raise(std::string(op_name(threads[t].op)) + ": " + what, threads[t].pc, false);
  }

  // Completes the warp intrinsics of warp w whose groups are all there; false if none could.
  bool resolve_warp(unsigned w) {
    unsigned first = w * 32, end = std::min(nthreads, first + 32);
    unsigned exists = end - first == 32 ? 0xffffffffu : ((1u << (end - first)) - 1u);
    bool any_ready = false, progressed = false;
    for (unsigned t = first; t < end; ++t) any_ready |= threads[t].wait == Wait::ready;
    for (unsigned t = first; t < end && fault.empty(); ++t) {
      Thread& th = threads[t];
      if (th.wait != Wait::warp) continue;
      unsigned lane = t - first;
      if (th.op == uops_emu::kActiveMask) {
        if (any_ready) continue;
        unsigned m = 0;
        for (unsigned u = first; u < end; ++u)
          if (threads[u].wait == Wait::warp && threads[u].op == uops_emu::kActiveMask)
            m |= 1u << (u - first);
        for (unsigned u = first; u < end; ++u)
          if ((m >> (u - first)) & 1) {
            threads[u].result = m;
            threads[u].wait = Wait::ready;
          }
        progressed = true;
        continue;
      }
      unsigned m = th.mask;
      if (!((m >> lane) & 1)) {
        warp_fault(t, "the mask " + mask_text(m) + " does not name the calling lane " +
                          std::to_string(lane));
        return false;
      }
      if (m & ~exists) {
        unsigned missing = __builtin_ctz(m & ~exists);
        warp_fault(t, "the mask " + mask_text(m) + " names lane " + std::to_string(missing) +
                          ", which does not exist (the block has " + std::to_string(nthreads) +
                          " threads, so this warp has " + std::to_string(end - first) + ")");
        return false;
      }
      bool wait = false;
      for (unsigned l = 0; l < 32 && !wait; ++l) {
        if (!((m >> l) & 1)) continue;
        const Thread& o = threads[first + l];
        if (o.wait == Wait::ready) {
          wait = true;
        } else if (o.wait == Wait::done) {
          warp_fault(t, "the mask " + mask_text(m) + " names lane " + std::to_string(l) +
                            ", which has exited");
          return false;
        } else if (o.wait == Wait::barrier) {
          warp_fault(t, "the mask " + mask_text(m) + " names lane " + std::to_string(l) +
                            ", which waits at __syncthreads instead");
          return false;
        } else if (o.op != th.op || o.mask != m) {
          warp_fault(t, "lane " + std::to_string(l) + " of the mask " + mask_text(m) + " is at " +
                            op_name(o.op) + " with the mask " + mask_text(o.mask));
          return false;
        }
      }
      if (wait) continue;
      complete(first, m, th.op);
      progressed = true;
    }
    return progressed;
  }

  void complete(unsigned first, unsigned m, int op) {
    if (op == uops_emu::kSyncWarp) {
      warp_syncs[first / 32].push_back({++sync_clock, m});
    }
    uint64_t ballot = 0;
    for (unsigned l = 0; l < 32; ++l)
      if (((m >> l) & 1) && threads[first + l].value) ballot |= 1u << l;
    for (unsigned l = 0; l < 32; ++l) {
      if (!((m >> l) & 1)) continue;
      Thread& th = threads[first + l];
      int width = th.width;
      if (op <= uops_emu::kShflXor && (width < 1 || width > 32 || (width & (width - 1)))) {
        warp_fault(first + l, "width " + std::to_string(width) + " is not a power of two up to 32");
        return;
      }
      unsigned seg = l / unsigned(width) * unsigned(width), src = l;
      switch (op) {
        case uops_emu::kShfl:
          src = seg + unsigned(((th.operand % width) + width) % width);
          break;
        case uops_emu::kShflUp:
          src = int(l) - th.operand >= int(seg) ? l - unsigned(th.operand) : l;
          break;
        case uops_emu::kShflDown:
          src = l + unsigned(th.operand) < seg + unsigned(width) ? l + unsigned(th.operand) : l;
          break;
        case uops_emu::kShflXor:
          src = l ^ unsigned(th.operand);
          if (src < seg || src >= seg + unsigned(width)) src = l;
          break;
        case uops_emu::kBallot:
          th.result = ballot;
          break;
        case uops_emu::kAny:
          th.result = ballot != 0;
          break;
        case uops_emu::kAll:
          th.result = ballot == m;
          break;
        default:
          break;
      }
      if (op <= uops_emu::kShflXor) {
        if (!((m >> src) & 1)) {
          warp_fault(first + l, "lane " + std::to_string(l) + " reads lane " + std::to_string(src) +
                                    ", which is not in the mask " + mask_text(m) +
                                    " (its value is undefined)");
          return;
        }
        th.result = threads[first + src].value;
      }
    }
    for (unsigned l = 0; l < 32; ++l)
      if ((m >> l) & 1) threads[first + l].wait = Wait::ready;
  }

  // ---- a block
  // -----------------------------------------------------------------------------------

  void run_block() {
    for (unsigned t = 0; t < nthreads; ++t) threads[t] = Thread{};
    for (auto& w : warp_syncs) w.clear();
    unsigned warps = (nthreads + 31) / 32;
    for (;;) {
      bool any = false;
      for (unsigned t = 0; t < nthreads; ++t) {
        if (threads[t].wait != Wait::ready) continue;
        resume(t);
        any = true;
        if (!fault.empty()) return;
      }
      for (unsigned w = 0; w < warps; ++w) {
        any |= resolve_warp(w);
        if (!fault.empty()) return;
      }
      if (any) continue;
      unsigned done = 0, waiting = 0, exited = 0, at = 0;
      for (unsigned t = 0; t < nthreads; ++t) {
        if (threads[t].wait == Wait::done) {
          ++done;
          exited = t;
        } else {
          ++waiting;
          at = t;
        }
      }
      if (done == nthreads) return;
      if (done > 0) {
        state->thread = thread_dims(at);
        raise("__syncthreads not reached by every thread of the block: thread " +
                  dims(thread_dims(at)) + " waits at it, thread " + dims(thread_dims(exited)) +
                  " has exited (" + std::to_string(done) + " of " + std::to_string(nthreads) +
                  " threads have)",
              threads[at].pc, false);
        return;
      }
      int count = 0;
      for (unsigned t = 0; t < nthreads; ++t) count += threads[t].predicate;
      for (unsigned t = 0; t < nthreads; ++t) {
        threads[t].wait = Wait::ready;
        threads[t].count = count;
      }
      for (auto& w : warp_syncs) w.clear();
      ++epoch;
    }
  }

  void run(const Launch& l) {
    static std::atomic<uint64_t> stamps{0};
    launch = &l;
    state = l.module->state;
    fault.clear();
    Dim3 g = l.grid, b = l.block;
    nthreads = b.x * b.y * b.z;
    if (nthreads == 0 || nthreads > 1024 || g.x == 0 || g.y == 0 || g.z == 0 || g.y > 65535 ||
        g.z > 65535 || b.z > 64)
      throw Error("CUDA emulation: invalid launch of " + l.kernel + ": grid " + dims(g) +
                  ", block " + dims(b) +
                  " (a block has 1 to 1024 threads, z up to 64; grid y and z up to 65535)");
    if (l.dynamic_shared > l.module->dynamic_capacity)
      throw Error("CUDA emulation: " + l.kernel + " asks for " + std::to_string(l.dynamic_shared) +
                  " bytes of dynamic shared memory, more than a device has (" +
                  std::to_string(l.module->dynamic_capacity) + ")");
    uint64_t blocks = uint64_t(g.x) * g.y * g.z;
    static thread_local Fibers owned;
    fibers = &owned;
    if (owned.fibers.size() < nthreads) owned.fibers.resize(nthreads);
    for (unsigned t = 0; t < nthreads; ++t) {
      Fiber& f = owned.fibers[t];
      f.started = false;
      if (!f.stack) {
        f.stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (f.stack == MAP_FAILED) {
          f.stack = nullptr;
          throw Error("CUDA emulation: no memory for fiber stacks");
        }
#if defined(__SANITIZE_THREAD__)
        f.tsan = __tsan_create_fiber(0);
#endif
      }
    }
#if defined(__SANITIZE_THREAD__)
    scheduler_tsan = __tsan_get_current_fiber();
#endif
    threads.assign(nthreads, Thread{});
    warp_syncs.assign((nthreads + 31) / 32, {});
    block_fences.assign(blocks, 0);
    // Shared memory on this OS thread: the module's arrays and the dynamic part.
    auto* base = static_cast<unsigned char*>(l.module->dynamic_base()) - l.module->dynamic_offset;
    shared_regions.clear();
    shared_shadows.assign(l.module->shared.size() + 1, {});
    for (size_t i = 0; i <= l.module->shared.size(); ++i) {
      Region r;
      r.shared = true;
      if (i < l.module->shared.size()) {
        const Module::SharedArray& a = l.module->shared[i];
        r.begin = uintptr_t(base + a.offset);
        r.valid = a.size;
        r.claim_end = r.begin + std::max(kSharedSlot, a.size);
        r.name = a.name;
      } else {
        r.begin = uintptr_t(base + l.module->dynamic_offset);
        r.valid = l.dynamic_shared;
        r.claim_end = r.begin + l.module->dynamic_capacity;
        r.name = "dynamic shared memory (bytes)";
        r.granule = 1;
      }
      if (r.granule == 4 && r.valid % 4) r.granule = 1;
      shared_shadows[i].resize(r.valid / r.granule + 1);
      r.shadow = &shared_shadows[i];
      shared_regions.push_back(r);
    }
    state->host = this;
    state->grid_dim = g;
    state->block_dim = b;
    state->access = [](void* h, const void* a, unsigned long n, int kind, const void* pc) {
      static_cast<Impl*>(h)->access(a, n, kind, pc);
    };
    state->barrier = [](void* h, int p, const void* pc) {
      return static_cast<Impl*>(h)->barrier(p, pc);
    };
    state->warp = [](void* h, int op, unsigned mask, unsigned long long v, int operand, int width,
                     const void* pc) -> unsigned long long {
      return static_cast<Impl*>(h)->warp(op, mask, v, operand, width, pc);
    };
    state->fence = [](void* h) {
      auto* d = static_cast<Impl*>(h);
      ++d->block_fences[d->block_linear];
    };
    state->yield = [](void* h) { static_cast<Impl*>(h)->yield(); };
    state->fault = [](void* h, const char* what, const void* pc) {
      static_cast<Impl*>(h)->raise(what, pc, true);
    };
    launch_stamp = ++stamps;
    deadline = std::chrono::steady_clock::now() +
               std::chrono::milliseconds((long long)(time_limit * 1000));
    epoch = 0;
    for (uint64_t bl = 0; bl < blocks && fault.empty(); ++bl) {
      block_linear = unsigned(bl);
      state->block = {unsigned(bl % g.x), unsigned(bl / g.x % g.y),
                      unsigned(bl / (uint64_t(g.x) * g.y))};
      block_stamp = ++stamps;
      for (const Region& r : shared_regions)
        std::memset(reinterpret_cast<void*>(r.begin), 0xff, r.valid);
      run_block();
    }
    if (!fault.empty()) {
      for (unsigned t = 0; t < nthreads; ++t) owned.fibers[t].started = false;
      std::string f = std::move(fault);
      fault.clear();
      throw Error("CUDA emulation: " + f);
    }
  }
};

thread_local Emulator::Impl* Emulator::Impl::current = nullptr;

Emulator::Emulator() : impl_(std::make_unique<Impl>()) {}
Emulator::~Emulator() {
  for (auto& [base, a] : impl_->allocations) munmap(a->map, a->map_bytes);
}

uintptr_t Emulator::allocate(size_t bytes, const std::string& name, size_t element,
                             unsigned char fill) {
  bytes = std::max<size_t>(bytes, 1);
  element = std::max<size_t>(element, 1);
  size_t page = 4096, body = (bytes + page - 1) / page * page;
  auto a = std::make_unique<Allocation>();
  a->map_bytes = body + 2 * kGuard;
  a->map =
      mmap(nullptr, a->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (a->map == MAP_FAILED) throw Error("CUDA emulation: no memory for " + name);
  auto* data = static_cast<unsigned char*>(a->map) + kGuard;
  if (mprotect(data, body, PROT_READ | PROT_WRITE) != 0) {
    munmap(a->map, a->map_bytes);
    throw Error("CUDA emulation: no memory for " + name);
  }
  std::memset(data, fill, bytes);
  a->name = name;
  a->bytes = bytes;
  a->element = element;
  a->shadow.resize(bytes / element + 1);
  impl_->allocations[uintptr_t(data)] = std::move(a);
  return uintptr_t(data);
}

void Emulator::release(uintptr_t address) noexcept {
  auto it = impl_->allocations.find(address);
  if (it == impl_->allocations.end()) return;
  munmap(it->second->map, it->second->map_bytes);
  impl_->allocations.erase(it);
  impl_->last = nullptr;
}

unsigned char* Emulator::host(uintptr_t address, size_t bytes) {
  if (bytes == 0) return reinterpret_cast<unsigned char*>(address);
  auto it = impl_->allocations.upper_bound(address);
  if (it != impl_->allocations.begin()) {
    --it;
    if (address >= it->first && address + bytes <= it->first + it->second->bytes)
      return reinterpret_cast<unsigned char*>(address);
  }
  throw Error("CUDA emulation: a copy of " + std::to_string(bytes) +
              " bytes outside every allocation");
}

void Emulator::launch(const Launch& launch) {
  // A module's state is one per process, and two emulators may load one module (the kernel
  // cache maps identical bytes once): one launch at a time in the process.
  static std::mutex one_at_a_time;
  std::lock_guard lock(one_at_a_time);
  impl_->run(launch);
}

void Emulator::set_time_limit(double seconds) {
  impl_->time_limit = seconds;
}

}  // namespace uops::cuda_emulation
