// Bad input to a compiled kernel gets the interpreter's errors, and the kernel cache serves a
// hit without running the compiler.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/compare.h"
#include "uops/backends/backends.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

std::string error_of(const Executable& e, const TensorMap& in, const ParamMap& params) {
  try {
    e.run(in, params);
  } catch (const Error& err) {
    return err.what();
  }
  return "";
}

TEST(CErrors, SameErrorsAsInterpreter) {
  Graph g;
  g.param("k");
  Node x = g.input("x", 2, DType::f32), y = g.input("y", 1, DType::f32);
  Node xy = g.binary(BinaryOp::add, x, g.reindex(y, {"dA0", "dA1[=dB0]"}, {"i1"}, {x, y}));
  g.output("z", g.reindex(xy, {"dA0", "dA1"}, {"i0", "i1 / $k"}, {x}));
  Program p = lower(g);
  auto c = compile_c(p);
  auto interp = make_interpreter(p);
  Tensor x23(DType::f32, {2, 3}), y3(DType::f32, {3}), y4(DType::f32, {4});
  struct Case {
    TensorMap in;
    ParamMap params;
  };
  std::vector<Case> cases = {
      {{{"x", x23}}, {{"k", 1}}},                                    // missing input
      {{{"x", x23}, {"y", y3}, {"w", y3}}, {{"k", 1}}},              // unknown input
      {{{"x", Tensor(DType::f64, {2, 3})}, {"y", y3}}, {{"k", 1}}},  // wrong dtype
      {{{"x", y3}, {"y", y3}}, {{"k", 1}}},                          // wrong rank
      {{{"x", x23}, {"y", y4}}, {{"k", 1}}},                         // broken equality
      {{{"x", x23}, {"y", y3}}, {}},                                 // missing parameter
      {{{"x", x23}, {"y", y3}}, {{"k", 1}, {"q", 2}}},               // unknown parameter
      {{{"x", x23}, {"y", y3}}, {{"k", 0}}},                         // division by zero
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string want = error_of(*interp, cases[i].in, cases[i].params);
    EXPECT_FALSE(want.empty()) << "case " << i;
    EXPECT_EQ(error_of(*c, cases[i].in, cases[i].params), want) << "case " << i;
  }
  EXPECT_EQ(error_of(*c, {{"x", x23}, {"y", y3}}, {{"k", 0}}),
            "division by zero in an index expression");
  EXPECT_EQ(error_of(*c, {{"x", x23}, {"y", y3}}, {{"k", 2}}), "");
}

// A loop over an empty range runs nothing (docs/design.md §3.4), so an index that would divide
// by zero there raises nowhere: the interpreter once folded `1 / $p` eagerly and raised.
TEST(CErrors, RaisingIndexInALoopThatNeverRunsRaisesNowhere) {
  Graph g;
  g.param("p");
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.reindex(x, {"dA0"}, {"i0 + 1 / $p"}, {x}));
  for (bool optimized : {false, true}) {
    Program p = optimized ? optimize(lower(g)) : lower(g);
    for (const char* backend : {"interp", "c"}) {
      auto e = make_backend(backend, p);
      EXPECT_EQ(error_of(*e, {{"x", Tensor(DType::f32, {0})}}, {{"p", 0}}), "") << backend;
      EXPECT_EQ(error_of(*e, {{"x", Tensor(DType::f32, {2})}}, {{"p", 0}}),
                "division by zero in an index expression")
          << backend;
    }
  }
}

// y[i] = x[i + 1 / (i - q)] over 2^19 + 1 elements: a parallel loop (from 2^18 iterations) on 4
// threads, where element q divides by zero in whichever thread's share it falls.
TEST(CErrors, AnErrorInAnyThreadOfAParallelLoopIsReported) {
  Graph g;
  g.param("q");
  g.output("y", g.reindex(g.input("x", 1, DType::f32), {"dA0"}, {"i0 + 1 / (i0 - $q)"}));
  Program p = lower(g);
  CCompileOptions four;
  four.threads = 4;
  auto c = compile_c(p, four);
  ASSERT_NE(emit_c(p).find("omp for"), std::string::npos) << emit_c(p);
  const int64_t n = (1 << 19) + 1;
  TensorMap in{{"x", Tensor(DType::f32, {n})}};
  for (int64_t q : {int64_t(0), n / 3, n - 1})
    EXPECT_EQ(error_of(*c, in, {{"q", q}}), "division by zero in an index expression") << q;
  EXPECT_EQ(error_of(*c, in, {{"q", n}}), "");
}

