// Dependency inference from declared buffer accesses, and the graph algorithms the builder and
// scheduler share: topological ordering with cycle reporting and transitive reduction.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

using Adjacency = std::vector<std::vector<NodeIndex>>;

// Prefetching. The build's passes over a graph of 10^6 nodes with long edges wait on cache misses
// at random places (a buffer's slot, a successor's list or count); each pass that walks nodes in
// a known order asks for what the node a few places on will read with __builtin_prefetch,
// written in the loop itself: GCC 12 at -O2 deletes the prefetches of a helper it does not inline
// (ipa-modref finds the call free of side effects), which the assembly shows.

// The dependency rule, shared by GraphBuilder (all nodes at once) and Context (one launch at a
// time): an access follows the last earlier writer of its buffer (read-after-write,
// write-after-write), and a write also follows every reader since that write (write-after-read).
template <typename Id>
class AccessTracker {
 public:
  // Calls depend_on(earlier) for every earlier access `id` must follow (an id may come twice),
  // then records id's accesses. released(old) is called each time an earlier id loses one of
  // the places it was recorded in (covered by this write), held(id) each time id takes one.
  template <typename DependOn, typename Held, typename Released>
  void add(Id id, const std::vector<BufferId>& reads, const std::vector<BufferId>& writes,
           DependOn depend_on, Held held, Released released) {
    for (BufferId b : reads) {
      if (const Slot* slot = find(b); slot && slot->writer != 0) depend_on(slot->writer - 1);
    }
    for (BufferId b : writes) {
      Slot& slot = find_or_add(b);
      if (slot.writer != 0) {
        depend_on(slot.writer - 1);
        released(slot.writer - 1);
      }
      for (std::uint32_t r = slot.readers; r != kNone;) {
        const Reader reader = readers_[r];
        depend_on(reader.id);
        released(reader.id);
        readers_[r].next = free_;
        free_ = r;
        r = reader.next;
      }
      slot.writer = id + 1;
      slot.readers = kNone;
      held(id);
    }
    // Registered after the writes so that a node reading and writing one buffer is recorded
    // as its writer only; a later writer depends on it through write-after-write.
    for (BufferId b : reads) {
      if (std::find(writes.begin(), writes.end(), b) == writes.end()) {
        Slot& slot = find_or_add(b);
        slot.readers = add_reader(id, slot.readers);
        held(id);
      }
    }
  }

  // Calls visit(id) for what a host access to b must wait for: the last writer, and for a
  // write also the readers since.
  template <typename Visit>
  void last_accesses(BufferId b, bool write, Visit visit) const {
    const Slot* slot = find(b);
    if (!slot) return;
    if (slot->writer != 0) visit(slot->writer - 1);
    if (write) {
      for (std::uint32_t r = slot->readers; r != kNone; r = readers_[r].next) {
        visit(readers_[r].id);
      }
    }
  }

  // Where b's lookup starts, for a caller to ask the cache for it ahead (null while empty).
  const void* slot_address(BufferId b) const { return slots_.empty() ? nullptr : &slots_[home(b)]; }

  void clear() {
    slots_ = {};
    used_ = 0;
    readers_ = {};
    free_ = kNone;
  }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kEmpty = kNone - 1;  // in Slot::readers: a free slot

  // A buffer's state sits in its slot of an open-addressing table (linear probing, at most half
  // full), so a lookup reads one slot: no bucket or node pointers to follow, and no list of its
  // own per buffer, each of which costs a cache miss once there are 10^5 buffers and more.
  struct Slot {
    BufferId buffer = 0;
    Id writer = 0;                   // the last writer + 1; 0: none
    std::uint32_t readers = kEmpty;  // the first of the readers since that write, or kNone
  };
  // The readers since a write, as lists through one pool; a write returns its buffer's list to
  // the pool's free list, so the pool holds no more records than there are live readers.
  struct Reader {
    Id id;
    std::uint32_t next;
  };

