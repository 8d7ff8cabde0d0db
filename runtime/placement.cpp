#include "uops/runtime/placement.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_set>

#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

class Placer {
 public:
  Placer(const Graph& graph, const PlacementOptions& options)
      : graph_(graph), options_(options), placed_(options.devices, 0) {
    if (options.devices == 0) throw Error("placement: at least one device is needed");
    if (options.streams_per_device == 0) throw Error("placement: at least one stream per device");
    for (auto [buffer, device] : options.initially_on) {
      if (device >= options.devices) {
        throw Error("placement: buffer " + std::to_string(buffer) + " starts on device " +
                    std::to_string(device) + " of " + std::to_string(options.devices));
      }
    }
    if (!options.bandwidth.empty()) {
      if (options.bandwidth.size() != options.devices) throw shape_error();
      for (std::size_t from = 0; from < options.devices; ++from) {
        if (options.bandwidth[from].size() != options.devices) throw shape_error();
        for (std::size_t to = 0; to < options.devices; ++to) {
          if (from != to && !(options.bandwidth[from][to] > 0)) {
            throw Error("placement: bandwidth from device " + std::to_string(from) + " to " +
                        std::to_string(to) + " must be positive");
          }
        }
      }
    }
  }

  Placement run(PlacementPolicy policy) {
    Placement result;
    result.device_of.resize(graph_.size());
    std::vector<BufferId> written;
    simulate_init();
    for (NodeIndex n = 0; n < graph_.size(); ++n) {
      const DeviceIndex d = choose(policy, n);
      result.device_of[n] = d;
      ++placed_[d];
      for (BufferId b : inputs(n)) {
        auto& holders = holders_of(b);
        if (holders.count(d)) continue;
        const auto [from, time] = fastest_copy(b, d);
        holders.insert(d);
        result.transfers.push_back(Transfer{b, from, d, n, bytes(b), time});
        result.bytes_moved += bytes(b);
        result.transfer_ns += time;
      }
      for (BufferId b : graph_.node(n).writes) {
        holders_of(b) = {d};
        written.push_back(b);
      }
      simulate_place(n, d);
    }
    std::sort(written.begin(), written.end());
    written.erase(std::unique(written.begin(), written.end()), written.end());
    for (BufferId b : written) {
      if (holders_of(b).count(0)) continue;
      const auto [from, time] = fastest_copy(b, 0);
      result.gather.push_back(
          Transfer{b, from, 0, static_cast<NodeIndex>(graph_.size()), bytes(b), time});
    }
    return result;
  }

 private:
  static Error shape_error() { return Error("placement: bandwidth must be devices x devices"); }

  std::vector<BufferId> inputs(NodeIndex n) const {
    std::vector<BufferId> all = graph_.node(n).reads;
    all.insert(all.end(), graph_.node(n).writes.begin(), graph_.node(n).writes.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    return all;
  }

  std::size_t bytes(BufferId b) const {
    auto it = options_.bytes.find(b);
    return it == options_.bytes.end() ? 0 : it->second;
  }

  double bandwidth(DeviceIndex from, DeviceIndex to) const {
    return options_.bandwidth.empty() ? 1.0 : options_.bandwidth[from][to];
  }

  std::unordered_set<DeviceIndex>& holders_of(BufferId b) {
    auto [it, fresh] = holders_.try_emplace(b);
    if (fresh) {
      auto initial = options_.initially_on.find(b);
      it->second.insert(initial == options_.initially_on.end() ? 0 : initial->second);
    }
    return it->second;
  }

  std::pair<DeviceIndex, double> fastest_copy(BufferId b, DeviceIndex to) {
    std::pair<DeviceIndex, double> best{0, std::numeric_limits<double>::infinity()};
    for (DeviceIndex from : holders_of(b)) {
      const double time = double(bytes(b)) / bandwidth(from, to);
      if (time < best.second || (time == best.second && from < best.first)) best = {from, time};
    }
    return best;
  }

  DeviceIndex choose(PlacementPolicy policy, NodeIndex n) {
    const auto devices = static_cast<DeviceIndex>(options_.devices);
    if (policy == PlacementPolicy::round_robin) return n % devices;
    // Lower score wins; ties by fewer nodes placed, then lower index.
    DeviceIndex best = 0;
    double best_score = 0;
    for (DeviceIndex d = 0; d < devices; ++d) {
      const double s = score(policy, n, d);
      if (d == 0 || s < best_score || (s == best_score && placed_[d] < placed_[best])) {
        best = d;
        best_score = s;
      }
    }
    return best;
  }

  double score(PlacementPolicy policy, NodeIndex n, DeviceIndex d) {
    if (policy == PlacementPolicy::stream_aware) return busy_streams(n, d);
    double size = 0, total = 0, longest = 0;
    for (BufferId b : inputs(n)) {
      if (holders_of(b).count(d)) continue;
      const double time = fastest_copy(b, d).second;
      size += double(bytes(b));
      total += time;
      longest = std::max(longest, time);
    }
    switch (policy) {
      case PlacementPolicy::min_transfer_size:
        return size;
      case PlacementPolicy::minmin_transfer_time:
        return total;
      default:
        return longest;
    }
  }

  // The stream-aware simulation: per node its finish time, per device its streams' free times.
  void simulate_init() {
    finish_.assign(graph_.size(), 0);
    stream_free_.assign(options_.devices, std::vector<double>(options_.streams_per_device, 0));
  }

  double ready_time(NodeIndex n) const {
    double ready = 0;
    for (NodeIndex p : graph_.predecessors(n)) ready = std::max(ready, finish_[p]);
    return ready;
  }

  double busy_streams(NodeIndex n, DeviceIndex d) const {
    const double ready = ready_time(n);
    return double(std::count_if(stream_free_[d].begin(), stream_free_[d].end(),
                                [&](double free) { return free > ready; }));
  }

  void simulate_place(NodeIndex n, DeviceIndex d) {
    auto& streams = stream_free_[d];
    auto stream = std::min_element(streams.begin(), streams.end());
    const double start = std::max(*stream, ready_time(n));
    finish_[n] = start + graph_.node(n).cost_ns.value_or(1.0);
    *stream = finish_[n];
  }

  const Graph& graph_;
  const PlacementOptions& options_;
  std::vector<std::size_t> placed_;
  std::unordered_map<BufferId, std::unordered_set<DeviceIndex>> holders_;
  std::vector<double> finish_;
  std::vector<std::vector<double>> stream_free_;
};

}  // namespace

Placement place(const Graph& graph, PlacementPolicy policy, const PlacementOptions& options) {
  return Placer(graph, options).run(policy);
}

}  // namespace uops::runtime
