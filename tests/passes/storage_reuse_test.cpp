// Storage reuse (uops/passes/storage_reuse.h): softmax's exponentials live in its output, and the
// cases where renaming a temporary to the output would change results keep the temporary.
#include "uops/passes/storage_reuse.h"

#include <gtest/gtest.h>

#include "support/random_graph.h"
#include "support/tensors.h"
#include "uops/ir.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"

namespace uops {

using namespace ir;
using testing::ramp;

namespace {

int accesses_of(const Program& p, const std::string& name) {
  int t = p.find_tensor(name), n = 0;
  for (auto& b : p.blocks)
    for (auto& l : b.loops)
      for (auto& s : l.stmts) {
        n += s.kind != StmtKind::reduce && s.tensor == t;
        for_each_load(s.value, [&](const ValueNode& v) { n += v.tensor == t; });
      }
  return n;
}

void expect_bitwise(const Program& p, const Program& q, const TensorMap& in) {
  ASSERT_TRUE(verify(q).empty()) << print(q);
  TensorMap a = interpret(p, in), b = interpret(q, in);
  for (auto& [name, t] : a)
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.get(i), b.at(name).get(i)) << name << i;
}

TEST(StorageReuse, SoftmaxKeepsItsExponentialsInTheOutput) {
  Program p = forward_program(find_op("softmax"), DType::f32);
  std::string exps;  // the temporary the exp block writes
  for (auto& b : p.blocks)
    if (b.origin == "exp") exps = p.tensors[b.loops.back().stmts[0].tensor].name;
  ASSERT_FALSE(exps.empty()) << print(p);
  Program q = reuse_storage(p);
  EXPECT_GT(accesses_of(p, exps), 0) << print(p);
  EXPECT_EQ(accesses_of(q, exps), 0) << print(q);
  TensorMap in{{"x", ramp(DType::f32, {5, 9})}};
  expect_bitwise(p, q, in);
  // Then the pipeline computes each exponential once: the division reads y, not exp again.
  std::string text = print(optimize(p, {true}));
  EXPECT_NE(text.find("] = (y["), std::string::npos) << text;
  EXPECT_EQ(text.find("exp("), text.rfind("exp(")) << text;
}

// Over x [N]: t[i] = f(x[i]) in block 0, then each later block holds one statement over i.
struct Vector {
  Program p;
  int x, t, y, z;

