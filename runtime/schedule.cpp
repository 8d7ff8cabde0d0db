#include "uops/runtime/schedule.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>

#include "dependencies.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

constexpr StreamIndex kUnassigned = std::numeric_limits<StreamIndex>::max();

// Rank is the length of the longest path to a sink. Visiting nodes in reverse topological
// order guarantees every successor is ranked before it is read.
std::vector<std::uint32_t> compute_ranks(const Adjacency& successors,
                                         const std::vector<NodeIndex>& order) {
  std::vector<std::uint32_t> rank(successors.size(), 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (NodeIndex s : successors[*it]) rank[*it] = std::max(rank[*it], rank[s] + 1);
  }
  return rank;
}

// The successor lists in one array, node v's at [first[v], first[v + 1]): what the placer walks,
// built once for all the placements of a graph.
struct FlatSuccessors {
  std::vector<std::size_t> first;
  std::vector<NodeIndex> list;

  explicit FlatSuccessors(const Adjacency& successors) : first(successors.size() + 1, 0) {
    for (NodeIndex v = 0; v < successors.size(); ++v)
      first[v + 1] = first[v] + successors[v].size();
    list.reserve(first.back());
    for (const auto& l : successors) list.insert(list.end(), l.begin(), l.end());
  }
  std::size_t nodes() const { return first.size() - 1; }
};

// Places nodes on streams. Nodes are only ever placed once all their predecessors are placed,
// so the placement sequence is a topological order and every stream's order is a subsequence
// of it: no placement, not even one forced by the stream limit, can make streams wait on each
// other in a circle.
class Placer {
 public:
  // With `group` (one entry per node), node v may only go on streams
  // group[v] * streams_per_group .. + streams_per_group - 1, which all exist from the start.
  // schedule.rank must be filled in already.
  Placer(const FlatSuccessors& successors, const Adjacency& predecessors, std::size_t max_streams,
         std::span<const double> cost_ns, double handoff_ns, double wakeup_ns,
         std::span<const std::uint32_t> command, std::span<const std::uint32_t> group,
         std::size_t streams_per_group, Schedule& schedule)
      : predecessors_(predecessors),
        limit_(group.empty() ? std::min(max_streams, std::max<std::size_t>(successors.nodes(), 1))
                             : max_streams),
        schedule_(schedule),
        position_(successors.nodes(), 0),
        placed_at_(successors.nodes(), 0),
        pending_(successors.nodes() + 1),
        row_(limit_ + 2),
        ancestor_position_(successors.nodes() * row_, -1),
        cost_ns_(cost_ns),
        handoff_ns_(handoff_ns),
        wakeup_ns_(wakeup_ns),
        finish_(cost_ns.empty() ? 0 : successors.nodes(), 0),
        command_(command),
        group_(group),
        streams_per_group_(streams_per_group),
        successor_(successors.list) {
    schedule_.stream_of.assign(successors.nodes(), kUnassigned);
    schedule_.order.reserve(successors.nodes());
    if (!group.empty()) schedule_.streams.resize(limit_);
    for (NodeIndex v = 0; v < successors.nodes(); ++v) {
      pending_[v] = {static_cast<std::uint32_t>(predecessors[v].size()), schedule_.rank[v],
                     successors.first[v]};
    }
    pending_[successors.nodes()].first_successor = successors.first.back();
  }

  const std::vector<std::uint32_t>& positions() const { return position_; }

