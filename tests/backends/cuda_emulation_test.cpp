// What the CUDA backend generates, run through the CPU emulation (support/cuda_emulation.h)
// from the same launch plan the backend launches from: every op and gradient and random
// programs give the interpreter's results and errors with no race and no out-of-bounds access,
// and faults planted in the generated source are caught. Needs neither a GPU nor the toolkit.
#include "support/cuda_emulation.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "support/programs.h"
#include "support/random_graph.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

struct Outcome {
  TensorMap outputs;
  std::string error;
};

Outcome run(const Executable& e, const TensorMap& inputs, const ParamMap& params) {
  Outcome o;
  try {
    o.outputs = e.run(inputs, params);
  } catch (const Error& err) {
    o.error = err.what();
  }
  return o;
}

Outcome interpret_outcome(const Program& p, const TensorMap& inputs, const ParamMap& params) {
  Outcome o;
  try {
    o.outputs = interpret(p, inputs, params);
  } catch (const Error& err) {
    o.error = err.what();
  }
  return o;
}

// Sums may run in another order (atomics, block reductions), hence the tolerance.
double tolerance(const Program& p) {
  return p.value_type() == DType::f64 ? 1e-9 : 1e-4;
}

// The kernel's outputs are the interpreter's (within the tolerance), or its error the same.
void expect_interpreters_outcome(const Executable& kernel, const testing::OpCase& c) {
  Outcome want = interpret_outcome(c.program, c.inputs, c.params);
  Outcome got = run(kernel, c.inputs, c.params);
  EXPECT_EQ(want.error, got.error) << c.label;
  EXPECT_TRUE(testing::same_outputs(want.outputs, got.outputs, tolerance(c.program))) << c.label;
}

// The example shapes capped at 24 per axis (8 under the sanitizers, where every access the
// detector logs costs much more): an emulated thread block costs 256 fiber switches per barrier.
constexpr int64_t kMaxExtent = testing::kSanitized ? 8 : 24;

TEST(CudaEmulation, EveryOpAndGradientMatchesInterpreter) {
  std::vector<testing::OpCase> cases = testing::op_cases(kMaxExtent);
  std::vector<Program> programs;
  for (auto& c : cases) programs.push_back(c.program);
  auto kernels = testing::emulate_cuda_batch(std::move(programs));
  for (size_t i = 0; i < cases.size(); ++i) expect_interpreters_outcome(*kernels[i], cases[i]);
  RecordProperty("cases", int(cases.size()));
}

// Parameters fixed at compile time (uops/ir/fixed_params.h) are constants in the kernels, which
// do not take them: every op with parameters, forward and gradient, optimized, matches the
// interpreter, and a run given another value is refused before any launch.
TEST(CudaEmulation, FixedParamsAreConstantsInTheKernels) {
  std::vector<testing::OpCase> cases;
  for (auto& c : testing::op_cases(kMaxExtent))
    if (!c.params.empty() && c.program.value_type() == DType::f32 &&
        c.label.find("optimized") != std::string::npos)
      cases.push_back(c);
  std::vector<Program> programs;
  for (auto& c : cases) programs.push_back(fix_params(c.program, c.params));
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string src = emit_cuda(programs[i]);
    for (auto& [name, value] : cases[i].params) {
      EXPECT_NE(src.find("const int64_t " + name + " = " + std::to_string(value) + ";"),
                std::string::npos)
          << cases[i].label << "\n"
          << src;
      EXPECT_EQ(src.find("int64_t " + name + ","), std::string::npos) << cases[i].label;
    }
  }
  auto kernels = testing::emulate_cuda_batch(programs);
  for (size_t i = 0; i < cases.size(); ++i) {
    const testing::OpCase& c = cases[i];
    expect_interpreters_outcome(*kernels[i], c);
    ParamMap other = c.params;
    other.begin()->second += 1;
    EXPECT_NE(run(*kernels[i], c.inputs, other).error.find("equal assertion failed"),
              std::string::npos)
        << c.label;
  }
  EXPECT_GE(cases.size(), 10u);  // 5 ops with parameters, forward and gradient
}

