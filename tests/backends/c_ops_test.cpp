// The C backend against the interpreter on every op and gradient, and the generated source
// against gcc and clang with every warning an error.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>

#include "support/programs.h"
#include "support/random_graph.h"
#include "uops/backends/c/c_backend.h"
#include "uops/ir/fixed_params.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"

namespace uops {
namespace {

TEST(COps, EveryOpAndGradientMatchesInterpreter) {
  std::vector<testing::OpCase> cases = testing::op_cases();
  // -O1: the generated code's meaning does not depend on the level, its compile time does.
  // The lowered programs (large, every access checked) run only with UOPS_LONG_TESTS set.
  CCompileOptions quick;
  quick.extra_flags = {"-O1"};
  bool lowered_too = std::getenv("UOPS_LONG_TESTS") != nullptr;
  for (bool optimized : {false, true}) {
    if (!optimized && !lowered_too) continue;
    std::vector<const testing::OpCase*> chosen;
    std::vector<Program> programs;
    for (auto& c : cases)
      if ((c.label.find("optimized") != std::string::npos) == optimized) {
        chosen.push_back(&c);
        programs.push_back(c.program);
      }
    auto exes = compile_c_batch(std::move(programs), quick);
    for (size_t i = 0; i < chosen.size(); ++i) {
      const auto& c = *chosen[i];
      // Reassociated reductions (the default) differ from the interpreter in the last bits.
      double tolerance = c.program.value_type() == DType::f64 ? 1e-10 : 1e-4;
      EXPECT_TRUE(testing::same_outputs(interpret(c.program, c.inputs, c.params),
                                        exes[i]->run(c.inputs, c.params), tolerance))
          << c.label;
    }
  }
}

// Each program's own translation unit, all in one compiler call per configuration.
void compile_all(const std::string& compiler, const std::vector<std::string>& flags,
                 const std::vector<std::string>& sources) {
  auto dir = std::filesystem::temp_directory_path() /
             ("uops-werror-" + std::to_string(::getpid()) + "-" + compiler);
  std::filesystem::create_directories(dir);
  std::string command = "cd '" + dir.string() + "' && " + compiler;
  for (auto& f : flags) command += " " + f;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string name = "p" + std::to_string(i) + ".c";
    std::ofstream(dir / name) << sources[i];
    command += " " + name;
  }
  command += " 2>&1";
  FILE* f = popen(command.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) output.append(buf, n);
  int rc = pclose(f);
  EXPECT_EQ(rc, 0) << compiler << " " << flags.back() << ":\n" << output.substr(0, 4000);
  std::filesystem::remove_all(dir);
}

// The backend's own flags add the host's ISA and vector math (c_compiler.cpp): helpers such as
// uops_load_lanes print another body where the ISA has AVX or AVX-512.
const char* const kWarningConfigurations[] = {
    "-fno-openmp", "-fopenmp", "-fopenmp-simd -DUOPS_OPENMP_SIMD",
    "-fopenmp -march=native -DUOPS_VECTOR_MATH",
    "-fopenmp-simd -DUOPS_OPENMP_SIMD -march=native -DUOPS_VECTOR_MATH"};

// One test per compiler and configuration, so that ctest spreads the compilers' calls (five
// minutes in all) over the cores.
class COpsWarnings : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

TEST_P(COpsWarnings, EveryProgramCompilesWithoutWarnings) {
  auto [cc, configuration] = GetParam();
  // Sanitized, the last configuration alone: the sources (the sanitized part) are the same for
  // each.
  if (testing::kSanitized && configuration + 1 != std::size(kWarningConfigurations))
    GTEST_SKIP() << "sanitized build: the emitter is checked under the last configuration";
  // CI installs both compilers; elsewhere (a GPU machine's image, say) only those present run.
  if (std::system(("command -v " + cc + " >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << cc << " is not installed";
  std::vector<std::string> sources;
  for (auto& c : testing::op_cases()) sources.push_back(emit_c(c.program));
  // Kernels only fixed parameters print: window gathers (c_window_gather.h) at stride 1.
  for (auto [op, params] :
       {std::pair<std::string, ParamMap>{"depthwise_conv2d", {{"stride", 1}, {"pad", 1}}},
        {"maxpool2d", {{"k", 3}, {"stride", 1}, {"pad", 1}}}})
    sources.push_back(
        emit_c(fix_params(optimize(gradient_program(find_op(op), DType::f32)), params)));
  for (uint64_t seed = 0; seed < 100; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    Program p = lower(random_case(seed, o).graph);
    sources.push_back(emit_c(seed % 3 ? optimize(p) : p));
  }
  compile_all(cc,
              {"-std=c99", "-Wall", "-Wextra", "-Werror", "-fsyntax-only",
               kWarningConfigurations[configuration]},
              sources);
}

INSTANTIATE_TEST_SUITE_P(Compilers, COpsWarnings,
                         ::testing::Combine(::testing::Values("gcc", "clang"),
                                            ::testing::Range(size_t(0),
                                                             std::size(kWarningConfigurations))),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_" +
                                  std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace uops
