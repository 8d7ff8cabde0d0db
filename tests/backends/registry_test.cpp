// The backend registry (uops/backends/backends.h) and the dialect table the C printer reads
// (backends/codegen/dialect.h): a third dialect, C with other spellings, prints and compiles
// with no change to the shared writer.
#include "uops/ops/registry.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "backends/c/c_compiler.h"
#include "backends/c/c_emitter.h"
#include "support/compare.h"
#include "uops/backends/backends.h"
#include "uops/backends/c/c_backend.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {

namespace {

TEST(BackendRegistry, NamesEveryBackendOnce) {
  std::vector<std::string> names;
  for (const Backend& b : backends()) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"interp", "c", "cuda"}));
  EXPECT_EQ(find_backend("c").source(Program{}), emit_c(Program{}));
  EXPECT_EQ(find_backend("interp").source, nullptr);
  try {
    find_backend("metal");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown backend 'metal' (backends are interp, c, cuda)");
  }
  auto available = available_backends();
  EXPECT_EQ(std::count(available.begin(), available.end(), "c"), 1);
  EXPECT_EQ(std::count(available.begin(), available.end(), "cuda"),
            find_backend("cuda").unavailable().empty() ? 1 : 0);
}

// C with other spellings: GCC's __restrict and helpers that say they may go unused.
const codegen::Dialect& other_c() {
  static const codegen::Dialect d{"other_c",
                                  "static inline __attribute__((unused)) ",
                                  "static __attribute__((unused)) ",
                                  "__restrict",
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  nullptr,
                                  "f",
                                  "vector_expf"};
  return d;
}

TEST(BackendRegistry, AThirdDialectPrintsItsOwnSpellings) {
  Program p = optimize(forward_program(find_op("softmax"), DType::f32));
  std::string plain = cgen::emit_c_unit({&p}, {"uops_kernel"});
  std::string other =
      cgen::emit_c_unit({&p}, {"uops_kernel"}, {false, false}, cgen::Zeros::by_entry, other_c());
  EXPECT_NE(plain.find(" *restrict "), std::string::npos);
  EXPECT_EQ(other.find(" *restrict "), std::string::npos) << other;
  EXPECT_NE(other.find(" *__restrict "), std::string::npos) << other;
  // The same program otherwise: the spellings are the only difference.
  std::string respelled = other;
  for (auto [from, to] : {std::pair<std::string, std::string>{"__restrict ", "restrict "},
                          {" __attribute__((unused)) ", " "}})
    for (size_t at; (at = respelled.find(from)) != std::string::npos;)
      respelled.replace(at, from.size(), to);
  EXPECT_EQ(respelled, plain);
  CCompileOptions options;
  EXPECT_NE(cgen::compile_and_load(other, options), nullptr);
}

}  // namespace
}  // namespace uops