  // Visits the nodes in `order`, a topological order. What visiting a node reads lies at
  // random places for a graph with long edges, so it is asked for ahead: the predecessor list
  // of the node 2d places on, then the rows of the predecessors and the records of the
  // successors of the one d places on (dependencies.h).
  void visit_all(const std::vector<NodeIndex>& order) {
    constexpr std::size_t kAhead = 4;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i + 2 * kAhead < order.size()) {
        __builtin_prefetch(predecessors_[order[i + 2 * kAhead]].data());
        const NodeIndex u = order[i + kAhead];
        for (NodeIndex p : predecessors_[u]) __builtin_prefetch(&ancestor_position_[p * row_]);
        if (schedule_.stream_of[u] == kUnassigned) {  // else its successors were counted down
          for (NodeIndex s : successors_of(u)) __builtin_prefetch(&pending_[s]);
        }
      }
      visit(order[i]);
    }
  }

 private:
  void visit(NodeIndex v) {
    record_ancestors(v);
    if (schedule_.stream_of[v] != kUnassigned) return;
    const StreamIndex stream = choose_stream(v);
    place(v, stream);
    // Follow the most critical path down from v on the same stream, so it runs without signals.
    for (NodeIndex at = v;;) {
      std::optional<NodeIndex> next;
      for (NodeIndex s : successors_of(at)) {
        if (pending_[s].unplaced_predecessors != 0) continue;  // placed, or not ready
        if (!group_.empty() && group_[s] != group_[v]) continue;
        if (!next || pending_[s].rank > pending_[*next].rank) next = s;
      }
      if (!next) break;
      place(*next, stream);
      at = *next;
    }
  }

  // Highest position on each stream of an ancestor of v. Streams are chains in the DAG (each
  // node on a stream is an ancestor of the next), so the last node L of a stream is an ancestor
  // of v exactly when v's ancestor position on that stream is at least L's.
  void record_ancestors(NodeIndex v) {
    std::int32_t* mine = &ancestor_position_[v * row_];
    for (NodeIndex p : predecessors_[v]) {
      const std::int32_t* theirs = &ancestor_position_[p * row_];
      for (std::size_t t = 0; t < limit_; ++t) mine[t] = std::max(mine[t], theirs[t]);
      const auto t = static_cast<StreamIndex>(theirs[limit_]);
      mine[t] = std::max(mine[t], theirs[limit_ + 1]);
    }
  }

  // NNC's tie-break: among streams equally good for v, prefer one that already ran v's command
  // (kernels of one command share workspace and context).
  StreamIndex choose_stream(NodeIndex v) const {
    const std::int32_t* ancestors = &ancestor_position_[v * row_];
    const StreamIndex first = group_.empty() ? 0 : group_[v] * streams_per_group_;
    const StreamIndex end = group_.empty() ? static_cast<StreamIndex>(schedule_.streams.size())
                                           : first + streams_per_group_;
    auto better = [&](std::optional<StreamIndex>& best, StreamIndex t) {
      if (!best || (!ran_command(*best, v) && ran_command(t, v))) best = t;
    };
    std::optional<StreamIndex> follower, recyclable, fresh;
    for (StreamIndex t = first; t < end; ++t) {
      if (schedule_.streams[t].empty()) {
        if (!fresh) fresh = t;
        continue;
      }
      const NodeIndex last = schedule_.streams[t].back();
      if (ancestors[t] < static_cast<std::int32_t>(position_[last])) continue;
      // Following a direct predecessor turns that edge into stream order instead of a signal.
      better(direct_predecessor(v, t, last) ? follower : recyclable, t);
    }
    if (follower) return *follower;
    if (recyclable) return *recyclable;
    if (fresh) return *fresh;
    if (group_.empty() && schedule_.streams.size() < limit_)
      return static_cast<StreamIndex>(schedule_.streams.size());
    // At the limit: queue behind the stream expected to finish first (by the costs when there
    // are costs, else the one whose last node was placed earliest).
    StreamIndex best = first;
    for (StreamIndex t = first + 1; t < end; ++t) {
      const NodeIndex last = schedule_.streams[t].back(),
                      best_last = schedule_.streams[best].back();
      if (cost_ns_.empty() ? placed_at_[last] < placed_at_[best_last]
                           : finish_[last] < finish_[best_last]) {
        best = t;
      }
    }
    return best;
  }

  // Whether `last`, the last node of stream t, precedes v by an edge that no other
  // predecessor of v implies (last is then no ancestor of that predecessor: last has the
  // highest position on t). An implied edge saves no signal when followed, since v waits for
  // the predecessor that implies it anyway, so it counts as no edge: the schedule does not
  // depend on whether the successor lists were reduced.
  bool direct_predecessor(NodeIndex v, StreamIndex t, NodeIndex last) const {
    const auto& preds = predecessors_[v];
    if (std::find(preds.begin(), preds.end(), last) == preds.end()) return false;
    const auto at_last = static_cast<std::int32_t>(position_[last]);
    return std::none_of(preds.begin(), preds.end(), [&](NodeIndex p) {
      return p != last && ancestor_position_[p * row_ + t] >= at_last;
    });
  }

  bool ran_command(StreamIndex t, NodeIndex v) const {
    return !command_.empty() && commands_run_.count(std::uint64_t{t} << 32 | command_[v]) != 0;
  }

  void place(NodeIndex v, StreamIndex stream) {
    if (stream == schedule_.streams.size()) schedule_.streams.emplace_back();
    if (!cost_ns_.empty()) {
      // The same estimate as estimated_makespan's, before signals are thinned out.
      double start = schedule_.streams[stream].empty() ? (stream == 0 ? 0 : wakeup_ns_)
                                                       : finish_[schedule_.streams[stream].back()];
      for (NodeIndex p : predecessors_[v]) {
        start = std::max(start, finish_[p] + (schedule_.stream_of[p] == stream ? 0 : handoff_ns_));
      }
      finish_[v] = start + cost_ns_[v];
    }
    schedule_.stream_of[v] = stream;
    position_[v] = static_cast<std::uint32_t>(schedule_.streams[stream].size());
    ancestor_position_[v * row_ + limit_] = static_cast<std::int32_t>(stream);
    ancestor_position_[v * row_ + limit_ + 1] = static_cast<std::int32_t>(position_[v]);
    placed_at_[v] = static_cast<std::uint32_t>(schedule_.order.size());
    schedule_.streams[stream].push_back(v);
    schedule_.order.push_back(v);
    if (!command_.empty()) commands_run_.insert(std::uint64_t{stream} << 32 | command_[v]);
    pending_[v].unplaced_predecessors = kPlaced;
    for (NodeIndex s : successors_of(v)) {
      // A successor this makes ready may be the next on the chain: ask for its list now.
      if (--pending_[s].unplaced_predecessors == 0)
        __builtin_prefetch(successor_.data() + pending_[s].first_successor);
    }
  }

  std::span<const NodeIndex> successors_of(NodeIndex v) const {
    return {successor_.data() + pending_[v].first_successor,
            successor_.data() + pending_[v + 1].first_successor};
  }

  const Adjacency& predecessors_;
  const std::size_t limit_;
  Schedule& schedule_;
  std::vector<std::uint32_t> position_;
  std::vector<std::uint32_t> placed_at_;
  // Per node, what placing a predecessor updates and the chain rule then reads, side by side:
  // predecessors not yet placed (kPlaced once the node itself is), the rank, and where its
  // successors start in successor_ (they end where the next node's start). Following a chain
  // to a successor s then waits for one cache miss (s's successors, since s's record was just
  // read), not three (a list header, its data, the counts), which is what a random graph too
  // large for the cache costs per placed node.
  struct Pending {
    std::uint32_t unplaced_predecessors = 0;
    std::uint32_t rank = 0;
    std::size_t first_successor = 0;
  };
  static constexpr std::uint32_t kPlaced = std::numeric_limits<std::uint32_t>::max();
  std::vector<Pending> pending_;  // one more than there are nodes, to end the last list
  // Per node, a row of limit_ ancestor positions followed by the node's own stream and
  // position once placed: what a successor reads of it lies in one place, not in three arrays.
  const std::size_t row_;
  std::vector<std::int32_t> ancestor_position_;
  std::span<const double> cost_ns_;  // empty: no costs
  double handoff_ns_;
  double wakeup_ns_;
  std::vector<double> finish_;                      // per node, estimated from the costs
  std::span<const std::uint32_t> command_;          // empty: no tie-break by command
  std::unordered_set<std::uint64_t> commands_run_;  // stream << 32 | command
  std::span<const std::uint32_t> group_;            // empty: any node on any stream
  StreamIndex streams_per_group_;
  const std::vector<NodeIndex>& successor_;  // FlatSuccessors::list
};

