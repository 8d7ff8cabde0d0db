#include "eager_plan.h"

#include <algorithm>

#include "uops/runtime/error.h"

namespace uops::runtime {

EagerPlan::EagerPlan(std::size_t max_streams) : max_streams_(max_streams) {
  if (max_streams == 0) throw Error("Context: max_streams must be at least 1");
}

EagerPlan::Decision EagerPlan::launch(const std::vector<BufferId>& reads,
                                      const std::vector<BufferId>& writes) {
  const ComputationId id = next_id_++;
  places_.push_back(0);
  Decision d{Launched{id, 0, {}}, {}, false};
  tracker_.add(
      id, reads, writes,
      [&](ComputationId earlier) {
        if (earlier != id) d.launched.dependencies.push_back(earlier);
      },
      [&](ComputationId holder) { ++places_[holder - first_]; },
      [&](ComputationId holder) {
        if (--places_[holder - first_] == 0 && holder != id) d.retired.push_back(holder);
      });
  for (; !places_.empty() && places_.front() == 0; ++first_) places_.pop_front();
  auto& deps = d.launched.dependencies;
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  d.launched.stream = choose_stream(deps, d.new_stream);
  Stream& stream = streams_[d.launched.stream];
  if (auto it = std::find(free_.begin(), free_.end(), d.launched.stream); it != free_.end()) {
    free_.erase(it);
  }
  ++stream.pending;
  stream.last = id;
  return d;
}

StreamIndex EagerPlan::choose_stream(const std::vector<ComputationId>& parents, bool& is_new) {
  for (ComputationId parent : parents) {
    for (StreamIndex s = 0; s < streams_.size(); ++s) {
      if (streams_[s].last == parent) return s;
    }
  }
  if (!free_.empty()) return free_.front();
  if (streams_.size() < max_streams_) {
    is_new = true;
    streams_.emplace_back();
    return static_cast<StreamIndex>(streams_.size() - 1);
  }
  StreamIndex best = 0;
  for (StreamIndex s = 1; s < streams_.size(); ++s) {
    if (streams_[s].pending < streams_[best].pending) best = s;
  }
  return best;
}

void EagerPlan::finished(StreamIndex s, std::size_t count) {
  streams_[s].pending -= count;
  if (streams_[s].pending == 0) free_.push_back(s);
}

void EagerPlan::finished_all(StreamIndex s) {
  if (streams_[s].pending == 0) return;
  streams_[s].pending = 0;
  free_.push_back(s);
}

std::vector<ComputationId> EagerPlan::touching(BufferId b, bool write) const {
  std::vector<ComputationId> ids;
  tracker_.last_accesses(b, write, [&](ComputationId id) { ids.push_back(id); });
  return ids;
}

void EagerPlan::clear() {
  tracker_.clear();
  places_.clear();
  first_ = next_id_;
  for (Stream& stream : streams_) stream.last.reset();
}

std::vector<ComputationId> EagerPlan::active() const {
  std::vector<ComputationId> ids;
  for (std::size_t i = 0; i < places_.size(); ++i) {
    if (places_[i] > 0) ids.push_back(first_ + i);
  }
  return ids;
}

}  // namespace uops::runtime
