// Dependency inference, transitive reduction and misuse of the builder.
#include "uops/runtime/builder.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <type_traits>
#include <vector>

#include "runtime/dependencies.h"
#include "uops/runtime/cpu_executor.h"
#include "uops/runtime/error.h"

namespace uops::runtime {
namespace {

static_assert(std::is_base_of_v<std::runtime_error, Error>);

void noop() {}

bool has_edge(const Graph& graph, NodeRef from, NodeRef to) {
  auto successors = graph.successors(from.index());
  return std::find(successors.begin(), successors.end(), to.index()) != successors.end();
}

TEST(Dependencies, ReadAfterWrite) {
  GraphBuilder b;
  NodeRef w = b.add("w", noop, {}, {1});
  NodeRef r = b.add("r", noop, {1}, {});
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, w, r));
  EXPECT_EQ(g.edge_count(), 1u);
}

TEST(Dependencies, WriteAfterRead) {
  GraphBuilder b;
  NodeRef r = b.add("r", noop, {1}, {});
  NodeRef w = b.add("w", noop, {}, {1});
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, r, w));
  EXPECT_EQ(g.edge_count(), 1u);
}

TEST(Dependencies, WriteAfterWrite) {
  GraphBuilder b;
  NodeRef w1 = b.add("w1", noop, {}, {1});
  NodeRef w2 = b.add("w2", noop, {}, {1});
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, w1, w2));
  EXPECT_EQ(g.edge_count(), 1u);
}

TEST(Dependencies, ReadReadHasNoEdge) {
  GraphBuilder b;
  b.add("w", noop, {}, {2});
  b.add("r1", noop, {1, 2}, {3});
  b.add("r2", noop, {1, 2}, {4});
  Graph g = std::move(b).build(BuildOptions{.max_streams = 2});
  // Only w -> r1 and w -> r2 through buffer 2; buffer 1 is read twice and orders nothing.
  EXPECT_EQ(g.edge_count(), 2u);
  EXPECT_TRUE(g.successors(1).empty());
  EXPECT_NE(g.schedule().stream_of[1], g.schedule().stream_of[2]);
}

TEST(Dependencies, EveryReaderPrecedesTheNextWriter) {
  GraphBuilder b;
  NodeRef w0 = b.add("w0", noop, {}, {1});
  NodeRef r1 = b.add("r1", noop, {1}, {});
  NodeRef r2 = b.add("r2", noop, {1}, {});
  NodeRef w3 = b.add("w3", noop, {}, {1});
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, w0, r1));
  EXPECT_TRUE(has_edge(g, w0, r2));
  EXPECT_TRUE(has_edge(g, r1, w3));
  EXPECT_TRUE(has_edge(g, r2, w3));
  EXPECT_FALSE(has_edge(g, w0, w3));  // implied through either reader
  EXPECT_EQ(g.edge_count(), 4u);
}

TEST(Dependencies, InPlaceUpdateChains) {
  GraphBuilder b;
  NodeRef init = b.add("init", noop, {}, {1});
  NodeRef update = b.add("update", noop, {1}, {1});
  NodeRef use = b.add("use", noop, {1}, {});
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, init, update));
  EXPECT_TRUE(has_edge(g, update, use));
  EXPECT_EQ(g.edge_count(), 2u);
}

