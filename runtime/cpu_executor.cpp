#include "uops/runtime/cpu_executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "handoff_cost.h"
#include "uops/runtime/error.h"
#include "wait.h"

namespace uops::runtime {

// Synchronization uses atomics with C++20 wait/notify (futexes on Linux): a signal that is
// already set costs one load, so chains of cheap kernels do not pay for locks.
//
// Each run has an epoch number. A node publishes completion by storing the epoch into its
// slot, so slots never need resetting between runs, and a skipped node publishes exactly like
// a finished one, which is what keeps every waiter from hanging after a failure. A stream is
// run by whoever first stores the epoch into its claim: its worker once awake, or the caller
// when it needs the stream's work before the worker came.
namespace {

bool declares_costs(const Graph& graph) {
  for (NodeIndex n = 0; n < graph.size(); ++n) {
    if (graph.node(n).cost_ns) return true;
  }
  return false;
}

}  // namespace

struct CpuExecutor::Impl {
  using Clock = std::chrono::steady_clock;
  using Epoch = std::uint32_t;

  Graph graph;
  const Clock::duration spin;
  const unsigned measured_runs;
  const bool fixed;                  // declared costs or streams bound to devices: never re-plan
  const std::size_t max_streams;     // the first schedule's streams, the re-plan's limit
  std::vector<std::thread> workers;  // worker i serves stream i + 1
  std::unique_ptr<std::atomic<Epoch>[]> done;     // per node
  std::unique_ptr<std::atomic<Epoch>[]> claimed;  // per stream
  std::vector<std::uint32_t> placed_at;           // per node, its place in schedule().order

  std::mutex run_mutex;         // serializes run(); everything below is per run
  std::atomic<Epoch> start{0};  // the run the workers serve
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};
  Epoch epoch = 0;
  std::mutex error_mutex;
  std::exception_ptr first_error;
  bool timing = false;
  Clock::time_point run_start;
  std::vector<Clock::time_point> began, ended;
  std::vector<std::uint8_t> ran;  // not vector<bool>: workers set neighbouring entries
  struct Cursor {
    StreamIndex stream;
    std::size_t next;
  };
  std::vector<Cursor> cursors;  // the streams the caller runs
  unsigned measure_left = 0;
  std::vector<double> measured_ns;  // per node, fastest of the timed runs
  // After a re-plan to several streams: the plans on trial, each's fastest run, the one running
  // and how many of its runs are left.
  std::vector<Graph> trials;
  std::vector<double> trial_ns;
  std::size_t trial = 0;
  unsigned trial_runs_left = 0;
  static constexpr unsigned kTrialRuns = 2;