// Turns cross-stream edges into signals. known[t] is stream t's vector clock: for every stream,
// the highest position it is guaranteed to have completed when t reaches its current node. An
// edge already covered by the clock needs no wait, which also means a stream never waits on the
// same producer twice.
void add_signals(const Adjacency& predecessors, const std::vector<std::uint32_t>& position,
                 Schedule& schedule) {
  const std::size_t n = predecessors.size();
  const std::size_t streams = schedule.streams.size();
  std::vector<std::uint32_t> placed_at(n);
  for (std::uint32_t i = 0; i < n; ++i) placed_at[schedule.order[i]] = i;
  std::vector<std::int32_t> known(streams * streams, -1);
  std::vector<std::int32_t> clock(n * streams);
  schedule.waits.assign(n, {});
  schedule.signaled.assign(n, false);

  // The order visits nodes at random places in memory, so what node i reads is asked for
  // ahead: the list header of node i + 3d, its data at i + 2d, what its predecessors hold at
  // i + d (dependencies.h).
  constexpr std::size_t kAhead = 4;
  std::vector<NodeIndex> remote;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + 3 * kAhead < n) {
      __builtin_prefetch(&predecessors[schedule.order[i + 3 * kAhead]]);
      __builtin_prefetch(predecessors[schedule.order[i + 2 * kAhead]].data());
      for (NodeIndex p : predecessors[schedule.order[i + kAhead]]) {
        __builtin_prefetch(&schedule.stream_of[p]);
        __builtin_prefetch(&placed_at[p]);
        __builtin_prefetch(&position[p]);
        __builtin_prefetch(&clock[p * streams]);
      }
    }
    const NodeIndex v = schedule.order[i];
    const StreamIndex t = schedule.stream_of[v];
    std::int32_t* mine = &known[t * streams];
    remote.clear();
    for (NodeIndex p : predecessors[v]) {
      if (schedule.stream_of[p] != t) remote.push_back(p);
    }
    // Latest producers first: waiting on them implies the most about the earlier ones.
    std::sort(remote.begin(), remote.end(),
              [&](NodeIndex a, NodeIndex b) { return placed_at[a] > placed_at[b]; });
    for (NodeIndex p : remote) {
      if (mine[schedule.stream_of[p]] >= static_cast<std::int32_t>(position[p])) continue;
      schedule.waits[v].push_back(static_cast<std::uint32_t>(schedule.signals.size()));
      schedule.signals.push_back(Signal{p, v, t});
      schedule.signaled[p] = true;
      const std::int32_t* theirs = &clock[p * streams];
      for (std::size_t s = 0; s < streams; ++s) mine[s] = std::max(mine[s], theirs[s]);
    }
    mine[t] = static_cast<std::int32_t>(position[v]);
    std::copy(mine, mine + streams, &clock[v * streams]);
  }
}