// Inference against the rule written out with a map per buffer: few buffers rewritten often
// (the tracker reuses the records of readers a write covered), and many (its table grows).
TEST(Dependencies, InferenceOfRandomProgramsMatchesTheRule) {
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(seed);
    const std::size_t n = 50 + rng() % 400, buffers = seed % 2 ? 3 + rng() % 5 : 200 + rng() % 800;
    std::vector<Node> nodes;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<BufferId> reads, writes;
      for (int k = rng() % 4; k > 0; --k) reads.push_back(rng() % buffers);
      for (int k = rng() % 3; k > 0; --k) writes.push_back(rng() % buffers);
      nodes.push_back(Node{"k", noop, {}, std::move(reads), std::move(writes)});
    }
    struct State {
      std::optional<NodeIndex> writer;
      std::vector<NodeIndex> readers;
    };
    std::map<BufferId, State> state;
    Adjacency expected(n);
    for (NodeIndex v = 0; v < n; ++v) {
      std::vector<NodeIndex> preds;
      for (BufferId b : nodes[v].reads) {
        if (state[b].writer) preds.push_back(*state[b].writer);
      }
      for (BufferId b : nodes[v].writes) {
        if (state[b].writer) preds.push_back(*state[b].writer);
        preds.insert(preds.end(), state[b].readers.begin(), state[b].readers.end());
        state[b] = State{v, {}};
      }
      for (BufferId b : nodes[v].reads) {
        const auto& w = nodes[v].writes;
        if (std::find(w.begin(), w.end(), b) == w.end()) state[b].readers.push_back(v);
      }
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (NodeIndex p : preds) {
        if (p != v) expected[p].push_back(v);
      }
    }
    EXPECT_EQ(infer_dependencies(nodes), expected) << "seed " << seed;
  }
}

TEST(Dependencies, TransitiveReductionDropsImpliedEdges) {
  GraphBuilder b;
  NodeRef a = b.add("a", noop, {}, {1});
  NodeRef c = b.add("b", noop, {1}, {2});
  NodeRef d = b.add("c", noop, {1, 2}, {});
  a.then(d);  // explicit duplicate of an implied edge
  a.then(c);  // explicit duplicate of an inferred edge
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, a, c));
  EXPECT_TRUE(has_edge(g, c, d));
  EXPECT_FALSE(has_edge(g, a, d));
  EXPECT_EQ(g.edge_count(), 2u);
  ASSERT_EQ(g.predecessors(d.index()).size(), 1u);
  EXPECT_EQ(g.predecessors(d.index())[0], c.index());
}

// Random DAGs with enough joins that the reduction needs several blocks of reachability bits,
// against the definition: u -> v stays exactly when no other successor of u reaches v.
TEST(Dependencies, TransitiveReductionOfRandomDagsMatchesTheDefinition) {
  std::mt19937 rng(3);
  for (std::size_t n : {50u, 700u, 2600u}) {
    GraphBuilder b;
    std::vector<NodeRef> nodes;
    std::vector<std::vector<NodeIndex>> successors(n);
    for (std::size_t v = 0; v < n; ++v) nodes.push_back(b.add("k", noop, {}, {}));
    for (std::size_t v = 0; v + 1 < n; ++v) {
      for (int e = 0; e < 3; ++e) {
        // Mostly short edges (the passes end early), now and then one across the graph.
        const std::size_t span = rng() % 30 == 0 ? n : 40;
        const std::size_t w = v + 1 + rng() % std::min<std::size_t>(n - v - 1, span);
        nodes[v].then(nodes[w]);
        successors[v].push_back(static_cast<NodeIndex>(w));
      }
    }
    Graph g = std::move(b).build();
    // reach[v]: nodes reachable from v by one or more edges, as dense bitsets.
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
    for (std::size_t v = n; v-- > 0;) {
      for (NodeIndex w : successors[v]) {
        reach[v][w] = true;
        for (std::size_t x = w + 1; x < n; ++x) {
          if (reach[w][x]) reach[v][x] = true;
        }
      }
    }
    std::size_t kept = 0;
    for (std::size_t v = 0; v < n; ++v) {
      std::vector<NodeIndex> expected;
      for (NodeIndex w : successors[v]) {
        bool implied = false;
        for (NodeIndex other : successors[v]) implied = implied || reach[other][w];
        if (!implied) expected.push_back(w);
      }
      std::sort(expected.begin(), expected.end());
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      auto actual = g.successors(static_cast<NodeIndex>(v));
      ASSERT_EQ(std::vector<NodeIndex>(actual.begin(), actual.end()), expected) << "node " << v;
      kept += expected.size();
    }
    EXPECT_LT(kept, 3 * (n - 1));  // the graphs do have redundant edges
  }
}

