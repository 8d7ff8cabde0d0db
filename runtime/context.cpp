#include "uops/runtime/context.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "dependencies.h"
#include "uops/runtime/error.h"
#include "wait.h"

namespace uops::runtime {

struct Context::Impl {
  struct Computation {
    CpuKernel kernel;
    std::vector<std::shared_ptr<Computation>> parents;  // dropped once waited for
    std::atomic<std::uint32_t> done{0};
  };

  struct Stream {
    std::thread thread;
    std::deque<std::shared_ptr<Computation>> queue;  // guarded by Impl::mutex
    std::shared_ptr<Computation> last;               // last launched on it, guarded too
    std::size_t pending = 0;                         // launched and not finished, guarded too
    std::atomic<std::uint32_t> launched{0};          // bumped per launch, polled by the thread
  };

  const ContextOptions options;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<Stream>> streams;
  std::deque<StreamIndex> free_streams;  // in the order they ran out of work
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;  // guarded by mutex

  // Host-side state, used only by the launching thread (under mutex for active()).
  ComputationId next_id = 0;
  AccessTracker<ComputationId> tracker;
  struct Active {
    std::shared_ptr<Computation> computation;
    std::uint32_t places = 0;  // where the tracker records it
  };
  std::unordered_map<ComputationId, Active> active;

  explicit Impl(ContextOptions o) : options(o) {
    if (options.max_streams == 0) throw Error("Context: max_streams must be at least 1");
  }

  ~Impl() {
    wait_all();
    stopping.store(true, std::memory_order_relaxed);
    for (auto& stream : streams) {
      stream->launched.fetch_add(1, std::memory_order_release);
      stream->launched.notify_all();
    }
    for (auto& stream : streams) stream->thread.join();
  }

  void serve(Stream& stream, StreamIndex index) {
    for (std::uint32_t seen = 0;;) {
      std::shared_ptr<Computation> next;
      {
        std::lock_guard lock(mutex);
        if (!stream.queue.empty()) {
          next = std::move(stream.queue.front());
          stream.queue.pop_front();
        }
      }
      if (!next) {
        if (stopping.load(std::memory_order_acquire)) return;
        seen = await_change(stream.launched, seen, options.spin);
        continue;
      }
      for (const auto& parent : next->parents) wait_done(*parent);
      next->parents.clear();
      if (!failed.load(std::memory_order_relaxed)) {
        try {
          next->kernel();
        } catch (...) {
          std::lock_guard lock(mutex);
          if (!first_error) first_error = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
      next->kernel = nullptr;  // release what it captured
      {
        std::lock_guard lock(mutex);
        if (--stream.pending == 0) free_streams.push_back(index);
      }
      next->done.store(1, std::memory_order_release);
      next->done.notify_all();
    }
  }

  void wait_done(const Computation& c) const {
    for (std::uint32_t seen = c.done.load(std::memory_order_acquire); seen == 0;) {
      seen = await_change(c.done, seen, options.spin);
    }
  }

  StreamIndex choose_stream(const std::vector<std::shared_ptr<Computation>>& parents) {
    for (const auto& parent : parents) {
      for (StreamIndex s = 0; s < streams.size(); ++s) {
        if (streams[s]->last == parent) return s;
      }
    }
    if (!free_streams.empty()) return free_streams.front();
    if (streams.size() < options.max_streams) {
      auto stream = std::make_unique<Stream>();
      const auto index = static_cast<StreamIndex>(streams.size());
      stream->thread = std::thread([this, s = stream.get(), index] { serve(*s, index); });
      streams.push_back(std::move(stream));
      return index;
    }
    StreamIndex best = 0;
    for (StreamIndex s = 1; s < streams.size(); ++s) {
      if (streams[s]->pending < streams[best]->pending) best = s;
    }
    return best;
  }

  Launched launch(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
                  std::vector<BufferId> writes) {
    if (!kernel) throw Error("launch: computation '" + name + "' has no kernel");
    std::lock_guard lock(mutex);
    const ComputationId id = next_id++;
    Launched result{id, 0, {}};
    tracker.add(
        id, reads, writes,
        [&](ComputationId earlier) {
          if (earlier != id) result.dependencies.push_back(earlier);
        },
        [&](ComputationId holder) { ++active[holder].places; },
        [&](ComputationId holder) {
          auto it = active.find(holder);
          if (--it->second.places > 0) return;
          if (holder != id) covered.emplace(holder, std::move(it->second.computation));
          active.erase(it);
        });
    std::sort(result.dependencies.begin(), result.dependencies.end());
    result.dependencies.erase(std::unique(result.dependencies.begin(), result.dependencies.end()),
                              result.dependencies.end());

    auto computation = std::make_shared<Computation>();
    computation->kernel = std::move(kernel);
    for (ComputationId parent : result.dependencies) {
      if (auto it = active.find(parent); it != active.end()) {
        computation->parents.push_back(it->second.computation);
      } else {
        // Covered by this very launch: the tracker released it while recording us.
        computation->parents.push_back(covered.at(parent));
      }
    }
    covered.clear();
    // A launch without accesses is never a dependency; it is tracked only until it finishes.
    if (auto it = active.find(id); it != active.end()) it->second.computation = computation;

    result.stream = choose_stream(computation->parents);
    Stream& stream = *streams[result.stream];
    if (auto it = std::find(free_streams.begin(), free_streams.end(), result.stream);
        it != free_streams.end()) {
      free_streams.erase(it);
    }
    ++stream.pending;
    stream.last = computation;
    stream.queue.push_back(std::move(computation));
    stream.launched.fetch_add(1, std::memory_order_release);
    stream.launched.notify_all();
    return result;
  }

  // Holds computations the launch being recorded covered, until it has taken them as parents.
  std::unordered_map<ComputationId, std::shared_ptr<Computation>> covered;

  // Waits for the last computation of every stream: each stream runs its queue in order.
  void wait_all() {
    std::vector<std::shared_ptr<Computation>> lasts;
    {
      std::lock_guard lock(mutex);
      for (auto& stream : streams) {
        if (stream->last) lasts.push_back(stream->last);
      }
    }
    for (const auto& c : lasts) wait_done(*c);
  }

  void wait_for(BufferId b, bool write) {
    std::vector<std::shared_ptr<Computation>> touching;
    {
      std::lock_guard lock(mutex);
      tracker.last_accesses(
          b, write, [&](ComputationId id) { touching.push_back(active.at(id).computation); });
    }
    for (const auto& c : touching) wait_done(*c);
    std::lock_guard lock(mutex);
    if (first_error) std::rethrow_exception(first_error);
  }

  void sync() {
    wait_all();
    std::lock_guard lock(mutex);
    tracker.clear();
    active.clear();
    for (auto& stream : streams) stream->last = nullptr;
    failed.store(false, std::memory_order_relaxed);
    if (first_error) std::rethrow_exception(std::exchange(first_error, nullptr));
  }
};

Context::Context(ContextOptions options) : impl_(std::make_unique<Impl>(options)) {}
Context::~Context() = default;

Launched Context::launch(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
                         std::vector<BufferId> writes) {
  return impl_->launch(std::move(name), std::move(kernel), std::move(reads), std::move(writes));
}

void Context::read(BufferId b) {
  impl_->wait_for(b, false);
}

void Context::write(BufferId b) {
  impl_->wait_for(b, true);
}

void Context::sync() {
  impl_->sync();
}

std::vector<ComputationId> Context::active() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<ComputationId> ids;
  for (const auto& [id, entry] : impl_->active) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::size_t Context::stream_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->streams.size();
}

}  // namespace uops::runtime
