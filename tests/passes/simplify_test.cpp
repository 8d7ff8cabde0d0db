// Simplification (passes/simplify): constants fold in the program's value type, only identities
// that hold for every input are used, and no value changes: each case runs on the interpreter
// before and after, on inputs that include -0, infinities and NaN, and must match bit for bit.
#include "uops/passes/simplify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "support/loop_programs.h"
#include "support/random_graph.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/variable_substitution.h"

namespace uops {

using namespace ir;
using namespace testing;

namespace {

Value x() {
  return val::load(0, {V()});
}

// y[i] = body over x [N] of `dtype`, one block.
Program elementwise(DType dtype, Value body) {
  Program p = vector_program({{"y", Role::output}}, dtype);
  p.blocks.push_back(vector_block(p, "body", {assign(1, {V()}, std::move(body))}));
  EXPECT_TRUE(verify(p).empty()) << print(p);
  return p;
}

// What y[i] = ... computes, as the printer shows it.
std::string body_text(const Program& p) {
  return print(p, p.blocks[0].loops[0].stmts[0].value);
}

const Value& body(const Program& p) {
  return p.blocks[0].loops[0].stmts[0].value;
}

// x: -0, 0, -1.5, 2, inf, -inf, NaN, the largest finite value.
Tensor special(DType dtype) {
  double big = dtype == DType::f32 ? double(std::numeric_limits<float>::max())
                                   : std::numeric_limits<double>::max();
  std::vector<double> v{-0.0, 0.0, -1.5, 2.0, INFINITY, -INFINITY, NAN, big};
  Tensor t(dtype, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set(int64_t(i), v[i]);
  return t;
}

// Both programs give the same bits (NaN matching NaN) on `in`.
void expect_same_bits(const Program& p, const Program& q, const TensorMap& in,
                      const ParamMap& params = {}) {
  TensorMap a = interpret(p, in, params), b = interpret(q, in, params);
  ASSERT_EQ(a.size(), b.size());
  for (auto& [name, t] : a) {
    const Tensor& u = b.at(name);
    ASSERT_EQ(t.shape, u.shape) << name;
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = t.get(i), w = u.get(i);
      if (std::isnan(v) && std::isnan(w)) continue;
      EXPECT_EQ(std::memcmp(&v, &w, sizeof v), 0) << name << "[" << i << "]: " << v << " vs " << w;
    }
  }
}

// Simplifies y = body and checks the result on the special inputs.
Program simplified(DType dtype, Value v) {
  Program p = elementwise(dtype, std::move(v));
  Program q = simplify(p);
  EXPECT_TRUE(verify(q).empty()) << print(q);
  expect_same_bits(p, q, {{"x", special(dtype)}});
  return q;
}

TEST(Simplify, FoldsConstantsInTheProgramsValueType) {
  Value sum = val::binary(BinaryOp::add, val::constant(0.1), val::constant(0.2));
  Program f32 = simplified(DType::f32, val::binary(BinaryOp::mul, x(), sum));
  ASSERT_EQ(body(f32)->kind, ValueKind::Binary) << body_text(f32);
  ASSERT_EQ(body(f32)->b->kind, ValueKind::Const) << body_text(f32);
  // In float, 0.1f + 0.2f, not the double sum rounded afterwards.
  EXPECT_EQ(body(f32)->b->constant, double(0.1f + 0.2f));
  EXPECT_NE(body(f32)->b->constant, 0.1 + 0.2);
  Program f64 = simplified(DType::f64, val::binary(BinaryOp::mul, x(), sum));
  EXPECT_EQ(body(f64)->b->constant, 0.1 + 0.2);

  Program e = simplified(
      DType::f32, val::binary(BinaryOp::add, x(), val::unary(UnaryOp::exp, val::constant(1))));
  ASSERT_EQ(body(e)->b->kind, ValueKind::Const) << body_text(e);
  EXPECT_EQ(body(e)->b->constant, double(std::exp(1.0f)));
  // An index expression used as a value is a constant once it has no leaves left.
  Program i = simplified(DType::f64, val::binary(BinaryOp::add, x(), val::index(idx::constant(3))));
  EXPECT_EQ(body_text(i), "(x?[v0] + 3)");
}

TEST(Simplify, DropsIdentitiesThatHoldForEveryInput) {
  for (DType t : {DType::f32, DType::f64}) {
    for (Value v :
         {val::binary(BinaryOp::mul, x(), val::constant(1)),
          val::binary(BinaryOp::mul, val::constant(1), x()),
          val::binary(BinaryOp::div, x(), val::constant(1)),
          val::binary(BinaryOp::sub, x(), val::constant(0)),
          val::unary(UnaryOp::neg, val::unary(UnaryOp::neg, x())),
          val::ternary(val::constant(2), x(), val::constant(5)),
          val::ternary(val::constant(0), val::constant(5), x()), val::ternary(x(), x(), x())}) {
      Program q = simplified(t, v);
      EXPECT_EQ(body_text(q), "x?[v0]") << dtype_name(t);
    }
  }
}

TEST(Simplify, KeepsIdentitiesThatChangeSomeValues) {
  // x + 0 turns -0 into +0; x * 0 is NaN for infinities and NaN and -0 for negatives; 0 - x is
  // not -x at 0; x / x is not 1 at 0, infinities or NaN.
  for (DType t : {DType::f32, DType::f64}) {
    for (Value v : {val::binary(BinaryOp::add, x(), val::constant(0)),
                    val::binary(BinaryOp::add, val::constant(0), x()),
                    val::binary(BinaryOp::mul, x(), val::constant(0)),
                    val::binary(BinaryOp::sub, val::constant(0), x()),
                    val::binary(BinaryOp::div, x(), x())}) {
      Program p = elementwise(t, v);
      Program q = simplified(t, v);
      EXPECT_EQ(body_text(q), body_text(p)) << dtype_name(t);
    }
  }
}

// Loops fused and temporaries substituted leave expressions full of constants and identities:
// simplified, every random program computes exactly what it did.
TEST(Simplify, RandomProgramsKeepTheirValues) {
  int changed = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    RandomGraphOptions o;
    o.dtype = seed % 2 ? DType::f64 : DType::f32;
    o.max_nodes = 4 + int(seed % 9);
    RandomCase c = random_case(seed, o);
    Program p = substitute_variables(fuse_loops(lower(c.graph)));
    Program q = simplify(p);
    ASSERT_TRUE(verify(q).empty()) << "seed " << seed << "\n" << print(q);
    changed += print(q) != print(p);
    SCOPED_TRACE("seed " + std::to_string(seed));
    expect_same_bits(p, q, c.inputs, c.params);
  }
  EXPECT_GT(changed, 20);  // the cases above are not all left alone
}

}  // namespace
}  // namespace uops