// The same where node indices do not follow the topological order (edges point backwards as
// often as forwards): the reduction then works on places in the order, translated there and
// back, and must still keep u -> v exactly when no other successor of u reaches v.
TEST(Dependencies, TransitiveReductionInAShuffledOrderMatchesTheDefinition) {
  std::mt19937 rng(5);
  for (std::size_t n : {50u, 700u, 2600u}) {
    // A random DAG over ranks 0 .. n - 1 (edges from lower to higher rank), whose ranks are
    // given to the nodes in a random order.
    std::vector<NodeIndex> node_of(n);
    for (std::size_t r = 0; r < n; ++r) node_of[r] = static_cast<NodeIndex>(r);
    std::shuffle(node_of.begin(), node_of.end(), rng);
    std::vector<std::vector<std::size_t>> by_rank(n);
    Adjacency successors(n);
    for (std::size_t r = 0; r + 1 < n; ++r) {
      for (int e = 0; e < 3; ++e) {
        const std::size_t span = rng() % 30 == 0 ? n : 40;
        const std::size_t to = r + 1 + rng() % std::min<std::size_t>(n - r - 1, span);
        by_rank[r].push_back(to);
        successors[node_of[r]].push_back(node_of[to]);
      }
    }
    std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));  // by rank
    for (std::size_t r = n; r-- > 0;) {
      for (std::size_t to : by_rank[r]) {
        reach[r][to] = true;
        for (std::size_t x = to + 1; x < n; ++x) {
          if (reach[to][x]) reach[r][x] = true;
        }
      }
    }
    const TopologicalOrder topo = topological_order(successors);
    ASSERT_FALSE(topo.on_cycle);
    const Adjacency reduced = transitive_reduction(successors, topo.order);
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<NodeIndex> expected;
      for (std::size_t to : by_rank[r]) {
        bool implied = false;
        for (std::size_t other : by_rank[r]) implied = implied || reach[other][to];
        if (!implied) expected.push_back(node_of[to]);
      }
      std::sort(expected.begin(), expected.end());
      expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
      ASSERT_EQ(reduced[node_of[r]], expected) << "n " << n << ", node " << node_of[r];
    }
  }
}

// An implied edge is dropped when its ends lie within kReductionWindow places of the order;
// one that spans further stays (the schedule ignores it, see Schedule.ImpliedEdgesChangeNothing).
TEST(Dependencies, ImpliedEdgesBeyondTheWindowStay) {
  const std::size_t n = kReductionWindow + 100;
  GraphBuilder b;
  std::vector<NodeRef> chain;
  for (std::size_t v = 0; v < n; ++v) chain.push_back(b.add("k", noop, {}, {}));
  for (std::size_t v = 0; v + 1 < n; ++v) chain[v].then(chain[v + 1]);
  chain[0].then(chain[10]);
  chain[0].then(chain[n - 1]);
  Graph g = std::move(b).build();
  EXPECT_FALSE(has_edge(g, chain[0], chain[10]));
  EXPECT_TRUE(has_edge(g, chain[0], chain[n - 1]));
  EXPECT_EQ(g.edge_count(), n);
  EXPECT_EQ(g.schedule().streams.size(), 1u);
  EXPECT_TRUE(g.schedule().signals.empty());
}

