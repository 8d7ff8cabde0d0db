// Storage reuse: a temporary t that holds an expensive function (a transcendental, or pow) and
// is read by several statements lives in the storage of the output it finally feeds, so that it
// is neither kept as a full-size temporary nor recomputed at each read. Runs before fusion and
// substitution, which then build softmax as max, exp-and-sum into y, y /= sum. A temporary that
// took t's storage moves on the same way along its own last reader (one read is enough then), so
// a chain of temporaries, as gradient graphs lower to (dy * (t * (1 - t))), ends in the output.
// A temporary keeps its storage where another temporary computed from it (transitively, before
// its last reader) is read after that reader: the overwrite would keep substitution from folding
// that one in, and it would stay a full-size temporary (gelu's gradient kept three).
//
// Renaming t to y is exact when: t's last access is a statement S `y[idx] = f(t[idx], ...)` in the
// same loop as every access of t in S's block, all at idx, which tells apart the iterations of
// every loop up to S's (so S reads each element of t before overwriting it, once); y has t's
// dtype and shape, is no input, and nothing before S touches y (both start zero-filled, and t
// is dead after S).
#pragma once

#include "uops/ir/program.h"

namespace uops {

Program reuse_storage(Program p);

}  // namespace uops
