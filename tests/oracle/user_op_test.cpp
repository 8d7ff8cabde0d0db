// An op a user describes and registers is checked end to end: cases derived from its
// description alone, a right kernel passes, a wrong one fails, shrinks, and its replay reruns it.
#include <gtest/gtest.h>

#include <cstdlib>

#include "oracle/user_ops.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ops/op_gradient.h"
#include "uops/oracle/gtest.h"

namespace uops::oracle {

using namespace ir;

namespace {

const OpDef& registered(const OpDef& op) {
  for (const OpDef& o : all_ops())
    if (o.name == op.name) return o;
  return register_op(op);
}

struct UserOp {
  const char* name;
  OpDef (*describe)();
  Implementation (*kernel)(int64_t);
};

class UserOps : public ::testing::TestWithParam<UserOp> {};

TEST_P(UserOps, RightKernelPasses) {
  const OpDef& op = registered(GetParam().describe());
  EXPECT_EQ(op.origin, OpOrigin::user);
  EXPECT_EQ(&find_op(op.name), &op);
  for (DType t : {DType::f32, DType::f64}) {
    EXPECT_ORACLE(op, GetParam().kernel(0), {.dtype = t});
  }
}

TEST_P(UserOps, WrongKernelFailsShrinksAndReplays) {
  const OpDef& op = registered(GetParam().describe());
  Implementation wrong = GetParam().kernel(16);
  CheckReport r = check(op, wrong, {.dtype = DType::f64});
  ASSERT_FALSE(r.passed) << "a tail bug past 16 went unnoticed";
  EXPECT_EQ(r.culprit, "implementation");
  for (auto& [name, dims] : r.shrunk.shapes)
    for (size_t a = 0; a < dims.size(); ++a) EXPECT_LE(dims[a], r.original.shapes.at(name)[a]);
  // Still past the tail: the bug needs an axis over 16.
  int64_t largest = 0;
  for (auto& [name, dims] : r.shrunk.shapes)
    for (int64_t d : dims) largest = std::max(largest, d);
  EXPECT_GT(largest, 16) << r.message();
  // No uopc command: uopc cannot run the user's kernel. The replay reruns it instead.
  EXPECT_TRUE(r.repro.empty()) << r.repro;
  EXPECT_NE(r.message().find("oracle::replay(op, impl, \"" + r.replay + "\")"), std::string::npos);
  CheckReport again = replay(op, wrong, r.replay);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.cases, 1);
  EXPECT_EQ(again.shrunk.shapes, r.shrunk.shapes);
  EXPECT_EQ(again.mismatch.worst.index, r.mismatch.worst.index);
  EXPECT_EQ(again.mismatch.worst.got, r.mismatch.worst.got);
  EXPECT_TRUE(replay(op, GetParam().kernel(0), r.replay).passed);
  EXPECT_ORACLE(op, GetParam().kernel(0), {.only = r.shrunk});
  // The same through the environment: the user's own test, unchanged, reruns that case first
  // in its check of that dtype.
  ::setenv("UOPS_ORACLE_REPLAY", r.replay.c_str(), 1);
  CheckReport env = check(op, wrong, {.dtype = DType::f64, .trials = 200});
  ::unsetenv("UOPS_ORACLE_REPLAY");
  EXPECT_FALSE(env.passed);
  EXPECT_EQ(env.cases, 1);
  EXPECT_EQ(env.replayed, 1);
  EXPECT_EQ(env.dtype, DType::f64);
  EXPECT_EQ(env.mismatch.worst.got, r.mismatch.worst.got);
}

// The gradient program of a registered op runs on a derived case and gives d<input> shaped like
// each input.
TEST_P(UserOps, GradientProgramRuns) {
  const OpDef& op = registered(GetParam().describe());
  Program grad = gradient_program(op, DType::f64);
  Case c = random_case(op, DType::f64, 5);
  TensorMap in = make_inputs(op, c);
  TensorMap fwd = interpret(forward_program(op, DType::f64), in, c.params);
  TensorMap args;
  for (int t : grad.inputs()) {
    const std::string& name = grad.tensors[t].name;
    args[name] = in.count(name) ? in.at(name) : fwd.at(name.substr(1));
  }
  TensorMap out = interpret(grad, args, c.params);
  for (const std::string& x : differentiable_inputs(op))
    EXPECT_EQ(out.at("d" + x).shape, in.at(x).shape) << x;
}

INSTANTIATE_TEST_SUITE_P(
    Registered, UserOps,
    ::testing::Values(UserOp{"rmsnorm", testing::rmsnorm_op, testing::rmsnorm_kernel},
                      UserOp{"attention", testing::attention_op, testing::attention_kernel}),
    [](const auto& info) { return std::string(info.param.name); });

// Without registering, every oracle entry point takes the description as it is.
TEST(UserOps, UnregisteredDescriptionGetsCases) {
  OpDef op = testing::rmsnorm_op();
  op.name = "unregistered_rmsnorm";
  Case c = random_case(op, DType::f32, 3);
  EXPECT_EQ(c.shapes.at("x")[1], c.shapes.at("w")[0]);  // asserted-equal axes share a size
  EXPECT_ORACLE(op, testing::rmsnorm_kernel(0), {.trials = 10});
}

TEST(UserOps, RegistrationRefusesBadDescriptions) {
  registered(testing::rmsnorm_op());
  EXPECT_THROW(register_op(testing::rmsnorm_op()), Error);  // the name is taken
  OpDef unnamed = testing::rmsnorm_op();
  unnamed.name = "";
  EXPECT_THROW(register_op(unnamed), Error);
  OpDef wrong_rank = testing::rmsnorm_op();
  wrong_rank.name = "user_rmsnorm_rank";
  wrong_rank.inputs[1].rank = 2;
  EXPECT_THROW(register_op(wrong_rank), Error);
  OpDef broken = testing::rmsnorm_op();
  broken.name = "user_broken";
  broken.build = [](DType t) {
    Graph g;
    g.reindex(g.input("x", 2, t), {"$nope"}, {"i0"});
    return g;
  };
  EXPECT_THROW(register_op(broken), Error);
}

// What the description lists must be what its graph declares, each with a clear error.
TEST(UserOps, RegistrationChecksTheListsAgainstTheGraph) {
  auto refused = [](OpDef op, const std::string& needle) {
    try {
      register_op(std::move(op));
      ADD_FAILURE() << "registered; expected an error naming: " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  OpDef index = find_op("gather");
  index.name = "user_gather_unmarked";
  index.inputs[1].is_index = false;
  refused(index, "not marked is_index");
  OpDef float_index = testing::rmsnorm_op();
  float_index.name = "user_rmsnorm_index";
  float_index.inputs[1].is_index = true;
  refused(float_index, "an index input is i32");
  OpDef conv = find_op("conv2d");
  conv.name = "user_conv_misspelt";
  conv.param_ranges["strid"] = {1, 3};
  refused(conv, "param_ranges for 'strid'");
  OpDef params = find_op("conv2d");
  params.name = "user_conv_params";
  params.params.pop_back();
  refused(params, "but its graph declares [");
  OpDef outputs = testing::rmsnorm_op();
  outputs.name = "user_rmsnorm_outputs";
  outputs.outputs = {"z"};
  refused(outputs, "lists outputs [z]");
}

// A description whose declared ranges never give a valid case is a user error, not a bug.
TEST(UserOps, NoValidCaseIsAUserError) {
  OpDef op = testing::rmsnorm_op();
  op.name = "never_valid";
  op.invalid = [](const Shapes&, const ParamMap&) { return std::string("never"); };
  EXPECT_THROW(random_case(op, DType::f32, 1), Error);
}

}  // namespace
}  // namespace uops::oracle
