// The host side of eager mode, shared by Context (CPU threads) and CudaContext (driver
// streams): each launch's dependencies against the active computations (AccessTracker, the
// builder's rule), the retirement of computations whose accesses later writes covered, and
// GrCUDA's stream choice. It only decides; the executor keeps the computations (by id) and
// the streams, and tells the plan when a stream has run out of work. Not thread-safe: the
// executor calls it under its own lock.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "dependencies.h"
#include "uops/runtime/context.h"

namespace uops::runtime {

class EagerPlan {
 public:
  explicit EagerPlan(std::size_t max_streams);

  struct Decision {
    Launched launched;
    // Dependencies that this launch covered: no longer active, so the executor may drop
    // them once it has taken them as parents.
    std::vector<ComputationId> retired;
    // The stream is new: the executor creates it (its index is the stream count before).
    bool new_stream = false;
  };

  // Decides a launch: its id, its dependencies, its stream. A launch goes on the stream of a
  // parent that is its stream's last launch (that edge is then stream order); else on the free
  // stream (one that ran out of work) that became free earliest; else on a new stream while
  // fewer than max_streams exist; else on the stream with the fewest pending launches.
  Decision launch(const std::vector<BufferId>& reads, const std::vector<BufferId>& writes);

  // `count` launches on stream s finished (CPU), or all of them did (CUDA, from an event
  // query).
  void finished(StreamIndex s, std::size_t count);
  void finished_all(StreamIndex s);

  // What a host read (write) of b waits for: the last writer, and for a write also the
  // readers since.
  std::vector<ComputationId> touching(BufferId b, bool write) const;
  // Forgets every computation (after the executor has waited for all of them).
  void clear();

  std::vector<ComputationId> active() const;  // ascending
  bool is_active(ComputationId id) const {
    return id >= first_ && id - first_ < places_.size() && places_[id - first_] > 0;
  }
  std::size_t stream_count() const { return streams_.size(); }
  std::optional<ComputationId> last_on(StreamIndex s) const { return streams_[s].last; }
  std::size_t pending_on(StreamIndex s) const { return streams_[s].pending; }

 private:
  struct Stream {
    std::optional<ComputationId> last;
    std::size_t pending = 0;
  };
  StreamIndex choose_stream(const std::vector<ComputationId>& parents, bool& is_new);

  std::size_t max_streams_;
  ComputationId next_id_ = 0;
  AccessTracker<ComputationId> tracker_;
  // places_[id - first_]: where the tracker holds computation id, 0 once it is not active. Ids
  // only grow and inactive ones leave the front, so this spans the oldest active one onwards.
  std::deque<std::uint32_t> places_;
  ComputationId first_ = 0;
  std::vector<Stream> streams_;
  std::deque<StreamIndex> free_;  // in the order they ran out of work
};

}  // namespace uops::runtime