// y[0] = x[j] for i in [0, x.0 / $p), j in [1, x.0): nothing is parallel, and the inner loop is
// a tail [1, n) that the C emitter may test for emptiness before the loops above it, but never
// above a loop whose bound may raise: the interpreter evaluates x.0 / $p, so with $p = 0 the
// kernel must raise even where [1, n) is empty.
TEST(CErrors, ARaisingBoundIsEvaluatedAboveAnEmptyInnerLoop) {
  Program p;
  p.params = {"p"};
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"y", DType::f32, {idx::constant(1)}, Role::output});
  Loop outer, inner;
  outer.var = p.num_vars++;
  outer.start = idx::constant(0);
  outer.end = idx::floordiv(idx::dim(0, 0), idx::param("p"));
  inner.var = p.num_vars++;
  inner.start = idx::constant(1);
  inner.end = idx::dim(0, 0);
  Stmt store;
  store.tensor = 1;
  store.index = {idx::constant(0)};
  store.value = val::load(0, {idx::var(inner.var)});
  inner.stmts.push_back(store);
  p.blocks.push_back({{outer, inner}, "raising bound over a tail"});
  ASSERT_TRUE(verify(p).empty()) << print(p);
  auto c = compile_c(p);
  auto interp = make_interpreter(p);
  for (int64_t n : {1, 3})
    for (int64_t q : {0, 1}) {
      TensorMap in{{"x", Tensor(DType::f32, {n})}};
      EXPECT_EQ(error_of(*c, in, {{"p", q}}), error_of(*interp, in, {{"p", q}}))
          << "n=" << n << " p=" << q;
    }
  EXPECT_EQ(error_of(*interp, {{"x", Tensor(DType::f32, {1})}}, {{"p", 0}}),
            "division by zero in an index expression");
}

TEST(CErrors, UnknownBackendSaysWhich) {
  Graph g;
  g.output("y", g.unary(UnaryOp::neg, g.input("x", 1, DType::f32)));
  try {
    make_backend("fortran", lower(g));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'fortran'"), std::string::npos);
  }
  EXPECT_EQ(make_backend("c", lower(g))->backend(), "c");
}

// A compiler wrapper that logs every call and fails while UOPS_TEST_BREAK_CC is set; being the
// same file throughout, it has one identity, so cache keys do not change when it breaks.
struct CountingCompiler {
  std::filesystem::path dir, script, log;
  CountingCompiler() {
    dir =
        std::filesystem::temp_directory_path() / ("uops-cache-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "cache");
    script = dir / "cc.sh";
    log = dir / "calls.log";
    std::ofstream(script)
        << "#!/bin/sh\necho \"$@\" >> '" << log.string()
        << "'\nif [ -n \"$UOPS_TEST_BREAK_CC\" ]; then echo 'broken compiler' >&2; "
           "exit 1; fi\nexec cc \"$@\"\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    setenv("UOPS_CACHE_DIR", (dir / "cache").c_str(), 1);
  }
  ~CountingCompiler() {
    unsetenv("UOPS_CACHE_DIR");
    unsetenv("UOPS_TEST_BREAK_CC");
    std::filesystem::remove_all(dir);
  }
  int calls() const {
    std::ifstream in(log);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }
};

TEST(KernelCache, HitRunsNoCompiler) {
  CountingCompiler cc;
  Graph g;
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.unary(UnaryOp::exp, x));
  Program p = lower(g);
  CCompileOptions o;
  o.compiler = cc.script.string();
  Tensor t(DType::f32, {5});
  TensorMap in = {{"x", t}};

  auto first = compile_c(p, o);
  int after_first = cc.calls();
  EXPECT_GE(after_first, 1);
  auto second = compile_c(p, o);
  EXPECT_EQ(cc.calls(), after_first);

  setenv("UOPS_TEST_BREAK_CC", "1", 1);
  auto third = compile_c(p, o);  // a hit: the broken compiler is never asked
  EXPECT_TRUE(testing::same_outputs(first->run(in), third->run(in)));
  EXPECT_EQ(cc.calls(), after_first);

  Graph h;
  h.output("y", h.unary(UnaryOp::sin, h.input("x", 1, DType::f32)));
  try {
    compile_c(lower(h), o);
    FAIL() << "a miss with a broken compiler must fail";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("broken compiler"), std::string::npos) << what;
    EXPECT_NE(what.find("generated source kept at "), std::string::npos) << what;
    std::string kept = what.substr(what.find("kept at ") + 8);
    EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
  }
  for (auto& entry : std::filesystem::directory_iterator(cc.dir / "cache"))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace uops
