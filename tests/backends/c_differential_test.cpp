// The random-program differential fuzzer for the C backend: on random programs, lowered and
// optimized, some with loops cut short (blocks writing part of a tensor) and some raising an error
// at one element, the compiled kernel gives what the interpreter gives, bit for bit (without
// reassociation the generated code keeps every operation and its order), or the same error.
// UOPS_FUZZ_TRIALS sets the number of programs (default 600).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>

#include "support/compare.h"
#include "support/random_graph.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/packed_variant.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/reduction_tiling.h"
#include "uops/passes/scatter_tiling.h"

namespace uops {

using namespace ir;

namespace {

int trials() {
  const char* env = std::getenv("UOPS_FUZZ_TRIALS");
  return env ? std::atoi(env) : 600;
}

TEST(CDifferential, RandomProgramsMatchInterpreter) {
  const int n = trials();
  constexpr int kBatch = 200;
  for (int first = 0; first < n; first += kBatch) {
    std::vector<RandomCase> cases;
    std::vector<Program> programs;
    for (int seed = first; seed < std::min(n, first + kBatch); ++seed) {
      RandomGraphOptions o;
      o.dtype = seed % 2 ? DType::f64 : DType::f32;
      o.max_nodes = 4 + seed % 12;
      o.empty_raising = true;
      o.contractions = seed % 4 == 1;
      o.raising_element = true;
      cases.push_back(random_case(uint64_t(seed), o));
      Program p = lower(cases.back().graph);
      if (seed % 4 == 3) p = with_partial_loops(std::move(p), uint64_t(seed));
      programs.push_back(seed % 3 ? optimize(p) : p);
    }
    std::vector<Program> copies = programs;
    // -O1: the generated code's meaning does not depend on the level, its compile time does.
    CCompileOptions quick;
    quick.extra_flags = {"-O1"};
    quick.reassociate = false;
    // Every other batch on one thread, compiled with OpenMP's SIMD part alone (c_compiler.h).
    quick.threads = (first / kBatch) % 2 ? 1 : 0;
    auto exes = compile_c_batch(std::move(copies), quick);
    for (size_t i = 0; i < cases.size(); ++i) {
      const RandomCase& c = cases[i];
      std::string want_error, got_error;
      TensorMap want, got;
      try {
        want = interpret(programs[i], c.inputs, c.params);
      } catch (const Error& e) {
        want_error = e.what();
      }
      // Into outputs that start as NaN: an output the kernel must zero and does not shows.
      got = testing::nan_like(want);
      try {
        exes[i]->run_into(c.inputs, got, c.params);
      } catch (const Error& e) {
        got_error = e.what();
        got.clear();
      }
      EXPECT_EQ(want_error, got_error) << "seed " << first + i;
      EXPECT_TRUE(testing::same_outputs(want, got)) << "seed " << first + i << "\n"
                                                    << print(programs[i]) << emit_c(programs[i]);
    }
  }
}

// `changed[i]`, compiled exact (-O1, one compiler call for all), gives what the interpreter gives
// on `programs[i]`, into outputs that start as NaN: an element the kernel does not write (a fill
// trimmed where no tile stores, fill_trimming.h) shows.
void expect_exact_c(const std::vector<RandomCase>& cases, const std::vector<Program>& programs,
                    const std::vector<Program>& changed) {
  CCompileOptions quick;
  quick.extra_flags = {"-O1"};
  quick.reassociate = false;
  auto exes = compile_c_batch(changed, quick);
  for (size_t i = 0; i < cases.size(); ++i) {
    TensorMap want = interpret(programs[i], cases[i].inputs, cases[i].params);
    TensorMap got = testing::nan_like(want);
    exes[i]->run_into(cases[i].inputs, got, cases[i].params);
    EXPECT_TRUE(testing::same_outputs(want, got)) << print(programs[i]) << emit_c(changed[i]);
  }
}

// Random programs, optimized, and what `change` makes of them, for the first `wanted` seeds it
// changes (nothing: unchanged). Contractions in every program, or in every other one.
struct Found {
  std::vector<RandomCase> cases;
  std::vector<Program> programs, changed;
};
Found search(int wanted, bool contractions,
             const std::function<std::optional<Program>(const Program&)>& change) {
  Found found;
  for (uint64_t seed = 0; int(found.cases.size()) < wanted && seed < 100000; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    o.max_nodes = 6 + int(seed % 11);
    o.contractions = contractions || seed % 2 == 1;
    RandomCase c = random_case(seed, o);
    Program p = optimize(lower(c.graph));
    std::optional<Program> t = change(p);
    if (!t) continue;
    found.cases.push_back(std::move(c));
    found.programs.push_back(std::move(p));
    found.changed.push_back(std::move(*t));
  }
  return found;
}

// Random programs with a contraction, tiled in registers (tiles of 2 x 3 after reduction tiles
// of 2, so that random sizes span several and leave rows and columns over), which the emitter
// keeps in local arrays: bit for bit against the untiled program in the interpreter. Few random
// programs have one, so the seeds are searched for them.
TEST(CDifferential, RegisterTilesMatchInterpreter) {
  const int wanted = std::max(1, trials() / 30);
  int guarded = 0;  // tiles with checked loads, run under a guard (kernel_writer.h)
  int rows = 0;     // ... whose else reads rows through pointers (LoopPlan::tile_rows)
  Found found = search(wanted, false, [&](const Program& p) -> std::optional<Program> {
    Program t =
        tile_copies(tile_registers(tile_reductions(tile_dots(p, 2, 3, 2), 2), 6, 2, 3, 4), 2);
    std::string src = emit_c(t);
    if (src.find("tile_v") == std::string::npos && print(t) == print(p)) return std::nullopt;
    guarded += src.find("if (in_range(") != std::string::npos;
    rows += src.find(" *row_") != std::string::npos;
    return t;
  });
  ASSERT_EQ(int(found.cases.size()), wanted)
      << "too few random programs have a contraction to tile";
  EXPECT_GE(guarded, std::max(1, wanted / 10)) << "too few tiles check their loads";
  EXPECT_GE(rows, std::max(1, wanted / 20)) << "too few tiles read rows through pointers";
  expect_exact_c(found.cases, found.programs, found.changed);
}

// Random programs with an operand one loop re-reads (a contraction with w read transposed), as
// their packed variants (packed_variant.h), compiled exact with the C backend's plan: the same
// values (NaN for NaN) as the program in the interpreter, into outputs that start as NaN. Few
// random programs have one, so the seeds are searched for them.
TEST(CDifferential, PackedVariantsMatchInterpreter) {
  const int wanted = std::max(1, trials() / 60);
  Found found = search(wanted, true, [](const Program& p) -> std::optional<Program> {
    auto v = packed_variant(p);
    return v ? std::optional<Program>(std::move(v->program)) : std::nullopt;
  });
  ASSERT_EQ(int(found.cases.size()), wanted) << "too few random programs have a packed variant";
  expect_exact_c(found.cases, found.programs, found.changed);
}

// Gradients of random graphs with contractions and pooling-like windows scatter through
// shifted indices; scatter tiling (tiles of 2 images x 3 columns, 4 columns for the images left
// over, so that small sizes span several and leave some over) reorders and tiles them, and the
// kernels with reassociation give what the interpreter gives on the untiled program, up to
// rounding.
TEST(CDifferential, ScatterTilesOfRandomGradientsMatchInterpreter) {
  const int wanted = std::max(1, trials() / 60);
  std::vector<Program> tiled, programs;
  std::vector<TensorMap> inputs;
  std::vector<ParamMap> params;
  for (uint64_t seed = 0; int(tiled.size()) < wanted && seed < 20000; ++seed) {
    RandomGraphOptions o;
    o.dtype = DType::f64;
    o.smooth = true;
    o.contractions = true;
    o.max_nodes = 4 + int(seed % 6);
    RandomCase c = random_case(seed, o);
    std::vector<std::string> wrt;
    for (auto& n : c.graph.nodes())
      if (n.kind == UopKind::input && is_float(n.dtype)) wrt.push_back(n.name);
    if (wrt.empty()) continue;
    Program grad = optimize(gradient(c.graph, wrt));
    Program t = tile_scatters(grad, 2, 3, 4);
    if (print(t) == print(grad)) continue;
    verify_or_throw(t, "tile_scatters");
    std::map<std::string, std::vector<int64_t>> shapes;
    for (auto& [name, x] : c.inputs) shapes[name] = x.shape;
    for (auto& [name, y] : interpret(lower(c.graph), c.inputs, c.params))
      shapes["d" + name] = y.shape;
    TensorMap in = testing::random_inputs(grad, shapes, seed);
    programs.push_back(std::move(grad));
    tiled.push_back(std::move(t));
    inputs.push_back(std::move(in));
    params.push_back(c.params);
  }
  ASSERT_EQ(int(tiled.size()), wanted) << "too few random gradients scatter through a window";
  int rows = 0, columns = 0;  // tiles of images x columns, and of columns alone
  for (auto& t : tiled) {
    std::string src = emit_c(t);
    rows += src.find("[2][3];") != std::string::npos;
    columns += src.find("[4];") != std::string::npos;
  }
  EXPECT_GE(rows, 1) << "no random gradient tiled by images";
  EXPECT_GE(columns, 1) << "no random gradient tiled by columns alone";
  CCompileOptions quick;
  quick.extra_flags = {"-O1"};
  auto exes = compile_c_batch(tiled, quick);
  for (size_t i = 0; i < tiled.size(); ++i)
    EXPECT_TRUE(testing::same_outputs(interpret(programs[i], inputs[i], params[i]),
                                      exes[i]->run(inputs[i], params[i]), 1e-9))
        << print(programs[i]) << emit_c(tiled[i]);
}

// Random programs whose innermost loops call exp, log, sin, cos, tanh or pow in SIMD lanes
// (simd_math, with libmvec: the reassociating default) give what the same kernels give with the
// scalar functions (vector_math = false, where no loop runs as SIMD math), up to the SIMD
// variants' last bits, and the same errors. Rows of up to 40 elements, so the loops run whole
// vectors and a tail. No op whose output jumps where its input moves by an ulp: a lane's sin and
// the tail's differ in the last bit for one input, and `sin(a) == sin(b)` with a == b then
// says 0 in one kernel and 1 in the other. Ill-conditioned chains still amplify the last bits:
// with UOPS_FUZZ_TRIALS=40000, cos(exp(exp(x + 1))) differed by 2e-4 (cos of about 22,000, whose
// ulp is 0.002), which the tolerance does not allow; 12,000 pass.
TEST(CDifferential, SimdMathMatchesScalarMath) {
  const int wanted = std::max(1, trials() / 10);
  std::vector<RandomCase> cases;
  std::vector<Program> programs;
  for (uint64_t seed = 0; int(cases.size()) < wanted && seed < 100000; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    o.max_nodes = 4 + int(seed % 12);
    o.max_rank = 2;
    o.max_size = 40;
    o.raising_element = true;
    o.jumps = o.arg_reductions = false;
    RandomCase c = random_case(seed, o);
    Program p = lower(c.graph);
    if (seed % 3) p = optimize(p);
    if (print(plan_cpu(p, {})).find("[simd math]") == std::string::npos) continue;
    cases.push_back(std::move(c));
    programs.push_back(std::move(p));
  }
  ASSERT_EQ(int(cases.size()), wanted) << "too few random programs call math functions";
  // -O1 vectorizes `omp simd` loops too.
  CCompileOptions vector, scalar;
  vector.extra_flags = scalar.extra_flags = {"-O1"};
  scalar.vector_math = false;
  auto vector_exes = compile_c_batch(programs, vector);
  auto scalar_exes = compile_c_batch(programs, scalar);
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string want_error, got_error;
    TensorMap want, got;
    try {
      want = scalar_exes[i]->run(cases[i].inputs, cases[i].params);
    } catch (const Error& e) {
      want_error = e.what();
    }
    try {
      got = vector_exes[i]->run(cases[i].inputs, cases[i].params);
    } catch (const Error& e) {
      got_error = e.what();
    }
    EXPECT_EQ(want_error, got_error) << print(programs[i]);
    EXPECT_TRUE(testing::same_outputs(want, got, 1e-4))
        << print(programs[i]) << emit_c(programs[i]);
  }
}

}  // namespace
}  // namespace uops