  explicit Vector(Value def) {
    Index n = idx::dim(0, 0);
    p.tensors = {{"x", DType::f32, {n}, Role::input},
                 {"t", DType::f32, {n}, Role::temporary},
                 {"y", DType::f32, {n}, Role::output},
                 {"z", DType::f32, {n}, Role::output}};
    x = 0, t = 1, y = 2, z = 3;
    add(t, def);
  }
  // `v` is written over the loop variable Var(-1).
  void add(int tensor, Value v) {
    Loop l;
    l.var = p.num_vars++;
    l.start = idx::constant(0);
    l.end = idx::dim(0, 0);
    auto here = [&](const Index& e) {
      return rewrite(e, [&](const Index& leaf) -> Index {
        return leaf->kind == IndexKind::Var && leaf->var == -1 ? idx::var(l.var) : nullptr;
      });
    };
    Stmt s;
    s.tensor = tensor;
    s.index = {idx::var(l.var)};
    s.value = rewrite(v, nullptr, here);
    l.stmts = {s};
    p.blocks.push_back({{l}, "test"});
  }
  Value at(int tensor, int64_t shift = 0) {
    return val::load(tensor, {idx::add(idx::var(-1), idx::constant(shift))});
  }
};

Value exp_of(const Value& v) {
  return val::unary(UnaryOp::exp, v);
}

TEST(StorageReuse, ExpensiveTemporaryReadTwiceMoves) {
  Vector v(exp_of(val::load(0, {idx::var(-1)})));
  v.add(v.z, v.at(v.t));
  v.add(v.y, val::binary(BinaryOp::mul, v.at(v.t), v.at(v.x)));
  ASSERT_TRUE(verify(v.p).empty()) << print(v.p);
  Program q = reuse_storage(v.p);
  EXPECT_EQ(accesses_of(q, "t"), 0) << print(q);
  expect_bitwise(v.p, q, {{"x", ramp(DType::f32, {6})}});
}

// A gradient's dy * (t * (1 - t)) comes as a chain of temporaries: t moves into the temporary
// its last reader writes, and from there on into the output, so no full-size temporary is left.
TEST(StorageReuse, ChainOfTemporariesEndsInTheOutput) {
  Vector v(exp_of(val::load(0, {idx::var(-1)})));
  int u = int(v.p.tensors.size());
  v.p.tensors.push_back({"u", DType::f32, {idx::dim(0, 0)}, Role::temporary});
  v.add(v.z, v.at(v.t));
  v.add(u, val::binary(BinaryOp::mul, v.at(v.t), v.at(v.x)));
  v.add(v.y, val::binary(BinaryOp::add, v.at(u), v.at(v.x)));
  ASSERT_TRUE(verify(v.p).empty()) << print(v.p);
  Program q = reuse_storage(v.p);
  EXPECT_EQ(accesses_of(q, "t"), 0) << print(q);
  EXPECT_EQ(accesses_of(q, "u"), 0) << print(q);
  expect_bitwise(v.p, q, {{"x", ramp(DType::f32, {6})}});
}

TEST(StorageReuse, CheapOrOnceReadTemporaryStays) {
  Vector cheap(val::binary(BinaryOp::mul, val::load(0, {idx::var(-1)}), val::constant(2)));
  cheap.add(cheap.z, cheap.at(cheap.t));
  cheap.add(cheap.y, cheap.at(cheap.t));
  EXPECT_EQ(print(reuse_storage(cheap.p)), print(cheap.p));
  Vector once(exp_of(val::load(0, {idx::var(-1)})));
  once.add(once.y, once.at(once.t));
  EXPECT_EQ(print(reuse_storage(once.p)), print(once.p));
}

// z reads y (still zero) between t's write and the statement that writes y: in y's storage, t
// would show through.
TEST(StorageReuse, OutputReadBeforeStays) {
  Vector v(exp_of(val::load(0, {idx::var(-1)})));
  v.add(v.z, val::binary(BinaryOp::add, v.at(v.t), v.at(v.y)));
  v.add(v.y, v.at(v.t));
  ASSERT_TRUE(verify(v.p).empty()) << print(v.p);
  EXPECT_EQ(print(reuse_storage(v.p)), print(v.p));
}

// y[i] = t[i] + t[i - 1]: in place, t[i - 1] would already be overwritten.
TEST(StorageReuse, ShiftedReadStays) {
  Vector v(exp_of(val::load(0, {idx::var(-1)})));
  v.add(v.z, v.at(v.t));
  v.add(v.y, val::binary(BinaryOp::add, v.at(v.t), v.at(v.t, -1)));
  ASSERT_TRUE(verify(v.p).empty()) << print(v.p);
  EXPECT_EQ(print(reuse_storage(v.p)), print(v.p));
}

// The random-program differential test (differential_test.cpp) only judges this pass if some of
// its programs change.
TEST(StorageReuse, RandomProgramsExerciseIt) {
  int changed = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    o.smooth = seed % 5 == 0;
    o.max_nodes = 6 + int(seed % 11);
    Program p = lower(random_case(seed, o).graph);
    changed += print(reuse_storage(p)) != print(p);
  }
  EXPECT_GT(changed, 20) << changed;
}

// An elementwise op's gradient needs no temporary: where a chain moved into the output would
// overwrite a value that a side branch of the chain reads later, the chain's head stays, and
// substitution folds the whole gradient into one statement (gelu's kept three of x's size, each
// a stream of writes: its backward ran 2x slower).
TEST(StorageReuse, ElementwiseGradientsKeepNoTemporary) {
  for (const char* op : {"add", "sub", "mul", "div", "max", "min", "relu", "sigmoid", "tanh", "exp",
                         "log", "gelu"}) {
    Program p = optimize(gradient_program(find_op(op), DType::f32));
    for (const TensorInfo& t : p.tensors)
      EXPECT_NE(t.role, Role::temporary) << op << "\n" << print(p);
  }
}

}  // namespace
}  // namespace uops
