// Dependency inference from declared buffer accesses, and the graph algorithms the builder and
// scheduler share: topological ordering with cycle reporting and transitive reduction.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "uops/runtime/graph.h"

namespace uops::runtime {

using Adjacency = std::vector<std::vector<NodeIndex>>;

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
      if (const State* state = find(b); state && state->last_writer) {
        depend_on(*state->last_writer);
      }
    }
    for (BufferId b : writes) {
      State& state = find_or_add(b);
      if (state.last_writer) {
        depend_on(*state.last_writer);
        released(*state.last_writer);
      }
      for (Id reader : state.readers_since_write) {
        depend_on(reader);
        released(reader);
      }
      state.last_writer = id;
      held(id);
      state.readers_since_write.clear();
    }
    // Registered after the writes so that a node reading and writing one buffer is recorded
    // as its writer only; a later writer depends on it through write-after-write.
    for (BufferId b : reads) {
      if (std::find(writes.begin(), writes.end(), b) == writes.end()) {
        find_or_add(b).readers_since_write.push_back(id);
        held(id);
      }
    }
  }

  // Calls visit(id) for what a host access to b must wait for: the last writer, and for a
  // write also the readers since.
  template <typename Visit>
  void last_accesses(BufferId b, bool write, Visit visit) const {
    const State* state = find(b);
    if (!state) return;
    if (state->last_writer) visit(*state->last_writer);
    if (write) {
      for (Id reader : state->readers_since_write) visit(reader);
    }
  }

  void clear() {
    slots_ = {};
    states_ = {};
  }

 private:
  struct State {
    std::optional<Id> last_writer;
    std::vector<Id> readers_since_write;
  };
  // The buffers' states sit in one array, found through an open-addressing table (linear
  // probing, at most half full) of (buffer, state number) slots: a lookup reads one slot
  // instead of following a node-based map's bucket and node pointers, which at 10^5 buffers
  // and more costs a cache miss each.
  struct Slot {
    BufferId buffer = 0;
    std::uint32_t state = 0;  // index into states_ plus one; 0: empty
  };

  std::size_t home(BufferId b) const {
    return static_cast<std::size_t>((std::uint64_t{b} * 0x9E3779B97F4A7C15u) >> shift_);
  }

  const State* find(BufferId b) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(b);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].state == 0) return nullptr;
      if (slots_[i].buffer == b) return &states_[slots_[i].state - 1];
    }
  }

  State& find_or_add(BufferId b) {
    if (2 * (states_.size() + 1) > slots_.size()) grow();
    std::size_t i = home(b);
    for (; slots_[i].state != 0; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].buffer == b) return states_[slots_[i].state - 1];
    }
    states_.emplace_back();
    slots_[i] = Slot{b, static_cast<std::uint32_t>(states_.size())};
    return states_.back();
  }

  void grow() {
    std::vector<Slot> old =
        std::exchange(slots_, std::vector<Slot>(std::max<std::size_t>(16, 2 * slots_.size())));
    shift_ = 64 - std::countr_zero(slots_.size());
    for (const Slot& slot : old) {
      if (slot.state == 0) continue;
      std::size_t i = home(slot.buffer);
      while (slots_[i].state != 0) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // a power of two in size
  int shift_ = 64;           // 64 - log2(slots_.size())
  std::vector<State> states_;
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
