// The IR-level API, for work on programs themselves rather than on ops: the loop-block IR and its
// index and value expressions, scalar semantics, the printer, the verifier and binding (all in
// namespace uops::ir, where names as generic as print, equal, rewrite, evaluate, bind and verify
// belong), the index-expression parser, and each optimization pass on its own with the size
// figures uopc reports. Includes uops.h.
#pragma once

#include "uops/ir/analysis.h"
#include "uops/ir/binding.h"
#include "uops/ir/printer.h"
#include "uops/ir/program.h"
#include "uops/ir/scalar_semantics.h"
#include "uops/ir/value_expr.h"
#include "uops/ir/verifier.h"
#include "uops/parser/index_expr.h"
#include "uops/parser/parser.h"
#include "uops/passes/accumulator_promotion.h"
#include "uops/passes/bounds_check.h"
#include "uops/passes/copy_tiling.h"
#include "uops/passes/dead_code.h"
#include "uops/passes/dot_tiling.h"
#include "uops/passes/empty_range_tests.h"
#include "uops/passes/loop_fusion.h"
#include "uops/passes/loop_order.h"
#include "uops/passes/parallel_loops.h"
#include "uops/passes/pipeline.h"
#include "uops/passes/reduction_tiling.h"
#include "uops/passes/register_tiles.h"
#include "uops/passes/row_local_runs.h"
#include "uops/passes/simd_reductions.h"
#include "uops/passes/simplify.h"
#include "uops/passes/stats.h"
#include "uops/passes/storage_reuse.h"
#include "uops/passes/variable_substitution.h"
#include "uops/uops.h"