// The makespan the schedule would take if node v took cost_ns[v], every signal cost
// handoff_ns and the wake-up of every stream but the caller's wakeup_ns.
double estimated_makespan(const Schedule& schedule, std::span<const double> cost_ns,
                          double handoff_ns, double wakeup_ns) {
  std::vector<double> stream_free(schedule.streams.size(), wakeup_ns);
  if (!stream_free.empty()) stream_free[0] = 0;
  std::vector<double> finish(cost_ns.size(), 0);
  double makespan = 0;
  for (NodeIndex v : schedule.order) {
    double start = stream_free[schedule.stream_of[v]];
    for (std::uint32_t w : schedule.waits[v]) {
      start = std::max(start, finish[schedule.signals[w].producer] + handoff_ns);
    }
    finish[v] = start + cost_ns[v];
    stream_free[schedule.stream_of[v]] = finish[v];
    makespan = std::max(makespan, finish[v]);
  }
  return makespan;
}

}  // namespace

namespace {

// Checks the graph and what comes per node, and computes what every placement shares.
struct Prepared {
  TopologicalOrder topo;
  const Adjacency* given = nullptr;  // the caller's predecessor lists, if it had them
  Adjacency computed;                // else these
  std::vector<std::uint32_t> rank;
  FlatSuccessors successors;

