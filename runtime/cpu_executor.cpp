#include "uops/runtime/cpu_executor.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "handoff_cost.h"
#include "thread_affinity.h"
#include "uops/runtime/error.h"
#include "wait.h"

namespace uops::runtime {

// Synchronization uses atomics with C++20 wait/notify (futexes on Linux): a signal that is
// already set costs one load, so chains of cheap kernels do not pay for locks.
//
// Each run has an epoch number. A node publishes completion by storing the epoch into its
// slot, so slots never need resetting between runs, and a skipped node publishes exactly like
// a finished one, which is what keeps every waiter from hanging after a failure. The nodes of a
// worker's stream are claimed one at a time, in stream order, by whoever comes first: its
// worker once awake, or the caller while the worker is not there. A worker that wakes late
// thus still takes the rest of its stream, where claiming the whole stream left it idle.
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
  std::unique_ptr<std::atomic<Epoch>[]> done;  // per node
  // Per stream: (run << 32) | how many of its nodes are claimed in that run.
  std::unique_ptr<std::atomic<std::uint64_t>[]> next;
  std::unique_ptr<std::atomic<Epoch>[]> present;  // per stream: the last run its worker joined
  std::unique_ptr<std::atomic<Epoch>[]> parked;   // per stream: the last run its worker left
  std::unique_ptr<std::atomic<Epoch>[]> worked;   // per stream: the last run its worker ran in
  std::vector<std::uint32_t> placed_at;           // per node, its place in schedule().order
  std::vector<std::uint32_t> place_in_stream;     // per node

