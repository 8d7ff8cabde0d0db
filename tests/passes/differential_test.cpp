// The judge of the passes (docs/design.md §3.5): on random programs, the optimized program must
// give what the unoptimized one gives. Fusion, substitution, bounds and simplify keep every
// operation and its order, so results match exactly (NaN matching NaN); only fusion that
// permutes loops between pivots could reassociate a sum, which the tolerance allows.
//
// UOPS_FUZZ_TRIALS sets the number of programs (default 2000); the "long" test runs 20000.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>

#include "support/random_graph.h"
#include "uops/ir/printer.h"
#include "uops/ir/verifier.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/packed_variant.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/reduction_tiling.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

int trials(int fallback) {
  const char* env = std::getenv("UOPS_FUZZ_TRIALS");
  return env ? std::atoi(env) : fallback;
}

RandomGraphOptions options_for(uint64_t seed) {
  RandomGraphOptions o;
  o.dtype = seed % 2 ? DType::f64 : DType::f32;
  o.smooth = seed % 5 == 0;
  o.max_nodes = 6 + int(seed % 11);
  o.empty_raising = true;
  o.contractions = seed % 4 == 1;
  return o;
}

// Empty when `got` matches `want`; otherwise what differs first.
std::string compare(const TensorMap& want, const TensorMap& got) {
  if (want.size() != got.size()) return "different outputs";
  for (auto& [name, w] : want) {
    const Tensor& g = got.at(name);
    if (g.shape != w.shape || g.dtype != w.dtype) return name + ": shape or dtype differs";
    double tol = w.dtype == DType::f64 ? 1e-12 : 1e-5;
    for (int64_t i = 0; i < w.numel(); ++i) {
      double a = w.get(i), b = g.get(i);
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      if (std::isfinite(a) && std::abs(a - b) <= tol * std::max(1.0, std::abs(a))) continue;
      return name + "[" + std::to_string(i) + "]: " + format_double(a) + " vs " + format_double(b);
    }
  }
  return "";
}

void run_seeds(uint64_t first, int count) {
  int failures = 0;
  for (uint64_t seed = first; seed < first + uint64_t(count) && failures < 5; ++seed) {
    RandomCase c = random_case(seed, options_for(seed));
    Program p = lower(c.graph);
    PipelineOptions po;
    po.verify = true;
    Program q;
    try {
      q = optimize(p, po);
    } catch (const InternalError& e) {
      ADD_FAILURE() << "seed " << seed << ": " << e.what();
      ++failures;
      continue;
    }
    TensorMap want = interpret(p, c.inputs, c.params);
    TensorMap got;
    try {
      got = interpret(q, c.inputs, c.params);
    } catch (const InternalError& e) {
      ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n" << print(p) << "\n" << print(q);
      ++failures;
      continue;
    }
    std::string diff = compare(want, got);
    if (!diff.empty()) {
      ADD_FAILURE() << "seed " << seed << ": " << diff << "\nbefore:\n"
                    << print(p) << "after:\n"
                    << print(q);
      ++failures;
    }
  }
}

TEST(Differential, OptimizedMatchesUnoptimized) {
  run_seeds(0, trials(2000));
}

// How many of `n` random optimized programs `tile` changes (from `base` of each), checking that
// the changed ones verify and give the same bytes as before.
int check_exact(int n, const std::function<Program(const Program&, uint64_t)>& base,
                const std::function<Program(const Program&)>& tile) {
  int tiled = 0;
  for (uint64_t seed = 0; seed < uint64_t(n); ++seed) {
    RandomCase c = random_case(seed, options_for(seed));
    Program q = optimize(lower(c.graph)), b = base(q, seed), t = tile(b);
    verify_or_throw(t, "tiling");
    if (print(t) == print(b)) continue;
    ++tiled;
    TensorMap want = interpret(q, c.inputs, c.params), got = interpret(t, c.inputs, c.params);
    for (auto& [name, w] : want)
      EXPECT_EQ(w.bytes, got.at(name).bytes) << "seed " << seed << "\n" << print(q) << print(t);
  }
  return tiled;
}

// Reduction tiling (which the C backend applies) keeps every element's order of contributions:
// bit for bit. Tiles of 2 so that random sizes span several.
TEST(Differential, TiledReductionsMatchExactly) {
  int n = trials(2000);
  int tiled = check_exact(
      n, [](const Program& q, uint64_t) { return q; },
      [](const Program& q) { return tile_reductions(q, 2); });
  EXPECT_GE(tiled, n / 200) << "too few random programs have a reduction to tile";
}

// Register tiling (which the C backend applies after reduction tiling) keeps every element's
// order of contributions: bit for bit. Tiles of 2 x 3 so that random sizes span several and
// leave rows and columns over.
TEST(Differential, RegisterTilesMatchExactly) {
  int n = trials(2000);
  int tiled = check_exact(
      n, [](const Program& q, uint64_t seed) { return seed % 2 ? tile_reductions(q, 2) : q; },
      [](const Program& q) { return tile_registers(q, 6, 2, 3, 4); });
  EXPECT_GE(tiled, n / 400) << "too few random programs have a contraction to tile";
}

// Dot tiling (which the C backend applies first) gives each carried scalar the same
// contributions in the same order: bit for bit. Tiles of 2 x 3 in blocks of 2 column tiles, so
// that random sizes span several tiles and blocks and leave rows, columns and tiles over.
TEST(Differential, DotTilesMatchExactly) {
  int n = trials(2000);
  int tiled = check_exact(
      n, [](const Program& q, uint64_t) { return q; },
      [](const Program& q) { return tile_dots(q, 2, 3, 2); });
  EXPECT_GE(tiled, n / 400) << "too few random programs keep a dot product to tile";
}

// Copy tiling (which the C backend applies last) gives each element the same value, once: bit
// for bit. Tiles of 2 so that random sizes span several and leave some over.
TEST(Differential, CopyTilesMatchExactly) {
  int n = trials(2000);
  int tiled = check_exact(
      n, [](const Program& q, uint64_t) { return q; },
      [](const Program& q) { return tile_copies(q, 2); });
  EXPECT_GE(tiled, n / 400) << "too few random programs have a transposing copy to tile";
}

// The packed variant (which the C backend compiles beside the program and runs where its copies
// pay) reads copies of the same elements and keeps every contribution's order: bit for bit.
TEST(Differential, PackedVariantsMatchExactly) {
  int n = trials(2000);
  int packed = check_exact(
      n, [](const Program& q, uint64_t) { return q; },
      [](const Program& q) {
        auto v = packed_variant(q);
        return v ? v->program : q;
      });
  EXPECT_GE(packed, n / 400) << "too few random programs have an operand one loop re-reads";
}

}  // namespace
}  // namespace uops
