// Parameters fixed at compile time (uops/ir/fixed_params.h): the C printer prints them as
// constants, binding refuses any other value, and the results are the interpreter's bit for bit
// for every op with parameters, forward and gradient, at its example's values and at others,
// fixed after the passes and before them.
#include "uops/ir/fixed_params.h"

#include <gtest/gtest.h>

#include "support/compare.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/uops.h"

namespace uops {
namespace {

// Each op's example parameters, and each of them moved by one where the op still binds.
std::vector<ParamMap> param_sets(const OpDef& op) {
  std::vector<ParamMap> sets = {op.example_params};
  for (auto& [name, value] : op.example_params) {
    ParamMap moved = op.example_params;
    moved[name] = value + 1;
    sets.push_back(moved);
  }
  return sets;
}

TEST(FixedParams, EveryOpWithParamsMatchesTheInterpreterAndRefusesOtherValues) {
  int checked = 0;
  std::vector<Program> programs, plains;
  std::vector<std::pair<const OpDef*, ParamMap>> cases;
  for (const OpDef& op : all_ops()) {
    if (op.example_params.empty()) continue;
    for (const ParamMap& params : param_sets(op))
      for (bool grad : {false, true}) {
        Program p = grad ? gradient_program(op, DType::f32) : forward_program(op, DType::f32);
        // Fixed after the passes, and before them (the passes keep the assertions).
        plains.push_back(optimize(p));
        programs.push_back(fix_params(plains.back(), params));
        cases.push_back({&op, params});
        plains.push_back(optimize(p));
        programs.push_back(optimize(fix_params(p, params)));
        cases.push_back({&op, params});
      }
  }
  CCompileOptions exact;
  exact.reassociate = false;
  auto exes = compile_c_batch(programs, exact);
  for (size_t i = 0; i < programs.size(); ++i) {
    const OpDef& op = *cases[i].first;
    const ParamMap& params = cases[i].second;
    const Program& fixed = programs[i];
    std::string at = op.name + " " + std::to_string(i);
    // Constants in the source, no read of the parameter array.
    std::string src = emit_c(fixed, exact);
    for (auto& [name, value] : params)
      EXPECT_NE(src.find("const int64_t " + name + " = " + std::to_string(value) + ";"),
                std::string::npos)
          << at << "\n"
          << src;
    EXPECT_EQ(src.find("= params["), std::string::npos) << at << "\n" << src;
    std::map<std::string, std::vector<int64_t>> shapes = op.example_shapes;
    // A gradient's inputs: the forward's outputs' shapes, from the interpreter.
    TensorMap forward_in = testing::random_inputs(forward_program(op, DType::f32), shapes, i);
    TensorMap forward_out;
    try {
      forward_out = interpret(forward_program(op, DType::f32), forward_in, params);
    } catch (const Error&) {
      continue;  // a moved parameter the example's shapes do not admit
    }
    for (auto& [name, t] : forward_out) shapes["d" + name] = t.shape;
    TensorMap in = testing::random_inputs(fixed, shapes, i + 100);
    const Program& plain = plains[i];
    EXPECT_TRUE(testing::same_outputs(interpret(plain, in, params), exes[i]->run(in, params)))
        << at;
    EXPECT_TRUE(testing::same_outputs(interpret(plain, in, params), interpret(fixed, in, params)))
        << at;
    // Another value of a fixed parameter: refused before anything runs, by every backend.
    auto [name, value] = *params.begin();
    ParamMap other = params;
    other[name] = value + 2;
    EXPECT_THROW(exes[i]->run(in, other), Error) << at;
    EXPECT_THROW(interpret(fixed, in, other), Error) << at;
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST(FixedParams, RefusesUnknownNamesAndASecondValue) {
  Program p = forward_program(find_op("avgpool2d"), DType::f32);
  EXPECT_THROW(fix_params(p, {{"window", 2}}), Error);
  Program fixed = fix_params(p, {{"k", 2}});
  EXPECT_EQ(fixed_param(fixed, "k"), std::optional<int64_t>(2));
  EXPECT_EQ(fixed_param(fixed, "stride"), std::nullopt);
  EXPECT_NO_THROW(fix_params(fixed, {{"k", 2}}));
  EXPECT_THROW(fix_params(fixed, {{"k", 3}}), Error);
  EXPECT_EQ(fixed_param(fix_params(p, {{"k", -5}}), "k"), std::optional<int64_t>(-5));
  // The message names the parameter and both values.
  TensorMap in = {{"x", Tensor(DType::f32, {1, 4, 4, 2})}};
  try {
    interpret(fixed, in, {{"k", 3}, {"stride", 1}});
    FAIL() << "a second value of a fixed parameter ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("$k"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace uops
