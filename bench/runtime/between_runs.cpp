// bench_runtime --between-runs: each graph run as an application runs it, after a pause of other
// work on the calling thread, interleaved in one process with the same graph in oneTBB's flow
// graph (ordinary and lightweight policy) and in OpenMP tasks, all on 2 threads and without
// declared costs. Per peer and graph it prints the median wall time of one run (per node, or
// per run for fork/join) and the CPU time per run of the threads the peer started: for graphs
// of empty kernels that is their spinning and waking.
//
// It restarts itself with OMP_WAIT_POLICY=passive unless the policy is set, as the other benches
// do: libgomp's threads otherwise spin 3-8 ms after each OpenMP run, so on 2 cores whichever
// peer runs next shares a core with a spinner and no runtime but OpenMP can show a fork/join
// speedup above 1.33x there (docs/design.md, section 3.8).
#include "between_runs.h"

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "bench/common/bench_common.h"
#include "graphs.h"
#include "uops/runtime/cpu_executor.h"

#ifdef UOPS_BENCH_TBB
#include <tbb/global_control.h>

#include "tbb_graph.h"
#endif

namespace uops::bench {
namespace {

using Clock = std::chrono::steady_clock;

double nanoseconds(Clock::duration d) {
  return std::chrono::duration<double, std::nano>(d).count();
}

using ThreadIds = std::vector<long>;

ThreadIds thread_ids() {
  ThreadIds ids;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ids.push_back(std::atol(entry->d_name));
    }
    closedir(dir);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The threads in `now` that are not in `before`: those a peer started.
ThreadIds started(const ThreadIds& before, const ThreadIds& now) {
  ThreadIds ids;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(),
                      std::back_inserter(ids));
  return ids;
}

// CPU nanoseconds these threads have run, from each thread's CPU clock: Linux names the clock
// of any thread of this process (glibc's pthread_getcpuclockid makes the same id), and unlike
// /proc's schedstat it counts a running thread up to now rather than up to its last tick.
double cpu_ns(const ThreadIds& threads) {
  double total = 0;
  for (long tid : threads) {
    const clockid_t clock = clockid_t((~unsigned(tid) << 3) | 6);  // per-thread, scheduler time
    timespec t{};
    if (clock_gettime(clock, &t) == 0) total += double(t.tv_sec) * 1e9 + double(t.tv_nsec);
  }
  return total;
}

// The application's own work between two runs of a graph: the calling thread computes for
// `pause` while the runtimes' threads have nothing to do.
void other_work(std::chrono::microseconds pause) {
  const auto end = Clock::now() + pause;
  std::uint64_t x = 1;
  while (Clock::now() < end) {
    for (int i = 0; i < 100; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  benchmark::DoNotOptimize(x);
}

struct Peer {
  std::string name;
  std::function<void()> run;
  const ThreadIds* threads;  // the threads it started (besides the caller)
};

struct Figure {
  double wall_ns = 0;  // median of one run
  double cpu_ns = 0;   // CPU of the peer's own threads per run, spinning included
  // The runs during which the other peers' threads used under a tenth of a core (OpenMP's
  // spin for several ms after each of its runs): their median, and how many there were.
  double alone_wall_ns = 0;
  int alone_runs = 0;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// Runs the peers in turns, a new random order each sample: a rotated order would keep each
// peer behind the same neighbour, and the one behind OpenMP would always start while its
// threads still spin (for about 8 ms) on the second core. After a pause each run starts cold;
// with no pause ("back to back") each timed run directly follows an untimed run of the same
// graph. A peer's CPU is that of its own threads over the whole interleaving, per timed run,
// so spinning that lasts into another peer's turn is still charged to it. A timed run (with
// its untimed run back to back) also records the CPU the other peers' threads took meanwhile.
std::vector<Figure> interleave(const std::vector<Peer>& peers, std::chrono::microseconds pause,
                               int samples) {
  const std::size_t count = peers.size();
  std::vector<ThreadIds> others(count);
  for (std::size_t i = 0; i < count; ++i) {
    for (const Peer& peer : peers) {
      std::set_difference(peer.threads->begin(), peer.threads->end(), peers[i].threads->begin(),
                          peers[i].threads->end(), std::back_inserter(others[i]));
    }
    std::sort(others[i].begin(), others[i].end());
    others[i].erase(std::unique(others[i].begin(), others[i].end()), others[i].end());
  }
  for (int warm = 0; warm < 3; ++warm) {
    for (const Peer& peer : peers) {
      other_work(pause);
      peer.run();
    }
  }
  std::vector<double> cpu_before;
  for (const Peer& peer : peers) cpu_before.push_back(cpu_ns(*peer.threads));
  std::vector<std::vector<double>> wall(count), alone(count);
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 random(2026);
  for (int s = 0; s < samples; ++s) {
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t i : order) {
      other_work(pause);
      const double others_before = cpu_ns(others[i]);
      const auto first = Clock::now();
      if (pause.count() == 0) peers[i].run();
      const auto start = Clock::now();
      peers[i].run();
      const auto end = Clock::now();
      wall[i].push_back(nanoseconds(end - start));
      if (cpu_ns(others[i]) - others_before < 0.1 * nanoseconds(end - first)) {
        alone[i].push_back(wall[i].back());
      }
    }
  }
  other_work(pause);
  std::vector<Figure> figures(count);
  const double runs = pause.count() == 0 ? 2.0 * samples : samples;
  for (std::size_t i = 0; i < count; ++i) {
    figures[i] = {median(wall[i]), (cpu_ns(*peers[i].threads) - cpu_before[i]) / runs,
                  median(alone[i]), int(alone[i].size())};
  }
  return figures;
}

// One body per node: a fork/join branch (nodes 2 and up) computes, everything else is empty.
using Body = std::function<void(std::size_t)>;

Body body_of(bool busy_branches) {
  if (!busy_branches) return [](std::size_t) {};
  return [](std::size_t i) {
    if (i >= 2) busy_work();
  };
}

runtime::Graph uops_graph(std::size_t n, const Edges& edges, const Body& body,
                          std::size_t streams) {
  runtime::GraphBuilder b;
  std::vector<runtime::NodeRef> nodes;
  nodes.reserve(n);
  for (std::size_t i = 0; i < n; ++i) nodes.push_back(b.add("k", [&body, i] { body(i); }, {}, {}));
  for (auto [from, to] : edges) nodes[from].then(nodes[to]);
  return std::move(b).build(runtime::BuildOptions{.max_streams = streams});
}

std::vector<std::size_t> topological(std::size_t n, const Edges& edges) {
  std::vector<std::vector<std::size_t>> successors(n);
  std::vector<std::size_t> pending(n, 0), order;
  for (auto [from, to] : edges) {
    successors[from].push_back(to);
    ++pending[to];
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (pending[v] == 0) order.push_back(v);
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (std::size_t s : successors[order[i]]) {
      if (--pending[s] == 0) order.push_back(s);
    }
  }
  return order;
}

#ifdef UOPS_BENCH_TBB
namespace flow = tbb::flow;
#endif

#ifdef UOPS_BENCH_OPENMP
// One task per node in topological order, ordered by depend clauses on one byte per node.
struct OmpGraph {
  std::vector<std::vector<std::size_t>> predecessors;
  std::vector<std::size_t> order;
  std::vector<char> tokens;
  const Body& body;

  OmpGraph(std::size_t n, const Edges& edges, const Body& body)
      : predecessors(n), order(topological(n, edges)), tokens(n), body(body) {
    for (auto [from, to] : edges) predecessors[to].push_back(from);
  }

  void run() {
    // Only the depend clauses read it, which GCC does not count as a use.
    [[maybe_unused]] char* token = tokens.data();
#pragma omp parallel num_threads(2)
#pragma omp single
    for (std::size_t v : order) {
      const std::size_t* p = predecessors[v].data();
      const int count = int(predecessors[v].size());
#pragma omp task depend(iterator(j = 0            \
                                 : count),        \
                        in                        \
                        : token[p[j]]) depend(out \
                                              : token[v]) firstprivate(v)
      body(v);
    }
  }
};
#endif

struct Case {
  std::string name;
  std::size_t n;
  Edges edges;
  bool busy_branches = false;
};

struct Row {
  std::string name;
  std::size_t n;
  bool busy_branches;
  std::vector<std::string> peers;
  std::vector<Figure> figures;
  std::string plan;  // uops' schedule after its measured re-plan
};

// oneTBB and OpenMP keep one pool of threads for the whole process: whatever threads first
// appear while one of them runs are its pool.
ThreadIds& pool(const char* runtime) {
  static std::map<std::string, ThreadIds> pools;
  return pools[runtime];
}

template <typename Start>
void add_threads(ThreadIds& threads, Start start) {
  const ThreadIds before = thread_ids();
  start();
  const ThreadIds now = started(before, thread_ids());
  threads.insert(threads.end(), now.begin(), now.end());
  std::sort(threads.begin(), threads.end());
}

Row measure(const Case& c, std::chrono::microseconds pause, int samples, bool peers_too) {
  const Body body = body_of(c.busy_branches);
  std::unique_ptr<runtime::CpuExecutor> uops, one_stream;
  ThreadIds uops_threads, no_threads;
  // Its first run is measured and re-plans; a plan on several streams is then tried against
  // one stream, three runs each in turns. The workers it starts count.
  add_threads(uops_threads, [&] {
    uops = std::make_unique<runtime::CpuExecutor>(uops_graph(c.n, c.edges, body, 2));
    for (int run = 0; run < 7; ++run) {
      other_work(pause);
      uops->run();
    }
  });
  one_stream = std::make_unique<runtime::CpuExecutor>(uops_graph(c.n, c.edges, body, 1));
  std::vector<Peer> peers = {{"uops", [&] { uops->run(); }, &uops_threads},
                             {"uops 1 stream", [&] { one_stream->run(); }, &no_threads}};
#ifdef UOPS_BENCH_TBB
  static tbb::global_control two_threads(tbb::global_control::max_allowed_parallelism, 2);
  std::unique_ptr<TbbGraph<flow::queueing>> tbb;
  std::unique_ptr<TbbGraph<flow::lightweight>> tbb_light;
  if (peers_too) {
    tbb = std::make_unique<TbbGraph<flow::queueing>>(c.n, c.edges, body);
    tbb_light = std::make_unique<TbbGraph<flow::lightweight>>(c.n, c.edges, body);
    add_threads(pool("tbb"), [&] { tbb->run(); });
    peers.push_back({"oneTBB", [&] { tbb->run(); }, &pool("tbb")});
    peers.push_back({"oneTBB lightweight", [&] { tbb_light->run(); }, &pool("tbb")});
  }
#endif
#ifdef UOPS_BENCH_OPENMP
  std::unique_ptr<OmpGraph> omp;
  if (peers_too) {
    omp = std::make_unique<OmpGraph>(c.n, c.edges, body);
    add_threads(pool("openmp"), [&] { omp->run(); });
    peers.push_back({"OpenMP tasks", [&] { omp->run(); }, &pool("openmp")});
  }
#endif
  Row row{c.name, c.n, c.busy_branches, {}, interleave(peers, pause, samples), {}};
  for (const Peer& peer : peers) row.peers.push_back(peer.name);
  const runtime::Schedule& plan = uops->graph().schedule();
  char costs[96];
  std::snprintf(costs, sizeof costs, "; weighed a signal at %.0f ns, a wake-up at %.1f us",
                plan.handoff_ns, plan.wakeup_ns / 1e3);
  row.plan = std::to_string(plan.streams.size()) + " stream(s), " +
             std::to_string(plan.signals.size()) + " signals" + costs;
  return row;
}

// One table; `alone` picks the runs during which no other peer's threads took a core.
void print_table(const std::vector<Row>& rows, bool alone) {
  std::string header;
  for (const Row& row : rows) {
    std::string columns = "| graph |";
    for (const std::string& peer : row.peers) columns += " " + peer + " |";
    columns += alone ? "" : " uops plan |";
    if (columns != header) {
      header = columns;
      std::printf("\n%s\n|---|", columns.c_str());
      for (std::size_t i = 0; i < row.peers.size() + (alone ? 0 : 1); ++i) std::printf("---|");
      std::printf("\n");
    }
    std::printf("| %s |", row.name.c_str());
    auto wall = [&](const Figure& f) { return alone ? f.alone_wall_ns : f.wall_ns; };
    // One stream uses one core, so a neighbour's spinning slows it little: where none of its
    // runs went unshared, its median over all runs is the reference.
    const double serial =
        row.figures[1].alone_runs != 0 ? wall(row.figures[1]) : row.figures[1].wall_ns;
    for (const Figure& f : row.figures) {
      if (alone && f.alone_runs == 0) {
        std::printf(" none");
      } else if (row.busy_branches) {
        std::printf(" %.0f us, %.2fx", wall(f) / 1e3, serial / wall(f));
      } else {
        std::printf(" %.1f ns", wall(f) / double(row.n));
      }
      if (alone) {
        std::printf(" (%d runs) |", f.alone_runs);
      } else {
        std::printf(" [%.*f] |", row.busy_branches ? 0 : 1, f.cpu_ns / 1e3);
      }
    }
    std::printf(alone ? "\n" : " %s |\n", row.plan.c_str());
    std::fflush(stdout);
  }
}

void print(const std::vector<Row>& rows, std::chrono::microseconds pause, int samples) {
  std::printf(
      "\n### %s, %d samples (median wall time; in brackets: CPU us per run of the threads the "
      "peer started, spinning included, the caller's left out; the two oneTBB peers share one "
      "pool)\n",
      pause.count() ? ("after " + std::to_string(pause.count()) + " us of other work").c_str()
                    : "back to back",
      samples);
  print_table(rows, false);
  std::printf(
      "\nThe same, over only the runs during which the other peers' threads took under a tenth "
      "of a core (OpenMP's spin after its runs takes the second core; how many runs in "
      "parentheses):\n");
  print_table(rows, true);
}

}  // namespace