// 500 random programs (UOPS_FUZZ_TRIALS for more), optimized or not, errors included: the only
// programs whose kernels use the compare-and-swap atomics (max, min and i32 accumulations). Some
// raise an error at one element, wherever it lands; a quarter have loops cut short (blocks that
// write part of a tensor: the zero fill must see it). Every other batch runs on at most two
// blocks, so that grid-stride loops take several rows per block and a cooperative block reuses
// its shared buffer from one row to the next.
TEST(CudaEmulation, RandomProgramsMatchInterpreter) {
  const char* env = std::getenv("UOPS_FUZZ_TRIALS");
  const int trials = env ? std::atoi(env) : 500, batch = 125;
  int compared = 0, errors = 0;
  for (int first = 0; first < trials; first += batch) {
    std::vector<RandomCase> cases;
    std::vector<Program> programs;
    for (int seed = first; seed < std::min(trials, first + batch); ++seed) {
      RandomGraphOptions o;
      o.dtype = seed % 2 ? DType::f64 : DType::f32;
      o.contractions = seed % 4 == 1;
      o.raising_element = true;
      cases.push_back(random_case(uint64_t(seed), o));
      Program p = lower(cases.back().graph);
      if (seed % 4 == 3) p = with_partial_loops(std::move(p), uint64_t(seed));
      programs.push_back(seed % 3 ? optimize(p) : p);
    }
    std::vector<Program> kept = programs;
    auto kernels =
        testing::emulate_cuda_batch(std::move(programs), nullptr, (first / batch) % 2 ? 0 : 2);
    for (size_t i = 0; i < cases.size(); ++i) {
      const RandomCase& c = cases[i];
      Outcome want = interpret_outcome(kept[i], c.inputs, c.params);
      Outcome got = run(*kernels[i], c.inputs, c.params);
      EXPECT_EQ(want.error, got.error) << "seed " << first + int(i);
      EXPECT_TRUE(testing::same_outputs(want.outputs, got.outputs, tolerance(kept[i])))
          << "seed " << first + int(i) << "\n"
          << print(kept[i]) << emit_cuda(kept[i]);
      ++compared;
      errors += !want.error.empty();
    }
  }
  RecordProperty("programs", compared);
  RecordProperty("errors", errors);
}

// The error word: a division and a modulo by a zero parameter inside a kernel report the
// interpreter's error; the same kernels with a non-zero parameter run.
TEST(CudaEmulation, IndexErrorsMatchInterpreter) {
  std::vector<Program> programs;
  for (const char* index : {"i0 / $p", "i0 % $p"}) {
    Graph g;
    g.param("p");
    g.output("y", g.reindex(g.input("x", 1, DType::f32), {"dA0"}, {index}));
    programs.push_back(lower(g));
  }
  std::vector<Program> kept = programs;
  auto kernels = testing::emulate_cuda_batch(std::move(programs));
  TensorMap in;
  in["x"] = Tensor(DType::f32, {300});
  for (size_t i = 0; i < kept.size(); ++i)
    for (int64_t p : {0, 2}) {
      Outcome want = interpret_outcome(kept[i], in, {{"p", p}});
      Outcome got = run(*kernels[i], in, {{"p", p}});
      EXPECT_EQ(want.error, got.error) << i << " p=" << p;
      EXPECT_EQ(want.error.empty(), p != 0) << want.error;
      EXPECT_TRUE(testing::same_outputs(want.outputs, got.outputs));
    }
}

// ---- planted faults ----------------------------------------------------------------------------

// Replaces the first `from` (which must occur) by `to`.
testing::SourceEdit plant(const std::string& from, const std::string& to) {
  return [from, to](const std::string& source) {
    size_t at = source.find(from);
    if (at == std::string::npos) return std::string("#error planted fault: pattern not found\n");
    return source.substr(0, at) + to + source.substr(at + from.size());
  };
}

// A row sum long enough that every thread of a block holds a partial sum.
Program long_row_sums(TensorMap* inputs) {
  Graph g;
  g.output("y", g.reduce(ReduceOp::sum, {1}, g.input("x", 2, DType::f32)));
  Tensor x(DType::f32, {3, 1000});
  for (int64_t i = 0; i < x.numel(); ++i) x.set(i, double(i % 7) - 3.0);
  (*inputs)["x"] = x;
  return optimize(lower(g));
}

std::string fault_of(const Program& p, const TensorMap& inputs, const testing::SourceEdit& edit) {
  Outcome want = interpret_outcome(p, inputs, {});
  Outcome got = run(*testing::emulate_cuda(p, edit), inputs, {});
  if (!got.error.empty()) return got.error;
  if (!testing::same_outputs(want.outputs, got.outputs, tolerance(p))) return "wrong result";
  return "";
}

TEST(CudaEmulation, TheUnplantedKernelsRunClean) {
  TensorMap in;
  Program sums = long_row_sums(&in);
  EXPECT_EQ(fault_of(sums, in, nullptr), "");
}

