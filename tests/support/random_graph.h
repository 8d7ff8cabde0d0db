// Random uop graphs with matching inputs, for differential tests: every pass, backend and
// gradient is compared against the interpreter on thousands of these.
//
// A case has 1-3 float inputs of rank 0-4 and small sizes, then a random mix of reindexes
// (transposes, broadcasts, slices, shifts with padding and a fill value, flips, axis merges
// with / and %), elementwise chains, reductions, ternaries, selects (i32 index inputs whose
// values fall in and out of range), index values (iota) and casts, with tensors used several
// times and 1-3 outputs. The same seed and options always give the same case.
#pragma once

#include <cstdint>

#include "uops/ir/graph.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"

namespace uops {

struct RandomGraphOptions {
  DType dtype = DType::f32;  // f32 or f64: the float type of every float tensor
  int max_nodes = 12;        // non-input nodes, at most
  int max_rank = 4;
  int max_size = 4;             // per input axis
  bool selects = true;          // select uops with i32 index inputs
  bool arg_reductions = true;   // argmax/argmin, giving i32 outputs
  bool i32_inputs = true;       // i32 index inputs (selects need them)
  bool params = true;           // reindexes shifted by an integer parameter
  bool iotas_and_casts = true;  // off: the graphs of seeds found before these nodes existed
  // Sometimes an extra output "empty" with a zero-size axis, read at an index that divides by
  // a parameter $z = 0: nothing may raise, since its loops never run.
  bool empty_raising = false;
  // Sometimes a reindex whose index divides by (iK - $q), $q drawn so that one element (any
  // thread's, any block's) or none raises: a backend must report an error wherever it happens.
  bool raising_element = false;
  // Contractions with a new weight input: y[..., j] = sum over x's last axis k of x[..., k] *
  // w[j, k] (w read transposed, as linear and conv2d read their weights) or x[..., k] * w[k, j],
  // sometimes with x shifted so that some reads fall outside and fill (the tiling passes and
  // their bounds guards). Off: the graphs of seeds found before these nodes existed.
  bool contractions = false;
  // Off: no floor, comparisons, ternaries or casts through i32, whose outputs jump where an
  // input moves by an ulp (a check that allows last-bit differences upstream needs it off, with
  // arg_reductions).
  bool jumps = true;
  // For gradient checks: no floor, comparisons, max/min, ternaries or arg-reductions; log,
  // sqrt, rsqrt, recip, div and pow only on values known positive; inputs in [0.5, 1.5].
  bool smooth = false;
};

struct RandomCase {
  Graph graph;
  TensorMap inputs;
  ParamMap params;
};

RandomCase random_case(uint64_t seed, const RandomGraphOptions& options = {});

// `p` with some loops cut short by one iteration at either end, so that their blocks write part
// of a tensor
// (the rest keeps its initial zero) and reduce part of a range: what a backend's zero-fill
// decision and a pass's range reasoning must see through. The same seed gives the same cuts.
ir::Program with_partial_loops(ir::Program p, uint64_t seed);

}  // namespace uops