  const Adjacency& predecessors() const { return given ? *given : computed; }
};

Prepared prepare(const Adjacency& successors, const Adjacency* predecessors,
                 std::span<const std::uint32_t> command) {
  if (!command.empty() && command.size() != successors.size()) {
    throw Error("make_schedule: " + std::to_string(command.size()) + " commands for " +
                std::to_string(successors.size()) + " nodes");
  }
  Prepared p{topological_order(successors), predecessors, {}, {}, FlatSuccessors(successors)};
  if (p.topo.on_cycle) {
    throw Error("dependency cycle through node " + std::to_string(*p.topo.on_cycle));
  }
  if (!predecessors) p.computed = predecessors_of(successors);
  p.rank = compute_ranks(successors, p.topo.order);
  return p;
}

Schedule schedule_nodes(const Adjacency& successors, const Adjacency* predecessors,
                        std::size_t max_streams, std::span<const double> cost_ns, double handoff_ns,
                        double wakeup_ns, std::span<const std::uint32_t> command) {
  if (max_streams == 0) throw Error("max_streams must be at least 1");
  if (!cost_ns.empty() && cost_ns.size() != successors.size()) {
    throw Error("make_schedule: " + std::to_string(cost_ns.size()) + " costs for " +
                std::to_string(successors.size()) + " nodes");
  }
  const Prepared prepared = prepare(successors, predecessors, command);
  auto place = [&](std::size_t limit) {
    Schedule schedule;
    schedule.rank = prepared.rank;
    Placer placer(prepared.successors, prepared.predecessors(), limit, cost_ns, handoff_ns,
                  wakeup_ns, command, {}, 0, schedule);
    placer.visit_all(prepared.topo.order);
    add_signals(prepared.predecessors(), placer.positions(), schedule);
    if (!cost_ns.empty()) {
      schedule.handoff_ns = handoff_ns;
      schedule.wakeup_ns = wakeup_ns;
    }
    return schedule;
  };
  if (cost_ns.empty()) return place(max_streams);
  // A stream more must pay for its hand-offs: keep the fewest streams whose estimated makespan
  // no larger stream count beats.
  Schedule best = place(1);
  double best_makespan = estimated_makespan(best, cost_ns, handoff_ns, wakeup_ns);
  for (std::size_t limit = 2; limit <= max_streams; ++limit) {
    Schedule candidate = place(limit);
    if (candidate.streams.size() < limit) break;  // the graph has no more parallelism to use
    const double makespan = estimated_makespan(candidate, cost_ns, handoff_ns, wakeup_ns);
    if (makespan < best_makespan) {
      best = std::move(candidate);
      best_makespan = makespan;
    }
  }
  return best;
}

}  // namespace

Schedule make_schedule(const std::vector<std::vector<NodeIndex>>& successors,
                       std::size_t max_streams, std::span<const double> cost_ns, double handoff_ns,
                       std::span<const std::uint32_t> command) {
  return schedule_nodes(successors, nullptr, max_streams, cost_ns, handoff_ns, handoff_ns, command);
}

Schedule make_schedule(const Adjacency& successors, const Adjacency& predecessors,
                       std::size_t max_streams, std::span<const double> cost_ns, double handoff_ns,
                       double wakeup_ns, std::span<const std::uint32_t> command) {
  return schedule_nodes(successors, &predecessors, max_streams, cost_ns, handoff_ns, wakeup_ns,
                        command);
}

Schedule make_device_schedule(const std::vector<std::vector<NodeIndex>>& successors,
                              std::span<const DeviceIndex> device_of, std::size_t devices,
                              std::size_t streams_per_device,
                              std::span<const std::uint32_t> command) {
  if (devices == 0 || streams_per_device == 0) {
    throw Error("make_device_schedule: at least one device and one stream per device");
  }
  if (device_of.size() != successors.size()) {
    throw Error("make_device_schedule: " + std::to_string(device_of.size()) + " devices for " +
                std::to_string(successors.size()) + " nodes");
  }
  for (NodeIndex v = 0; v < device_of.size(); ++v) {
    if (device_of[v] >= devices) {
      throw Error("make_device_schedule: node " + std::to_string(v) + " on device " +
                  std::to_string(device_of[v]) + " of " + std::to_string(devices));
    }
  }
  const Prepared prepared = prepare(successors, nullptr, command);
  Schedule schedule;
  schedule.rank = prepared.rank;
  schedule.streams_per_device = streams_per_device;
  Placer placer(prepared.successors, prepared.predecessors(), devices * streams_per_device, {}, 0,
                0, command, device_of, streams_per_device, schedule);
  placer.visit_all(prepared.topo.order);
  add_signals(prepared.predecessors(), placer.positions(), schedule);
  return schedule;
}

}  // namespace uops::runtime