TEST(CudaEmulation, CatchesAMissingBarrierAfterThePartialSums) {
  TensorMap in;
  Program p = long_row_sums(&in);
  std::string fault = fault_of(p, in, [](const std::string& s) {
    size_t at = s.find("__syncthreads();", s.find("partial[threadIdx.x] = c"));
    if (at == std::string::npos) return std::string("#error no barrier\n");
    return s.substr(0, at) + s.substr(at + 16);
  });
  // Thread 0 goes on to read a partial sum another thread has not written yet.
  EXPECT_NE(fault.find("read of uninitialised shared memory"), std::string::npos) << fault;
  EXPECT_NE(fault.find("__syncthreads missing"), std::string::npos) << fault;
}

// Two cooperative reductions in one kernel (a row's sum and maximum, fused), over more rows
// than blocks: each block reuses `partial` for the next reduction and the next row.
Program sum_and_max_rows(TensorMap* inputs) {
  Graph g;
  Node x = g.input("x", 2, DType::f32);
  g.output("s", g.reduce(ReduceOp::sum, {1}, x));
  g.output("m", g.reduce(ReduceOp::max, {1}, x));
  Tensor t(DType::f32, {5, 300});
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, double(i % 11) - 5.0);
  (*inputs)["x"] = t;
  return optimize(lower(g));
}

std::string fault_on_grid(const Program& p, const TensorMap& inputs,
                          const testing::SourceEdit& edit, unsigned max_grid) {
  Outcome want = interpret_outcome(p, inputs, {});
  Outcome got = run(*testing::emulate_cuda(p, edit, max_grid), inputs, {});
  if (!got.error.empty()) return got.error;
  if (!testing::same_outputs(want.outputs, got.outputs, tolerance(p))) return "wrong result";
  return "";
}

// Every `<scalar> = partial[0];` loses the barrier after it.
std::string without_barrier_after_reading(const std::string& s) {
  std::string out = s, from = " = partial[0];\n    __syncthreads();\n";
  size_t removed = 0;
  for (size_t at; (at = out.find(from)) != std::string::npos; ++removed)
    out.replace(at, from.size(), " = partial[0];\n");
  return removed ? out : "#error no barrier after reading the reduced value\n";
}

TEST(CudaEmulation, RowReductionsSharingAKernelRunCleanOnAnyGrid) {
  TensorMap in;
  Program p = sum_and_max_rows(&in);
  ASSERT_EQ(p.blocks.size(), 1u) << print(p);
  std::string src = emit_cuda(p);
  ASSERT_NE(src.find("partial[threadIdx.x] = c", src.find("partial[threadIdx.x] = c") + 1),
            std::string::npos)
      << src;
  for (unsigned grid : {0u, 1u, 2u}) EXPECT_EQ(fault_on_grid(p, in, nullptr, grid), "") << grid;
}

TEST(CudaEmulation, CatchesAMissingBarrierAfterReadingTheReducedValue) {
  TensorMap in;
  Program p = sum_and_max_rows(&in);
  std::string fault = fault_on_grid(p, in, without_barrier_after_reading, 2);
  EXPECT_NE(fault.find("race on shared memory"), std::string::npos) << fault;
  // One reduction per kernel too: the next row's reduction overwrites the buffer.
  Program sums = long_row_sums(&in);
  fault = fault_on_grid(sums, in, without_barrier_after_reading, 2);
  EXPECT_NE(fault.find("race on shared memory"), std::string::npos) << fault;
}

// y[i] = x[i + 1 / (i - q)]: element q divides by zero, in thread q % 256 of block q / 256.
Program raising_at_q() {
  Graph g;
  g.param("q");
  g.output("y", g.reindex(g.input("x", 1, DType::f32), {"dA0"}, {"i0 + 1 / (i0 - $q)"}));
  return lower(g);
}

TEST(CudaEmulation, AnErrorInAnyThreadOfAnyBlockIsReported) {
  Program p = raising_at_q();
  auto kernel = testing::emulate_cuda(p);
  TensorMap in;
  in["x"] = Tensor(DType::f32, {600});
  for (int64_t q : {0, 5, 300, 599, 600}) {
    Outcome want = interpret_outcome(p, in, {{"q", q}});
    Outcome got = run(*kernel, in, {{"q", q}});
    EXPECT_EQ(want.error.empty(), q == 600) << want.error;
    EXPECT_EQ(want.error, got.error) << "q=" << q;
  }
}

TEST(CudaEmulation, CatchesAnErrorReportedByThreadZeroOnly) {
  Program p = raising_at_q();
  auto kernel =
      testing::emulate_cuda(p, plant("if (err) atomicOr(error, err);",
                                     "if (err && threadIdx.x == 0) atomicOr(error, err);"));
  TensorMap in;
  in["x"] = Tensor(DType::f32, {600});
  EXPECT_NE(run(*kernel, in, {{"q", 0}}).error, "");
  EXPECT_EQ(run(*kernel, in, {{"q", 300}}).error, "");
}

