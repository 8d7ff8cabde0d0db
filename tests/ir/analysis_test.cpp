// The facts of include/uops/ir/analysis.h and the one meaning of may_raise, which passes,
// backends and autodiff all read.
#include "uops/ir/analysis.h"

#include <gtest/gtest.h>

#include "uops/ir.h"
#include "uops/passes/bounds_check.h"

namespace uops {

using namespace ir;
namespace {

TEST(MayRaise, OnlyADivisorOtherThanAPositiveConstantRaises) {
  Index v = idx::var(0), p = idx::param("p");
  EXPECT_FALSE(may_raise(idx::floordiv(v, idx::constant(2))));
  EXPECT_FALSE(may_raise(idx::floormod(v, idx::constant(3))));
  EXPECT_FALSE(may_raise(idx::data(1, {v})));  // a data read outside its tensor reads 0
  EXPECT_TRUE(may_raise(idx::floordiv(v, p)));
  EXPECT_TRUE(may_raise(idx::floormod(v, idx::constant(0))));
  EXPECT_TRUE(may_raise(idx::floordiv(v, idx::constant(-1))));  // INT64_MIN / -1 overflows
  EXPECT_TRUE(may_raise(idx::add(idx::data(1, {idx::floordiv(v, p)}), v)));  // inside data
  EXPECT_TRUE(may_raise(val::index(idx::floormod(v, p))));
}

// y[v] = x[e] with fill 5, over v in [0, x.0).
Program load_program(const Index& e) {
  Program p;
  p.params = {"p"};
  p.tensors.push_back({"x", DType::f32, {idx::dim(0, 0)}, Role::input});
  p.tensors.push_back({"y", DType::f32, {idx::dim(0, 0)}, Role::output});
  Stmt s;
  s.tensor = 1;
  s.index = {idx::var(0)};
  s.value = val::load(0, {e}, 5.0);
  p.blocks.push_back({{Loop{0, idx::constant(0), idx::dim(0, 0), {}, {s}}}, "test"});
  p.num_vars = 1;
  return p;
}

// bounds_check once kept every load whose index divides or reads data; a division by a positive
// constant cannot raise, so a load proven outside becomes its fill like any other.
TEST(MayRaise, BoundsCheckFoldsALoadProvenOutsideUnlessItsIndexMayRaise) {
  Index v = idx::var(0);
  Program safe = eliminate_bounds_checks(
      load_program(idx::sub(idx::floormod(v, idx::constant(2)), idx::constant(3))));
  EXPECT_EQ(safe.blocks[0].loops[0].stmts[0].value->kind, ValueKind::Const) << print(safe);
  Program raising = eliminate_bounds_checks(load_program(
      idx::sub(idx::min(idx::floormod(v, idx::param("p")), idx::constant(0)), idx::constant(3))));
  EXPECT_EQ(raising.blocks[0].loops[0].stmts[0].value->kind, ValueKind::Load) << print(raising);
  Tensor x(DType::f32, {4});
  EXPECT_THROW(interpret(raising, {{"x", x}}, {{"p", 0}}), Error);
}

TEST(Accesses, ListsLoadsDataReadsAndStoresInOrder) {
  Program p = load_program(idx::data(2, {idx::var(0)}));
  p.tensors.push_back({"k", DType::i32, {idx::dim(0, 0)}, Role::input});
  std::vector<Access> as = block_accesses(p.blocks[0]);
  ASSERT_EQ(as.size(), 3u);
  EXPECT_EQ(as[0].tensor, 0);  // the load, then the data read in its index, then the store
  EXPECT_EQ(as[1].tensor, 2);
  EXPECT_TRUE(as[2].write && as[2].tensor == 1);
  TensorSets sets = tensor_sets(p.blocks[0], 3);
  EXPECT_EQ(sets.reads, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(sets.writes, (std::vector<bool>{false, true, false}));
}

TEST(Renumbering, RewritesEveryReferenceAndDropsTheRest) {
  Program p = load_program(idx::data(3, {idx::floordiv(idx::var(0), idx::dim(0, 0))}));
  p.tensors.insert(p.tensors.begin() + 1,
                   {"unused", DType::f32, {idx::dim(0, 0)}, Role::temporary});
  p.tensors.push_back({"k", DType::i32, {idx::dim(3, 0)}, Role::input});
  p.blocks[0].loops[0].stmts[0].tensor = 2;
  EXPECT_EQ(verify(p), std::vector<std::string>{}) << print(p);
  renumber_tensors(p, {0, -1, 1, 2});
  EXPECT_EQ(verify(p), std::vector<std::string>{}) << print(p);
  ASSERT_EQ(p.tensors.size(), 3u);
  EXPECT_EQ(p.tensors[2].name, "k");
  EXPECT_EQ(index_text(p, p.blocks[0].loops[0].stmts[0].value->index[0]), "k[v0 / x.0]");
  EXPECT_EQ(p.blocks[0].loops[0].stmts[0].tensor, 1);
}

}  // namespace
}  // namespace uops