  Impl(Graph g, CpuExecutorOptions options)
      : graph(std::move(g)),
        spin(options.spin),
        measured_runs(options.measured_runs),
        fixed(declares_costs(graph) || graph.schedule().streams_per_device != 0),
        max_streams(graph.schedule().streams.size()),
        done(new std::atomic<Epoch>[graph.size()]) {
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      if (!graph.node(n).cpu) throw Error("node '" + graph.node(n).name + "' has no CPU kernel");
      done[n].store(0, std::memory_order_relaxed);
    }
    began.resize(graph.size());
    ended.resize(graph.size());
    ran.resize(graph.size());
    arm_measurement(measured_runs);
    start_streams();
  }

  ~Impl() { stop_workers(); }

  void arm_measurement(unsigned runs) {
    if (fixed || max_streams <= 1 || runs == 0) return;
    measure_left = runs;
    trials.clear();
    trial_runs_left = 0;
    measured_ns.assign(graph.size(), std::numeric_limits<double>::infinity());
  }

  // Per-stream state and one worker per stream but the caller's, for the current schedule.
  void start_streams() {
    const Schedule& schedule = graph.schedule();
    const std::size_t streams = schedule.streams.size();
    claimed.reset(new std::atomic<Epoch>[streams]);
    for (StreamIndex s = 0; s < streams; ++s) claimed[s].store(epoch, std::memory_order_relaxed);
    placed_at.resize(graph.size());
    for (std::uint32_t i = 0; i < schedule.order.size(); ++i) placed_at[schedule.order[i]] = i;
    cursors.reserve(streams);
    stopping.store(false, std::memory_order_relaxed);
    const Epoch seen = start.load(std::memory_order_relaxed);
    try {
      for (StreamIndex s = 1; s < streams; ++s) {
        workers.emplace_back([this, s, seen] { serve(s, seen); });
      }
    } catch (...) {
      stop_workers();
      throw;
    }
  }

  void stop_workers() {
    stopping.store(true, std::memory_order_relaxed);
    start.store(++epoch, std::memory_order_release);
    start.notify_all();
    for (std::thread& worker : workers) worker.join();
    workers.clear();
  }

  void serve(StreamIndex stream, Epoch seen) {
    for (;;) {
      seen = await_change(start, seen, spin);
      if (stopping.load(std::memory_order_relaxed)) return;
      if (!claim(stream, seen)) continue;  // the caller ran it
      const Schedule& schedule = graph.schedule();
      for (NodeIndex n : schedule.streams[stream]) {
        for (std::uint32_t w : schedule.waits[n]) await(done[schedule.signals[w].producer], seen);
        run_node(n, seen);
      }
      // The caller waits for every stream's last node, signaled or not.
      if (!schedule.streams[stream].empty()) done[schedule.streams[stream].back()].notify_all();
    }
  }

  // Claims `stream` for run e unless someone claimed it for e already, or for a later run: a
  // worker that read e from `start` and was preempted must not take a stream of a later run.
  bool claim(StreamIndex stream, Epoch e) {
    Epoch last = claimed[stream].load(std::memory_order_relaxed);
    while (last < e) {
      if (claimed[stream].compare_exchange_weak(last, e, std::memory_order_acq_rel)) return true;
    }
    return false;
  }

  // The caller serves device 0's first stream: it may take over that device's streams only.
  bool caller_may_take(StreamIndex stream) const {
    const std::size_t group = graph.schedule().streams_per_device;
    return group == 0 || stream < group;
  }

  void await(const std::atomic<Epoch>& signal, Epoch e) const {
    for (Epoch seen = signal.load(std::memory_order_acquire); seen != e;) {
      seen = await_change(signal, seen, spin);
    }
  }

  void run_node(NodeIndex n, Epoch e) {
    if (!failed.load(std::memory_order_relaxed)) execute(n);
    done[n].store(e, std::memory_order_release);
    if (graph.schedule().signaled[n]) done[n].notify_all();
  }

  // The caller runs stream 0 and every stream it takes over, merged in the schedule's order:
  // that order is topological, so whatever a node of these streams waits for on them has run.
  void run_caller(Epoch e) {
    const Schedule& schedule = graph.schedule();
    cursors.clear();
    if (!schedule.streams.empty()) cursors.push_back({0, 0});
    for (;;) {
      Cursor* at = nullptr;
      for (Cursor& c : cursors) {
        if (c.next == schedule.streams[c.stream].size()) continue;
        if (!at || placed_at[schedule.streams[c.stream][c.next]] <
                       placed_at[schedule.streams[at->stream][at->next]]) {
          at = &c;
        }
      }
      if (!at) {
        // Out of work: take the streams no worker has started yet, else wait for the others.
        if (!take_unstarted(e)) break;
        continue;
      }
      const NodeIndex n = schedule.streams[at->stream][at->next];
      if (!wait_or_take(n, e)) continue;  // took a stream: its earlier nodes come first
      run_node(n, e);
      ++at->next;
    }
    for (StreamIndex s = 1; s < schedule.streams.size(); ++s) {
      if (!schedule.streams[s].empty()) await(done[schedule.streams[s].back()], e);
    }
  }

  // Waits for what n needs, unless some of it is on a stream no worker has started: then
  // takes that stream over and returns false.
  bool wait_or_take(NodeIndex n, Epoch e) {
    const Schedule& schedule = graph.schedule();
    for (std::uint32_t w : schedule.waits[n]) {
      const NodeIndex producer = schedule.signals[w].producer;
      if (done[producer].load(std::memory_order_acquire) == e) continue;
      const StreamIndex stream = schedule.stream_of[producer];
      if (caller_may_take(stream) && claim(stream, e)) {
        cursors.push_back({stream, 0});
        return false;
      }
      await(done[producer], e);
    }
    return true;
  }

  bool take_unstarted(Epoch e) {
    bool took = false;
    for (StreamIndex s = 1; s < graph.schedule().streams.size(); ++s) {
      if (caller_may_take(s) && claim(s, e)) {
        cursors.push_back({s, 0});
        took = true;
      }
    }
    return took;
  }

  void execute(NodeIndex n) {
    if (timing) began[n] = Clock::now();
    try {
      graph.node(n).cpu();
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!first_error) first_error = std::current_exception();
      failed.store(true, std::memory_order_relaxed);
      return;
    }
    if (timing) {
      ended[n] = Clock::now();
      ran[n] = 1;
    }
  }

  void run(Trace* trace) {
    std::lock_guard lock(run_mutex);
    const Epoch e = ++epoch;
    failed.store(false, std::memory_order_relaxed);
    first_error = nullptr;
    timing = trace != nullptr || measure_left != 0;
    if (timing) {
      std::fill(ran.begin(), ran.end(), 0);
      run_start = Clock::now();
    }
    // Wake the workers first, so their wake-up overlaps the caller's work. The release
    // publishes the per-run fields above to them.
    const Clock::time_point began_run = Clock::now();
    start.store(e, std::memory_order_release);
    start.notify_all();
    run_caller(e);
    const Clock::duration took = Clock::now() - began_run;
    if (trace) fill(*trace);
    if (first_error) std::rethrow_exception(first_error);
    if (measure_left != 0) {
      record_measurement();
    } else if (trial_runs_left != 0) {
      record_trial(std::chrono::duration<double, std::nano>(took).count());
    }
  }

  void record_measurement() {
    const double clock_ns = measured_handoff_cost().clock_ns;
    for (NodeIndex n = 0; n < graph.size(); ++n) {
      const double ns = std::chrono::duration<double, std::nano>(ended[n] - began[n]).count();
      measured_ns[n] = std::min(measured_ns[n], std::max(0.0, ns - clock_ns));
    }
    if (--measure_left == 0) replan();
  }

  // A plan on several streams is tried against the same costs on one stream, since a hand-off
  // in a real run costs more than the ping-pong measures (the data's cache lines move too, and
  // a worker may be late): the next runs decide.
  void replan() {
    const HandoffCost& cost = measured_handoff_cost();
    BuildOptions options{
        .max_streams = max_streams, .handoff_ns = cost.signal_ns, .wakeup_ns = cost.wakeup_ns};
    Graph planned = graph.rescheduled(measured_ns, options);
    if (planned.schedule().streams.size() > 1) {
      options.max_streams = 1;
      trials = {planned, planned.rescheduled(measured_ns, options)};
      trial_ns.assign(trials.size(), std::numeric_limits<double>::infinity());
      trial = 0;
      trial_runs_left = kTrialRuns;
    }
    adopt(std::move(planned));
  }

  void record_trial(double run_ns) {
    trial_ns[trial] = std::min(trial_ns[trial], run_ns);
    if (--trial_runs_left != 0) return;
    if (++trial < trials.size()) {
      trial_runs_left = kTrialRuns;
      adopt(trials[trial]);
      return;
    }
    const auto best = std::min_element(trial_ns.begin(), trial_ns.end()) - trial_ns.begin();
    adopt(std::move(trials[std::size_t(best)]));
    trials.clear();
  }

  // Stops the workers, since the new schedule may have other streams, and starts those it has.
  void adopt(Graph planned) {
    stop_workers();
    graph = std::move(planned);
    start_streams();
  }

  void fill(Trace& trace) const {
    const Schedule& schedule = graph.schedule();
    auto micros = [](Clock::duration d) {
      return std::chrono::duration<double, std::micro>(d).count();
    };
    trace.stream_count = schedule.streams.size();
    trace.handoff_ns = schedule.handoff_ns;
    trace.wakeup_ns = schedule.wakeup_ns;
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
    if (!text || !*text) {
      const auto measured = std::chrono::microseconds(
          static_cast<std::int64_t>(measured_handoff_cost().wakeup_ns / 1000));
      return std::clamp(measured, std::chrono::microseconds(20), std::chrono::microseconds(1000));
    }
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
void CpuExecutor::remeasure() {
  std::lock_guard lock(impl_->run_mutex);
  impl_->arm_measurement(std::max(1u, impl_->measured_runs));
}
const Graph& CpuExecutor::graph() const {
  return impl_->graph;
}

}  // namespace uops::runtime
