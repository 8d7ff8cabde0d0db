// Input validation before a run (include/uops/ir/binding.h): every mistake is a uops::Error with
// a clear message, raised by interpret() and by an Executable before anything is returned.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/tensors.h"
#include "uops/uops.h"

namespace uops {

using namespace ir;

namespace {

using testing::f32;
using testing::f64;

// z[i, j] = x[i, j] + y[i, j - $shift], x and y asserted to have equal shapes.
Program program() {
  Graph g;
  g.param("shift");
  Node x = g.input("x", 2, DType::f32), y = g.input("y", 2, DType::f32);
  Node ys = g.reindex(y, {"dA0[=dB0]", "dA1[=dB1]"}, {"i0", "i1 - $shift"}, {x, y});
  g.output("z", g.binary(BinaryOp::add, x, ys));
  return lower(g);
}

std::string error_of(const TensorMap& inputs, const ParamMap& params) {
  Program p = program();
  std::string first;
  try {
    interpret(p, inputs, params);
    return "(no error)";
  } catch (const Error& e) {
    first = e.what();
  }
  try {
    make_interpreter(p)->run(inputs, params);
    return "(no error from the executable)";
  } catch (const Error& e) {
    EXPECT_EQ(first, e.what());
  }
  return first;
}

TensorMap good_inputs() {
  return {{"x", f32({2, 2}, {1, 2, 3, 4})}, {"y", f32({2, 2}, {10, 20, 30, 40})}};
}

// Tensors' bytes start on a cache line, so kernels' vector loads never straddle two (large
// blocks from plain new start 16 bytes into a page).
TEST(Binding, TensorBytesAreCacheLineAligned) {
  for (int64_t n : {1, 100, 1 << 20}) {
    Tensor t(DType::f32, {n});
    Tensor u = Tensor::uninitialized(DType::f64, {n});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.bytes.data()) % 64, 0u) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(u.bytes.data()) % 64, 0u) << n;
    Tensor copy = t;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.bytes.data()) % 64, 0u) << n;
  }
}

TEST(Binding, ValidInputsRun) {
  TensorMap out = interpret(program(), good_inputs(), {{"shift", 1}});
  EXPECT_EQ(testing::values(out.at("z")), (std::vector<double>{1, 12, 3, 34}));
}

TEST(Binding, MissingInput) {
  TensorMap in = good_inputs();
  in.erase("y");
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "missing input 'y'");
}

TEST(Binding, UnknownInput) {
  TensorMap in = good_inputs();
  in["w"] = f32({1}, {0});
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "unknown input 'w' (inputs are x, y)");
  TensorMap out_name = good_inputs();
  out_name["z"] = f32({2, 2}, {0, 0, 0, 0});
  EXPECT_EQ(error_of(out_name, {{"shift", 0}}), "unknown input 'z' (inputs are x, y)");
}

TEST(Binding, WrongDtype) {
  TensorMap in = good_inputs();
  in["x"] = f64({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "input 'x' has dtype f64, expected f32");
}

TEST(Binding, WrongRank) {
  TensorMap in = good_inputs();
  in["y"] = f32({4}, {1, 2, 3, 4});
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "input 'y' has rank 1 (shape [4]), expected rank 2");
}

TEST(Binding, WrongByteSize) {
  TensorMap in = good_inputs();
  in["x"].bytes.resize(12);
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "input 'x' holds 12 bytes, but shape [2, 2] needs 16");
}

TEST(Binding, MissingAndUnknownParams) {
  EXPECT_EQ(error_of(good_inputs(), {}), "missing parameter 'shift'");
  EXPECT_EQ(error_of(good_inputs(), {{"shift", 0}, {"pad", 1}}),
            "unknown parameter 'pad' (parameters are shift)");
}

TEST(Binding, BrokenEqualAssertionNamesBothAxesAndSizes) {
  TensorMap in = good_inputs();
  in["y"] = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "equal assertion failed: x.1 = 2 but y.1 = 3");
  in["y"] = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(error_of(in, {{"shift", 0}}), "equal assertion failed: x.0 = 2 but y.0 = 3");
}

TEST(Binding, NegativeShape) {
  Graph g;
  g.param("n");
  Node x = g.input("x", 1, DType::f32);
  g.output("y", g.reindex(x, {"dA0 - $n"}, {"i0"}));
  Program p = lower(g);
  EXPECT_EQ(interpret(p, {{"x", f32({3}, {1, 2, 3})}}, {{"n", 3}}).at("y").numel(), 0);
  try {
    interpret(p, {{"x", f32({3}, {1, 2, 3})}}, {{"n", 4}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "tensor 'y' would have size -1 on axis 0 (x.0 - $n)");
  }
  Tensor bad;
  bad.shape = {-2};
  EXPECT_THROW(interpret(p, {{"x", bad}}, {{"n", 0}}), Error);
  EXPECT_THROW(Tensor(DType::f32, {2, -1}), Error);
}

}  // namespace
}  // namespace uops
