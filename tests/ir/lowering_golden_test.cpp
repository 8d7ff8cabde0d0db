// Golden text of lowered programs: any change to lowering or to the printer shows here. When a
// change is intended, read the new text carefully and paste it in.
#include <gtest/gtest.h>

#include "support/example_graphs.h"
#include "uops/ir.h"

namespace uops {

using namespace ir;

namespace {

// clang-format off
const char* const kMatmul = R"(tensor a f32 [a.0, a.1] input
tensor b f32 [b.0, b.1] input
tensor t2 f32 [a.0, b.1, a.1] temp
tensor t3 f32 [a.0, b.1, a.1] temp
tensor t4 f32 [a.0, b.1, a.1] temp
tensor t5 f32 [a.0, b.1, 1] temp
tensor c f32 [a.0, b.1] output
assert a.1 == b.0
block 0: reindex
  for v0 in [0, a.0):
    for v1 in [0, b.1):
      for v2 in [0, a.1):
        t2?[v0, v1, v2] = a?[v0, v2]
block 1: reindex
  for v3 in [0, a.0):
    for v4 in [0, b.1):
      for v5 in [0, a.1):
        t3?[v3, v4, v5] = b?[v5, v4]
block 2: mul
  for v6 in [0, a.0):
    for v7 in [0, b.1):
      for v8 in [0, a.1):
        t4?[v6, v7, v8] = (t2?[v6, v7, v8] * t3?[v6, v7, v8])
block 3: reduce sum
  for v9 in [0, a.0):
    for v10 in [0, b.1) carry c0 sum:
      for v11 in [0, a.1):
        c0 sum= t4?[v9, v10, v11]
      t5?[v9, v10, 0] = c0
block 4: reindex
  for v12 in [0, a.0):
    for v13 in [0, b.1):
      c?[v12, v13] = t5?[v12, v13, 0]
)";

const char* const kConv2d = R"(param $pad
tensor x f32 [x.0, x.1, x.2, x.3] input
tensor w f32 [w.0, w.1, w.2, w.3] input
tensor t2 f32 [x.0, x.1 + 2 * $pad - w.1 + 1, x.2 + 2 * $pad - w.2 + 1, w.0, w.1, w.2, x.3] temp
tensor t3 f32 [x.0, x.1 + 2 * $pad - w.1 + 1, x.2 + 2 * $pad - w.2 + 1, w.0, w.1, w.2, x.3] temp
tensor t4 f32 [x.0, x.1 + 2 * $pad - w.1 + 1, x.2 + 2 * $pad - w.2 + 1, w.0, w.1, w.2, x.3] temp
tensor t5 f32 [x.0, x.1 + 2 * $pad - w.1 + 1, x.2 + 2 * $pad - w.2 + 1, w.0, 1, 1, 1] temp
tensor y f32 [x.0, x.1 + 2 * $pad - w.1 + 1, x.2 + 2 * $pad - w.2 + 1, w.0] output
assert x.3 == w.3
block 0: reindex
  for v0 in [0, x.0):
    for v1 in [0, x.1 + 2 * $pad - w.1 + 1):
      for v2 in [0, x.2 + 2 * $pad - w.2 + 1):
        for v3 in [0, w.0):
          for v4 in [0, w.1):
            for v5 in [0, w.2):
              for v6 in [0, x.3):
                t2?[v0, v1, v2, v3, v4, v5, v6] = x?[v0, v1 + v4 - $pad, v2 + v5 - $pad, v6]
block 1: reindex
  for v7 in [0, x.0):
    for v8 in [0, x.1 + 2 * $pad - w.1 + 1):
      for v9 in [0, x.2 + 2 * $pad - w.2 + 1):
        for v10 in [0, w.0):
          for v11 in [0, w.1):
            for v12 in [0, w.2):
              for v13 in [0, x.3):
                t3?[v7, v8, v9, v10, v11, v12, v13] = w?[v10, v11, v12, v13]
block 2: mul
  for v14 in [0, x.0):
    for v15 in [0, x.1 + 2 * $pad - w.1 + 1):
      for v16 in [0, x.2 + 2 * $pad - w.2 + 1):
        for v17 in [0, w.0):
          for v18 in [0, w.1):
            for v19 in [0, w.2):
              for v20 in [0, x.3):
                t4?[v14, v15, v16, v17, v18, v19, v20] = (t2?[v14, v15, v16, v17, v18, v19, v20] * t3?[v14, v15, v16, v17, v18, v19, v20])
block 3: reduce sum
  for v21 in [0, x.0):
    for v22 in [0, x.1 + 2 * $pad - w.1 + 1):
      for v23 in [0, x.2 + 2 * $pad - w.2 + 1):
        for v24 in [0, w.0) carry c0 sum:
          for v25 in [0, w.1):
            for v26 in [0, w.2):
              for v27 in [0, x.3):
                c0 sum= t4?[v21, v22, v23, v24, v25, v26, v27]
          t5?[v21, v22, v23, v24, 0, 0, 0] = c0
block 4: reindex
  for v28 in [0, x.0):
    for v29 in [0, x.1 + 2 * $pad - w.1 + 1):
      for v30 in [0, x.2 + 2 * $pad - w.2 + 1):
        for v31 in [0, w.0):
          y?[v28, v29, v30, v31] = t5?[v28, v29, v30, v31, 0, 0, 0]
)";
// clang-format on

TEST(LoweringGolden, Matmul) {
  Graph g;
  testing::build_matmul(g);
  EXPECT_EQ(print(lower(g)), kMatmul);
}

TEST(LoweringGolden, PaddedConv2d) {
  Graph g;
  testing::build_conv2d(g);
  EXPECT_EQ(print(lower(g)), kConv2d);
}

}  // namespace
}  // namespace uops