  std::mutex run_mutex;             // serializes run(); everything below is per run
  std::atomic<Epoch> start{0};      // the run the workers serve
  std::atomic<int> caller_cpu{-1};  // where the caller started that run
  std::atomic<bool> stopping{false};
  std::atomic<bool> failed{false};
  Epoch epoch = 0;
  Epoch woken = 0;  // the last run that woke the workers
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
  // After a re-plan to several streams, the trial against one stream: the plan not running,
  // each plan's fastest run (0: the re-planned one, 1: one stream), the one running and how
  // many trial runs are left.
  std::optional<Graph> waiting_plan;
  double trial_ns[2] = {};
  std::size_t trial = 0;
  unsigned trial_runs_left = 0;
  static constexpr unsigned kTrialRounds = 3;

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
    start_workers();
  }

  ~Impl() { stop_workers(); }

  void arm_measurement(unsigned runs) {
    if (fixed || max_streams <= 1 || runs == 0) return;
    measure_left = runs;
    waiting_plan.reset();
    trial_runs_left = 0;
    measured_ns.assign(graph.size(), std::numeric_limits<double>::infinity());
  }

  // The tables of the current schedule, and the streams' counters reset.
  void index_schedule() {
    const Schedule& schedule = graph.schedule();
    for (StreamIndex s = 0; s < max_streams; ++s) {
      next[s].store(std::uint64_t(epoch) << 32, std::memory_order_relaxed);
      present[s].store(epoch, std::memory_order_relaxed);
    }
    placed_at.resize(graph.size());
    for (std::uint32_t i = 0; i < schedule.order.size(); ++i) placed_at[schedule.order[i]] = i;
    place_in_stream.resize(graph.size());
    for (const std::vector<NodeIndex>& nodes : schedule.streams) {
      for (std::uint32_t i = 0; i < nodes.size(); ++i) place_in_stream[nodes[i]] = i;
    }
  }

  // One worker per stream but the caller's, up to the first schedule's streams, kept for the
  // executor's life: a re-planned schedule uses those it needs. (Workers started anew at each
  // re-plan were placed on the caller's core and took runs to move, which biased the trial.)
  void start_workers() {
    next.reset(new std::atomic<std::uint64_t>[max_streams]);
    present.reset(new std::atomic<Epoch>[max_streams]);
    parked.reset(new std::atomic<Epoch>[max_streams]);
    worked.reset(new std::atomic<Epoch>[max_streams]);
    for (StreamIndex s = 0; s < max_streams; ++s) {
      parked[s].store(0, std::memory_order_relaxed);
      worked[s].store(0, std::memory_order_relaxed);
    }
    index_schedule();
    cursors.reserve(max_streams);
    try {
      for (StreamIndex s = 1; s < max_streams; ++s) {
        workers.emplace_back([this, s] { serve(s, 0); });
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

  // How many runs apart a worker may step off the caller's core, or look whether to (below).
  static constexpr Epoch kRunsBetweenSteps = 64, kRunsBetweenLooks = 8;

  void serve(StreamIndex stream, Epoch seen) {
    Epoch may_step = 0;
    for (;;) {
      seen = await_change(start, seen, spin);
      if (stopping.load(std::memory_order_relaxed)) return;
      if (stream < graph.schedule().streams.size()) {
        // Woken onto the caller's core while another core idles (the kernel does that now and
        // then, and keeps doing it, since it wakes a thread where it last ran): the two would
        // take turns on one core, so this worker moves off it. Not where every core is busy:
        // the kernel soon puts it back, a move costs a migration, and the caller, once it
        // waits, leaves its core to the worker (on a loaded machine tiny runs took twice as
        // long). Looked at every few runs only.
        const int caller = caller_cpu.load(std::memory_order_relaxed);
        if (seen >= may_step && sched_getcpu() == caller) {
          const bool idle = idle_core_likely();
          if (idle) step_off(caller);
          may_step = seen + (idle ? kRunsBetweenSteps : kRunsBetweenLooks);
        }
        present[stream].store(seen, std::memory_order_relaxed);  // the caller leaves the rest
        for (std::uint32_t place; claim_next(stream, seen, place);) {
          worked[stream].store(seen, std::memory_order_relaxed);
          run_place(stream, place, seen);
        }
      }
      // Done with the schedule for this run: a re-plan may replace it.
      parked[stream].store(seen, std::memory_order_release);
      parked[stream].notify_all();
    }
  }

  // How many nodes of `stream` are claimed in run e.
  std::uint32_t claimed(StreamIndex stream, Epoch e) const {
    const std::uint64_t now = next[stream].load(std::memory_order_acquire);
    return Epoch(now >> 32) == e ? std::uint32_t(now) : 0;
  }

  // Claims the node at `place` of `stream` for run e, if it is the next unclaimed one.
  bool claim(StreamIndex stream, Epoch e, std::uint32_t place) {
    std::uint64_t expected = place == 0 ? next[stream].load(std::memory_order_relaxed)
                                        : (std::uint64_t(e) << 32) | place;
    if (place == 0 && Epoch(expected >> 32) >= e) return false;
    return next[stream].compare_exchange_strong(expected, (std::uint64_t(e) << 32) | (place + 1),
                                                std::memory_order_acq_rel);
  }

  // Claims the next unclaimed node of `stream` for run e into `place`; false once all are
  // claimed, or once run e is over (a worker preempted since it read e must not take part in
  // a later run).
  bool claim_next(StreamIndex stream, Epoch e, std::uint32_t& place) {
    const std::size_t size = graph.schedule().streams[stream].size();
    std::uint64_t now = next[stream].load(std::memory_order_relaxed);
    for (;;) {
      const Epoch run = Epoch(now >> 32);
      if (run > e) return false;
      place = run == e ? std::uint32_t(now) : 0;
      if (place == size) return false;
      if (next[stream].compare_exchange_weak(now, (std::uint64_t(e) << 32) | (place + 1),
                                             std::memory_order_acq_rel)) {
        return true;
      }
    }
  }

  // Runs a claimed node once its predecessor on the stream (claimed earlier, maybe by another
  // thread) and its producers have.
  void run_place(StreamIndex stream, std::uint32_t place, Epoch e) {
    const Schedule& schedule = graph.schedule();
    const std::vector<NodeIndex>& nodes = schedule.streams[stream];
    if (place > 0) await(done[nodes[place - 1]], e);
    const NodeIndex n = nodes[place];
    for (std::uint32_t w : schedule.waits[n]) await(done[schedule.signals[w].producer], e);
    run_node(n, e);
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
    // A worker's stream may be shared with the caller, who then waits on any of its nodes.
    const Schedule& schedule = graph.schedule();
    if (schedule.signaled[n] || schedule.stream_of[n] != 0) done[n].notify_all();
  }

  // The caller runs stream 0 and the nodes it claims of streams whose worker is not there,
  // merged in the schedule's order: that order is topological, so whatever such a node waits
  // for on these streams has run. It stops claiming a stream's nodes once the worker comes.
  void run_caller(Epoch e) {
    const Schedule& schedule = graph.schedule();
    if (schedule.streams.size() == 1) {  // nothing to wait for or take: the common plan
      for (NodeIndex n : schedule.streams[0]) run_node(n, e);
      return;
    }
    cursors.clear();
    if (!schedule.streams.empty()) cursors.push_back({0, 0});
    for (;;) {
      Cursor* at = first_in_order(e);
      if (!at) {
        // Out of work: take the streams whose worker is not there, else wait for the others.
        if (!take_absent(e)) break;
        continue;
      }
      const NodeIndex n = schedule.streams[at->stream][at->next];
      if (!wait_or_take(n, e)) continue;  // took a stream: its earlier nodes come first
      if (at->stream == 0) {
        run_node(n, e);
      } else {
        if (!claim(at->stream, e, at->next)) continue;  // the worker came and took it
        run_place(at->stream, at->next, e);
      }
      ++at->next;
    }
    for (StreamIndex s = 1; s < schedule.streams.size(); ++s) {
      if (!schedule.streams[s].empty()) await(done[schedule.streams[s].back()], e);
    }
  }

  // The caller's cursor whose next node comes first in the schedule's order, after dropping
  // the streams whose worker came and skipping what others claimed.
  Cursor* first_in_order(Epoch e) {
    const Schedule& schedule = graph.schedule();
    Cursor* at = nullptr;
    for (Cursor& c : cursors) {
      if (c.stream != 0) {
        if (present[c.stream].load(std::memory_order_relaxed) == e) {
          c.next = schedule.streams[c.stream].size();
          continue;
        }
        c.next = std::max<std::size_t>(c.next, claimed(c.stream, e));
      }
      if (c.next == schedule.streams[c.stream].size()) continue;
      if (!at || placed_at[schedule.streams[c.stream][c.next]] <
                     placed_at[schedule.streams[at->stream][at->next]]) {
        at = &c;
      }
    }
    return at;
  }

  bool has_cursor(StreamIndex stream) const {
    return std::any_of(cursors.begin(), cursors.end(),
                       [&](const Cursor& c) { return c.stream == stream; });
  }

  // Whether the caller may claim `stream`'s nodes in run e: its worker is not there yet.
  bool absent(StreamIndex stream, Epoch e) const {
    return stream != 0 && caller_may_take(stream) &&
           present[stream].load(std::memory_order_relaxed) != e && !has_cursor(stream);
  }

  // Waits for what n needs, unless some of it is unclaimed on a stream whose worker is not
  // there: then starts claiming that stream's nodes and returns false.
  bool wait_or_take(NodeIndex n, Epoch e) {
    const Schedule& schedule = graph.schedule();
    for (std::uint32_t w : schedule.waits[n]) {
      const NodeIndex producer = schedule.signals[w].producer;
      if (done[producer].load(std::memory_order_acquire) == e) continue;
      const StreamIndex stream = schedule.stream_of[producer];
      const std::uint32_t from = claimed(stream, e);
      if (absent(stream, e) && place_in_stream[producer] >= from) {
        cursors.push_back({stream, from});
        return false;
      }
      await(done[producer], e);
    }
    return true;
  }

  bool take_absent(Epoch e) {
    bool took = false;
    for (StreamIndex s = 1; s < graph.schedule().streams.size(); ++s) {
      const std::uint32_t from = claimed(s, e);
      if (absent(s, e) && from < graph.schedule().streams[s].size()) {
        cursors.push_back({s, from});
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
    // Wake the workers first, so their wake-up overlaps the caller's work (none on a
    // schedule of one stream). The release publishes the per-run fields above to them.
    const Clock::time_point began_run = Clock::now();
    if (graph.schedule().streams.size() > 1) {
      woken = e;
      caller_cpu.store(sched_getcpu(), std::memory_order_relaxed);
      start.store(e, std::memory_order_release);
      start.notify_all();
    }
    run_caller(e);
    const Clock::duration took = Clock::now() - began_run;
    if (trace) fill(*trace);
    if (first_error) std::rethrow_exception(first_error);
    if (measure_left != 0) {
      record_measurement();
    } else if (trial_runs_left != 0) {
      record_trial(std::chrono::duration<double, std::nano>(took).count(), e);
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
      waiting_plan = planned.rescheduled(measured_ns, options);
      trial_ns[0] = trial_ns[1] = std::numeric_limits<double>::infinity();
      trial = 0;
      trial_runs_left = 2 * kTrialRounds;
    }
    adopt(std::move(planned));
  }

  // The two plans run in turns, so that whatever slows runs down for a while (a neighbour's
  // threads spinning on the other core, a new worker the kernel has not yet moved off the
  // caller's core) weighs on both; the faster run of each decides. A run of the re-planned
  // plan in which some worker ran nothing measured the caller alone, not the plan: it does
  // not count, and if no run counts the re-planned plan is kept, since a stream whose worker
  // does not come costs the caller only its claims. For the same reason one stream must win
  // by a clear margin: a tie means the workers came late on every trial run (a fork/join
  // after a pause on a VM whose idle core wakes slowly), where the re-planned plan costs its
  // claims but gains a core on every run where they come in time.
  static constexpr double kOneStreamMargin = 0.9;
  void record_trial(double run_ns, Epoch e) {
    bool counts = true;
    for (StreamIndex s = 1; trial == 0 && s < graph.schedule().streams.size(); ++s) {
      counts &=
          graph.schedule().streams[s].empty() || worked[s].load(std::memory_order_relaxed) == e;
    }
    if (counts) trial_ns[trial] = std::min(trial_ns[trial], run_ns);
    const bool one_stream_faster = trial_ns[1] < kOneStreamMargin * trial_ns[0] &&
                                   trial_ns[0] != std::numeric_limits<double>::infinity();
    const std::size_t next = --trial_runs_left != 0 ? 1 - trial : one_stream_faster;
    if (next != trial) {
      await_parked();
      std::swap(graph, *waiting_plan);
      index_schedule();
      trial = next;
    }
    if (trial_runs_left == 0) waiting_plan.reset();
  }

  // Replaces the schedule between runs, once every worker is done reading the last one.
  void adopt(Graph planned) {
    await_parked();
    graph = std::move(planned);
    index_schedule();
  }

  void await_parked() {
    for (StreamIndex s = 1; s < max_streams; ++s) await(parked[s], woken);
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
