#include "uops/runtime/cpu_executor.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "uops/runtime/error.h"
#include "wait.h"

namespace uops::runtime {

// Synchronization uses atomics with C++20 wait/notify (futexes on Linux): a signal that is
// already set costs one load, so chains of cheap kernels do not pay for locks.
//
// Each run has an epoch number. A node publishes completion by storing the epoch into its
// slot, so slots never need resetting between runs, and a skipped node publishes exactly like
// a finished one, which is what keeps every waiter from hanging after a failure.
struct CpuExecutor::Impl {
  using Clock = std::chrono::steady_clock;

  Graph graph;
  const Clock::duration spin;
  std::vector<std::thread> workers;  // worker i serves stream i + 1
  std::unique_ptr<std::atomic<std::uint32_t>[]> done;

  std::mutex run_mutex;  // serializes run(); everything below is per run
  std::atomic<std::uint32_t> start{0};
  std::atomic<std::uint32_t> unfinished_streams{0};
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};
  std::uint32_t epoch = 0;
  std::mutex error_mutex;
  std::exception_ptr first_error;
  bool tracing = false;
  Clock::time_point run_start;
  std::vector<Clock::time_point> began, ended;
  std::vector<std::uint8_t> ran;  // not vector<bool>: workers set neighbouring entries

  Impl(Graph g, CpuExecutorOptions options)
      : graph(std::move(g)),
        spin(options.spin),
        done(new std::atomic<std::uint32_t>[graph.size()]) {
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      if (!graph.node(n).cpu) throw Error("node '" + graph.node(n).name + "' has no CPU kernel");
      done[n].store(0, std::memory_order_relaxed);
    }
    began.resize(graph.size());
    ended.resize(graph.size());
    ran.resize(graph.size());
    const std::size_t streams = graph.schedule().streams.size();
    try {
      for (StreamIndex s = 1; s < streams; ++s) workers.emplace_back([this, s] { serve(s); });
    } catch (...) {
      stop_workers();
      throw;
    }
  }

  ~Impl() { stop_workers(); }

  void stop_workers() {
    stopping.store(true, std::memory_order_relaxed);
    start.fetch_add(1, std::memory_order_release);
    start.notify_all();
    for (std::thread& worker : workers) worker.join();
  }

  void serve(StreamIndex stream) {
    std::uint32_t seen = 0;
    for (;;) {
      seen = await_change(start, seen, spin);
      if (stopping.load(std::memory_order_relaxed)) return;
      run_stream(stream);
      if (unfinished_streams.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        unfinished_streams.notify_all();
      }
    }
  }

  void run_stream(StreamIndex stream) {
    const Schedule& schedule = graph.schedule();
    for (NodeIndex n : schedule.streams[stream]) {
      for (std::uint32_t w : schedule.waits[n]) {
        await(done[schedule.signals[w].producer]);
      }
      if (!failed.load(std::memory_order_relaxed)) execute(n);
      done[n].store(epoch, std::memory_order_release);
      if (schedule.signaled[n]) done[n].notify_all();
    }
  }

  void await(const std::atomic<std::uint32_t>& signal) const {
    for (std::uint32_t seen = signal.load(std::memory_order_acquire); seen != epoch;) {
      seen = await_change(signal, seen, spin);
    }
  }

  void execute(NodeIndex n) {
    if (tracing) began[n] = Clock::now();
    try {
      graph.node(n).cpu();
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    if (tracing) {
      ended[n] = Clock::now();
      ran[n] = 1;
    }
  }

  void run(Trace* trace) {
    std::lock_guard lock(run_mutex);
    ++epoch;
    failed.store(false, std::memory_order_relaxed);
    first_error = nullptr;
    tracing = trace != nullptr;
    if (tracing) {
      std::fill(ran.begin(), ran.end(), 0);
      run_start = Clock::now();
    }
    unfinished_streams.store(static_cast<std::uint32_t>(workers.size()), std::memory_order_relaxed);
    // The release publishes the per-run fields above to the workers.
    start.fetch_add(1, std::memory_order_release);
    start.notify_all();
    if (!graph.schedule().streams.empty()) run_stream(0);
    for (std::uint32_t left = workers.size(); left != 0;) {
      left = await_change(unfinished_streams, left, spin);
    }
    if (trace) fill(*trace);
    if (first_error) std::rethrow_exception(first_error);
  }

  void fill(Trace& trace) const {
    const Schedule& schedule = graph.schedule();
    auto micros = [](Clock::duration d) {
      return std::chrono::duration<double, std::micro>(d).count();
    };
    trace.stream_count = schedule.streams.size();
    trace.events.clear();
    for (NodeIndex n : schedule.order) {
      if (!ran[n]) continue;
      trace.events.push_back(TraceEvent{graph.node(n).name, n, schedule.stream_of[n],
                                        micros(began[n] - run_start), micros(ended[n] - began[n])});
    }
  }
};

std::chrono::microseconds CpuExecutorOptions::default_spin() {
  static const std::chrono::microseconds spin = [] {
    const char* text = std::getenv("UOPS_SPIN_US");
    if (!text || !*text) return std::chrono::microseconds(200);
    char* end = nullptr;
    const long long value = std::strtoll(text, &end, 10);
    if (*end != '\0' || value < 0) {
      throw Error(std::string("UOPS_SPIN_US must be a non-negative integer, got '") + text + "'");
    }
    return std::chrono::microseconds(value);
  }();
  return spin;
}

CpuExecutor::CpuExecutor(Graph graph, CpuExecutorOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), options)) {}
CpuExecutor::~CpuExecutor() = default;
void CpuExecutor::run(Trace* trace) {
  impl_->run(trace);
}
const Graph& CpuExecutor::graph() const {
  return impl_->graph;
}

}  // namespace uops::runtime
