// The C backend's window gathers, decided on the program before plan_cpu's tilings. A sum
// scattered through a window of stride 1, as autodiff writes a depthwise convolution's input
// gradient,
//   dx?[n, oh - p + kh, ow - p + kw, c] sum= dy[n, oh, ow, c] * w[kh, kw, c]
// over n, oh, ow, kh, kw, c, loads and stores an element of dx for each multiply-add. It becomes
// the same sum gathered, each element of dx taking the terms of the window positions that reach
// it, i and j counting those positions (a window of K):
//   dx[n, h, x, c] sum= dy[n, h + p - (K-1) + i, x + p - (K-1) + j, c] * w[K-1 - i, K-1 - j, c]
// over n, h, x, i, j, c: a forward convolution's shape, which tile_registers keeps in register
// tiles of dx across the window (the whole gradient at 8 x 56 x 56 x 128, 3 x 3, a C driver:
// 3.2 -> 2.5-2.6 ms at one thread, 1.7 -> 1.4 at two; docs/cpu-kernels.md, Window gathers).
// The rows and columns where some window position falls outside the scatter's loops (the
// image's border) run as blocks of their own after it, whose window loops' bounds skip those
// positions: a term the scatter never formed is not formed (a fill read in its place would turn
// 0 * inf into NaN). Where the elements held +0, those blocks sum each element in a scalar.
//
// Applies to a block whose one statement, in its innermost loop, sums into a tensor it does not
// read, at an index each of whose axes is a loop variable, an expression u + v + e (u and v loop
// variables, e free of loop variables, parameters fixed by fix_params counted as constants: the
// window of stride and dilation 1), or free of loop variables, where each loop variable appears
// on one axis only, some axis is a window's, nothing may raise or reads data, no loop carries a
// scalar and no bound uses a loop variable. Each element receives the same terms in the same
// order (the scatter's loop order: ascending in the window pair's outer loop), so the result is
// the same bit for bit, with or without reassociation. Windows of other strides (the pools', at
// stride 2) keep their scatters.
#pragma once

#include "uops/ir/program.h"

namespace uops::cgen {

ir::Program gather_windows(ir::Program p);

}  // namespace uops::cgen