// y = -x over [0, n - 1) only: y[n - 1] keeps the zero the IR promises, so y must be zero-filled
// (the emulation's buffers start as NaN).
TEST(CudaEmulation, ALoopShorterThanItsAxisLeavesZeros) {
  Graph g;
  g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
  Program p = lower(g);
  p.blocks[0].loops[0].end = idx::sub(p.blocks[0].loops[0].end, idx::constant(1));
  TensorMap in;
  in["x"] = Tensor(DType::f32, {300});
  for (int64_t i = 0; i < 300; ++i) in["x"].set(i, double(i) + 1.0);
  TensorMap out = testing::emulate_cuda(p)->run(in, {});
  EXPECT_TRUE(testing::same_outputs(interpret(p, in, {}), out));
  EXPECT_EQ(out.at("y").get(299), 0.0);
}

// Accumulations that collide across the grid: the gather gradient's scatter (dtable[idx[i], j]
// += dy[i, j], the grid over j then i) needs atomics on its last grid loop; on 1, 2 or all
// blocks.
TEST(CudaEmulation, AccumulationsCollidingOnTheGridUseAtomics) {
  Program p = optimize(gradient_program(find_op("gather"), DType::f32));
  TensorMap in =
      testing::random_inputs(p, {{"table", {10, 4}}, {"idx", {300}}, {"dy", {300, 4}}}, 7, 9);
  ASSERT_NE(emit_cuda(p).find("atomicAdd(&"), std::string::npos) << emit_cuda(p);
  for (unsigned grid : {0u, 1u, 2u}) EXPECT_EQ(fault_on_grid(p, in, nullptr, grid), "") << grid;
}

// y[0] = x[i] for every i: the last store wins, so no two iterations may run at once (the
// kernel is serial); on the grid they would race.
TEST(CudaEmulation, StoresOfOneElementByEveryIterationRunInOrder) {
  Program p;
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"y", DType::f32, {idx::constant(1)}, Role::output});
  Loop l;
  l.var = p.num_vars++;
  l.start = idx::constant(0);
  l.end = idx::dim(0, 0);
  Stmt last;
  last.tensor = 1;
  last.index = {idx::constant(0)};
  last.value = val::load(0, {idx::var(l.var)});
  l.stmts.push_back(last);
  p.blocks.push_back({{l}, "last x"});
  ASSERT_TRUE(verify(p).empty()) << print(p);
  TensorMap in = testing::random_inputs(p, {{"x", {300}}}, 3);
  EXPECT_EQ(fault_on_grid(p, in, nullptr, 0), "");
}

TEST(CudaEmulation, CatchesAHalvedTreeStep) {
  TensorMap in;
  Program p = long_row_sums(&in);
  std::string fault = fault_of(p, in, plant("half = blockDim.x / 2", "half = blockDim.x / 4"));
  EXPECT_EQ(fault, "wrong result");
}

TEST(CudaEmulation, CatchesAnAtomicTurnedIntoAPlainAccumulation) {
  const OpDef& op = find_op("gather");
  Program grad = optimize(gradient_program(op, DType::f32));
  std::map<std::string, std::vector<int64_t>> shapes = {
      {"table", {10, 4}}, {"idx", {64}}, {"dy", {64, 4}}};
  TensorMap in = testing::random_inputs(grad, shapes, 7, 9);
  ASSERT_NE(emit_cuda(grad).find("atomicAdd(&"), std::string::npos);
  // atomicAdd(&X, V); becomes X += V; (the comma at the call's own parenthesis depth).
  std::string fault = fault_of(grad, in, [](const std::string& s) {
    size_t at = s.find("atomicAdd(&"), comma = at + 11, end = 0;
    if (at == std::string::npos) return std::string("#error no atomic\n");
    for (int depth = 0; comma < s.size() && !(depth == 0 && s[comma] == ','); ++comma)
      depth += s[comma] == '(' || s[comma] == '[' ? 1 : s[comma] == ')' || s[comma] == ']' ? -1 : 0;
    end = s.find(");\n", comma);
    return s.substr(0, at) + s.substr(at + 11, comma - at - 11) +
           " += " + s.substr(comma + 2, end - comma - 2) + ";" + s.substr(end + 2);
  });
  EXPECT_NE(fault.find("race on"), std::string::npos) << fault;
}

TEST(CudaEmulation, CatchesAGridLoopRunningOnePast) {
  Graph g;
  g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
  Program p = lower(g);
  TensorMap in;
  in["x"] = Tensor(DType::f32, {256});
  std::string fault = fault_of(p, in, plant("g < total", "g <= total"));
  EXPECT_NE(fault.find("out of bounds"), std::string::npos) << fault;
}

}  // namespace
}  // namespace uops
