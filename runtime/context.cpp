#include "uops/runtime/context.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "eager_plan.h"
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
    std::atomic<std::uint32_t> launched{0};          // bumped per launch, polled by the thread
  };

  const ContextOptions options;
  mutable std::mutex mutex;
  EagerPlan plan;  // guarded by mutex
  std::vector<std::unique_ptr<Stream>> streams;
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;  // guarded by mutex
  // The active computations (see EagerPlan) by id - active_first, null where not active;
  // guarded by mutex. Ids only grow, and nulls leave the front.
  std::deque<std::shared_ptr<Computation>> active;
  ComputationId active_first = 0;
  std::shared_ptr<Computation>& handle(ComputationId id) { return active[id - active_first]; }

  explicit Impl(ContextOptions o) : options(o), plan(o.max_streams) {}

  ~Impl() {
    wait_all();
    stopping.store(true, std::memory_order_relaxed);
    for (auto& stream : streams) {
      stream->launched.fetch_add(1, std::memory_order_release);
      stream->launched.notify_all();
    }
    for (auto& stream : streams) stream->thread.join();
  }

  // Takes the whole queue at once and reports the batch finished at once: two lock
  // acquisitions per batch rather than per computation, so the launching thread rarely waits.
  void serve(Stream& stream, StreamIndex index) {
    std::deque<std::shared_ptr<Computation>> batch;
    for (std::uint32_t seen = 0;;) {
      {
        std::lock_guard lock(mutex);
        batch.swap(stream.queue);
      }
      if (batch.empty()) {
        if (stopping.load(std::memory_order_acquire)) return;
        seen = await_change(stream.launched, seen, options.spin);
        continue;
      }
      // The last one is published only once the stream counts as free, so that a host that
      // waited for it finds the stream free.
      std::shared_ptr<Computation> last = std::move(batch.back());
      batch.pop_back();
      for (const std::shared_ptr<Computation>& next : batch) {
        execute(*next);
        publish(*next);
      }
      execute(*last);
      const std::size_t count = batch.size() + 1;
      batch.clear();
      {
        std::lock_guard lock(mutex);
        plan.finished(index, count);
      }
      publish(*last);
    }
  }

  void execute(Computation& c) {
    for (const auto& parent : c.parents) wait_done(*parent);
    c.parents.clear();
    if (!failed.load(std::memory_order_relaxed)) {
      try {
        c.kernel();
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
      }
    }
    c.kernel = nullptr;  // release what it captured
  }

  static void publish(Computation& c) {
    c.done.store(1, std::memory_order_release);
    c.done.notify_all();
  }

  void wait_done(const Computation& c) const {
    for (std::uint32_t seen = c.done.load(std::memory_order_acquire); seen == 0;) {
      seen = await_change(c.done, seen, options.spin);
    }
  }

  Launched launch(std::string name, CpuKernel kernel, std::vector<BufferId> reads,
                  std::vector<BufferId> writes) {
    if (!kernel) throw Error("launch: computation '" + name + "' has no kernel");
    std::lock_guard lock(mutex);
    EagerPlan::Decision d = plan.launch(reads, writes);
    auto computation = std::make_shared<Computation>();
    computation->kernel = std::move(kernel);
    computation->parents.reserve(d.launched.dependencies.size());
    for (ComputationId parent : d.launched.dependencies) {
      computation->parents.push_back(handle(parent));
    }
    for (ComputationId id : d.retired) handle(id) = nullptr;
    // A launch without accesses is never a dependency; it is tracked only until it finishes.
    active.push_back(plan.is_active(d.launched.id) ? computation : nullptr);
    for (; !active.empty() && !active.front(); ++active_first) active.pop_front();

    if (d.new_stream) {
      auto stream = std::make_unique<Stream>();
      const StreamIndex index = d.launched.stream;
      stream->thread = std::thread([this, s = stream.get(), index] { serve(*s, index); });
      streams.push_back(std::move(stream));
    }
    Stream& stream = *streams[d.launched.stream];
    stream.last = computation;
    stream.queue.push_back(std::move(computation));
    stream.launched.fetch_add(1, std::memory_order_release);
    stream.launched.notify_all();
    return std::move(d.launched);
  }

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
      for (ComputationId id : plan.touching(b, write)) touching.push_back(handle(id));
    }
    for (const auto& c : touching) wait_done(*c);
    std::lock_guard lock(mutex);
    if (first_error) std::rethrow_exception(first_error);
  }

  void sync() {
    wait_all();
    std::lock_guard lock(mutex);
    plan.clear();
    active_first += active.size();
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
  return impl_->plan.active();
}

std::size_t Context::stream_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->streams.size();
}

}  // namespace uops::runtime