  std::uint32_t add_reader(Id id, std::uint32_t next) {
    if (free_ == kNone) {
      readers_.push_back(Reader{id, next});
      return static_cast<std::uint32_t>(readers_.size() - 1);
    }
    const std::uint32_t r = free_;
    free_ = readers_[r].next;
    readers_[r] = Reader{id, next};
    return r;
  }

  std::size_t home(BufferId b) const {
    return static_cast<std::size_t>((std::uint64_t{b} * 0x9E3779B97F4A7C15u) >> shift_);
  }

  const Slot* find(BufferId b) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(b);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].readers == kEmpty) return nullptr;
      if (slots_[i].buffer == b) return &slots_[i];
    }
  }

  Slot& find_or_add(BufferId b) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::size_t i = home(b);
    for (; slots_[i].readers != kEmpty; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].buffer == b) return slots_[i];
    }
    ++used_;
    slots_[i] = Slot{b, 0, kNone};
    return slots_[i];
  }

  void grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(std::max<std::size_t>(16, 2 * slots_.size())));
    shift_ = 64 - std::countr_zero(slots_.size());
    for (const Slot& slot : old) {
      if (slot.readers == kEmpty) continue;
      std::size_t i = home(slot.buffer);
      while (slots_[i].readers != kEmpty) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size
  int shift_ = 64;           // 64 - log2(slots_.size())
  std::size_t used_ = 0;     // slots holding a buffer
  std::vector<Reader> readers_;
  std::uint32_t free_ = kNone;  // the first record of the pool's free list
};

// Successor lists implied by the nodes' accesses in insertion order (read-after-write,
// write-after-read, write-after-write). Every edge points from a lower to a higher index.
Adjacency infer_dependencies(const std::vector<Node>& nodes);

struct TopologicalOrder {
  std::vector<NodeIndex> order;       // complete when the graph is acyclic
  std::optional<NodeIndex> on_cycle;  // set when it is not
};

// Kahn's algorithm taking the lowest ready index first, so a graph whose edges all point
// forward is ordered as it was added.
TopologicalOrder topological_order(const Adjacency& successors);

// How far apart in the topological order the ends of an implied edge may lie for the
// reduction to drop it.
constexpr std::uint32_t kReductionWindow = 4096;
// Reachability bits per node in one pass of the reduction, in 64-bit words.
constexpr std::size_t kBlockWords = 16;

// What one reduction did: nodes visited and successor lists walked, summed over its passes.
struct ReductionWork {
  std::size_t nodes = 0;
  std::size_t edges = 0;
};

// Drops duplicate edges and every edge u -> v for which another path from u to v exists and
// v comes at most kReductionWindow places after u in `order`; an implied edge that spans
// further may stay (it orders nothing new, and the schedule gives it no signal and no say in
// placement). Successor lists come out sorted. Memory is linear in nodes + edges (the reachability
// bits take (2 * kReductionWindow + 1) * kBlockWords * 8 bytes at most, about 1 MB), and so is
// time: each node is visited by at most kReductionWindow / (kBlockWords * 64) + 3 passes. `work`,
// when given, counts them.
Adjacency transitive_reduction(Adjacency successors, const std::vector<NodeIndex>& order,
                               ReductionWork* work = nullptr);

Adjacency predecessors_of(const Adjacency& successors);

// make_schedule (schedule.h) for a graph whose predecessor lists, predecessors_of(successors),
// the caller holds already: the builder's, which are not computed a second time. Waking a
// stream costs wakeup_ns here, a signal handoff_ns.
Schedule make_schedule(const Adjacency& successors, const Adjacency& predecessors,
                       std::size_t max_streams, std::span<const double> cost_ns, double handoff_ns,
                       double wakeup_ns, std::span<const std::uint32_t> command);

// Per node, a command id for the schedule's tie-break: nodes of the same name run the same
// command.
std::vector<std::uint32_t> command_ids(const std::vector<Node>& nodes);

}  // namespace uops::runtime