// The reduction's work (nodes visited, successor lists walked, over all its passes) is linear
// on graphs whose edges and paths span the whole graph; it was quadratic there (a 10^6-node
// random graph took minutes to build). Counted, not timed, so a return to quadratic work fails
// here whatever the machine's speed.
TEST(Dependencies, ReductionWorkIsLinearOnNonLocalGraphs) {
  constexpr std::size_t n = 60'000;
  std::mt19937 rng(9);
  auto nodes_with = [&](auto accesses) {
    std::vector<Node> nodes;
    for (std::size_t i = 0; i < n; ++i) {
      auto [reads, writes] = accesses(i);
      nodes.push_back(Node{"k", noop, {}, std::move(reads), std::move(writes)});
    }
    return infer_dependencies(nodes);
  };
  using Access = std::pair<std::vector<BufferId>, std::vector<BufferId>>;
  std::vector<std::pair<const char*, Adjacency>> shapes;
  // A chain that all also read what the first node wrote.
  shapes.emplace_back("one early reader", nodes_with([](std::size_t i) {
                        return i == 0 ? Access{{}, {0}} : Access{{0, i}, {i + 1}};
                      }));
  // Two reads and a write each of n / 10 buffers, chosen at random.
  shapes.emplace_back("random accesses", nodes_with([&](std::size_t) {
                        std::uniform_int_distribution<BufferId> buffer(1, n / 10);
                        return Access{{buffer(rng), buffer(rng)}, {buffer(rng)}};
                      }));
  // Each node after two chosen at random among all earlier ones.
  Adjacency random_edges(n);
  for (std::size_t v = 1; v < n; ++v) {
    for (int e = 0; e < 2; ++e) random_edges[rng() % v].push_back(static_cast<NodeIndex>(v));
  }
  shapes.emplace_back("random edges", std::move(random_edges));
  const std::size_t passes = kReductionWindow / (kBlockWords * 64) + 3;
  for (auto& [shape, successors] : shapes) {
    std::size_t edges = 0;
    for (const auto& list : successors) edges += list.size();
    const TopologicalOrder topo = topological_order(successors);
    ASSERT_FALSE(topo.on_cycle);
    ReductionWork work;
    const Adjacency reduced = transitive_reduction(successors, topo.order, &work);
    EXPECT_LE(work.nodes, passes * n) << shape;
    EXPECT_LE(work.edges, passes * edges) << shape;
    std::size_t kept = 0;
    for (const auto& list : reduced) kept += list.size();
    EXPECT_LT(kept, edges) << shape << ": the reduction dropped nothing";
  }
}

// Sanitizers make every allocation and access several times dearer: the scale tests below take
// 20 s each under TSan on 2 cores at full size, so there they run at a fifth of it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::size_t kScaleDivisor = 5;
#else
constexpr std::size_t kScaleDivisor = 1;
#endif

// The reduction used to allocate an n x n bitset whatever the edges: 10^6 nodes needed 125 GB.
TEST(Dependencies, MillionIndependentNodesBuild) {
  constexpr std::size_t n = 1'000'000 / kScaleDivisor;
  GraphBuilder b;
  for (std::size_t v = 0; v < n; ++v) b.add("k", noop, {}, {});
  Graph g = std::move(b).build(BuildOptions{.max_streams = 2});
  EXPECT_EQ(g.size(), n);
  EXPECT_EQ(g.edge_count(), 0u);
  EXPECT_EQ(g.schedule().streams.size(), 2u);
  EXPECT_TRUE(g.schedule().signals.empty());
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 1'000'000) << "peak resident KB";  // about 350 MB when linear
#endif
}

// A join-heavy random program of 10^5 nodes (two reads and a write of 40 buffers each).
TEST(Dependencies, HundredThousandNodeRandomProgramBuilds) {
  constexpr std::size_t n = 100'000 / kScaleDivisor;
  std::mt19937 rng(5);
  std::uniform_int_distribution<BufferId> buffer(1, 40);
  GraphBuilder b;
  for (std::size_t v = 0; v < n; ++v) b.add("k", noop, {buffer(rng), buffer(rng)}, {buffer(rng)});
  Graph g = std::move(b).build();
  EXPECT_EQ(g.size(), n);
  EXPECT_GT(g.edge_count(), n / 2);
}

// 10^6 nodes in 1,000 layers of 1,000 (a stencil: each node reads two neighbouring cells the
// layer before wrote and writes its own), built and run on two streams: every join reachable
// within a layer, so the reduction's passes stay local. The run computes what a loop computes.
TEST(Dependencies, MillionNodeStencilBuildsAndRuns) {
  // Under the sanitizers 50 layers: the run's hand-offs cost 20 s at a fifth of the size.
  constexpr std::size_t width = 1'000, layers = kScaleDivisor == 1 ? 1'000 : 50;
  std::vector<long> cells(2 * width), expected(2 * width);
  for (std::size_t j = 0; j < width; ++j) cells[j] = expected[j] = long(j);
  auto step = [](std::vector<long>& c, std::size_t l, std::size_t j) {
    const std::size_t in = (l % 2) * width, out = width - in;
    c[out + j] = (c[in + j] + 2 * c[in + (j + 1) % width] + long(l)) % 1'000'003;
  };
  GraphBuilder b;
  for (std::size_t l = 0; l < layers; ++l) {
    for (std::size_t j = 0; j < width; ++j) {
      const std::size_t in = (l % 2) * width, out = width - in;
      b.add("cell", [&cells, &step, l, j] { step(cells, l, j); },
            {buffer_id(&cells[in + j]), buffer_id(&cells[in + (j + 1) % width])},
            {buffer_id(&cells[out + j])});
      step(expected, l, j);
    }
  }
  Graph g = std::move(b).build(BuildOptions{.max_streams = 2});
  EXPECT_EQ(g.size(), width * layers);
  EXPECT_EQ(g.schedule().streams.size(), 2u);
  CpuExecutor(std::move(g)).run();
  EXPECT_EQ(cells, expected);
}