int between_runs_main(int argc, char** argv) {
  restart_with_passive_omp(argv);
  std::vector<long> pauses = {2000, 0};
  int samples = 11;
  bool small = true, large = true;
  std::string only;  // run just the graphs whose name contains it
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--pause-us=")) {
      pauses.clear();
      for (char* p = argv[i] + 11;; ++p) {
        pauses.push_back(std::max(0L, std::strtol(p, &p, 10)));
        if (*p != ',') break;
      }
    } else if (arg.starts_with("--samples=")) {
      samples = std::max(1, std::atoi(argv[i] + 10));
    } else if (arg.starts_with("--only=")) {
      only = arg.substr(7);
      large = false;
    } else if (arg == "--no-large") {
      large = false;
    } else if (arg == "--no-small") {
      small = false;
    } else if (arg != "--between-runs") {
      std::fprintf(stderr,
                   "usage: bench_runtime --between-runs [--pause-us=2000,0] [--samples=11] "
                   "[--no-small] [--no-large] [--only=NAME]\n");
      return 2;
    }
  }
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  std::printf("OMP_WAIT_POLICY=%s\n", policy ? policy : "(unset)");
  const runtime::Graph random = random_dag(10'000, 2);
  const std::vector<Case> cases = {
      {"ladder, 1,000 nodes", 1000, ladder(1000)},
      {"mesh 4x250", 1000, mesh(4, 250)},
      {"chain, 1,000 nodes", 1000, chain(1000)},
      {"wide, 1,000 independent nodes", 1000, {}},
      {"random DAG, 10,000 nodes", 10'000, edges_of(random)},
      {"fork/join, 2 x 0.5 ms", 4, fork_join(2), true},
      {"fork/join, 4 x 0.5 ms", 6, fork_join(4), true},
  };
  for (long pause_us : small ? pauses : std::vector<long>{}) {
    const std::chrono::microseconds pause(pause_us);
    std::vector<Row> rows;
    for (const Case& c : cases) {
      if (c.name.find(only) != std::string::npos) rows.push_back(measure(c, pause, samples, true));
    }
    print(rows, pause, samples);
  }
  if (large) {
    // uops only: the peers' per-run task creation at this size measures their allocators.
    const auto start = Clock::now();
    const runtime::Graph big = random_dag(1'000'000, 2);
    const double build_s = nanoseconds(Clock::now() - start) / 1e9;
    const Case c{"random DAG, 10^6 nodes", big.size(), edges_of(big)};
    std::printf("\nrandom DAG, 10^6 nodes: built in %.2f s, %zu edges\n", build_s,
                big.edge_count());
    print({measure(c, std::chrono::microseconds(pauses.front()), 3, false)},
          std::chrono::microseconds(pauses.front()), 3);
  }
  return 0;
}

}  // namespace uops::bench