TEST(Dependencies, ExplicitEdgesAndWhenAll) {
  GraphBuilder b;
  NodeRef a = b.add("a", noop, {}, {});
  NodeRef x = b.add("x", noop, {}, {});
  NodeRef y = b.add("y", noop, {}, {});
  NodeRef z = b.add("z", noop, {}, {});
  a.then(x);
  when_all({a, x, y}).then(z);
  Graph g = std::move(b).build();
  EXPECT_TRUE(has_edge(g, a, x));
  EXPECT_TRUE(has_edge(g, x, z));
  EXPECT_TRUE(has_edge(g, y, z));
  EXPECT_FALSE(has_edge(g, a, z));
  EXPECT_EQ(g.edge_count(), 3u);
}

TEST(Builder, UseAfterBuildThrows) {
  GraphBuilder b;
  NodeRef a = b.add("a", noop, {}, {});
  NodeRef c = b.add("c", noop, {}, {});
  Graph g = std::move(b).build();
  EXPECT_EQ(g.size(), 2u);
  EXPECT_THROW(b.add("late", noop, {}, {}), Error);
  EXPECT_THROW(std::move(b).build(), Error);
  EXPECT_THROW(a.then(c), Error);
}

TEST(Builder, MovedFromBuilderThrows) {
  GraphBuilder b;
  b.add("a", noop, {}, {});
  GraphBuilder other = std::move(b);
  EXPECT_THROW(b.add("b", noop, {}, {}), Error);
  EXPECT_EQ(std::move(other).build().size(), 1u);
}

TEST(Builder, CycleThroughExplicitEdgesNamesANodeOnIt) {
  GraphBuilder b;
  NodeRef before = b.add("before", noop, {}, {});
  NodeRef p = b.add("p", noop, {}, {});
  NodeRef q = b.add("q", noop, {}, {});
  NodeRef r = b.add("r", noop, {}, {});
  before.then(p).then(q).then(r).then(p);
  try {
    std::move(b).build();
    FAIL() << "cycle not detected";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cycle"), std::string::npos) << message;
    const bool names_member = message.find("'p'") != std::string::npos ||
                              message.find("'q'") != std::string::npos ||
                              message.find("'r'") != std::string::npos;
    EXPECT_TRUE(names_member) << message;
  }
}

TEST(Builder, ExplicitEdgeAgainstInferredOrderIsACycle) {
  GraphBuilder b;
  NodeRef w = b.add("w", noop, {}, {1});
  NodeRef r = b.add("r", noop, {1}, {});
  r.then(w);
  EXPECT_THROW(std::move(b).build(), Error);
}

TEST(Builder, SelfEdgeIsACycle) {
  GraphBuilder b;
  NodeRef a = b.add("a", noop, {}, {});
  a.then(a);
  EXPECT_THROW(std::move(b).build(), Error);
}

TEST(Builder, EdgesBetweenBuildersThrow) {
  GraphBuilder b1, b2;
  NodeRef a = b1.add("a", noop, {}, {});
  NodeRef c = b2.add("c", noop, {}, {});
  EXPECT_THROW(a.then(c), Error);
}

TEST(Builder, NodeWithoutKernelThrows) {
  GraphBuilder b;
  Node node;
  node.name = "empty";
  EXPECT_THROW(b.add(std::move(node)), Error);
}

}  // namespace
}  // namespace uops::runtime
