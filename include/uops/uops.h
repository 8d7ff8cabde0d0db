// The whole user-facing API of uops.
#pragma once

#include "uops/autodiff/gradient.h"
#include "uops/backends/executable.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/dtype.h"
#include "uops/ir/graph.h"
#include "uops/ir/index_expr.h"
#include "uops/ir/lower.h"
#include "uops/ir/ops.h"
#include "uops/ir/printer.h"
#include "uops/ir/program.h"
#include "uops/ir/tensor.h"
#include "uops/ir/value_expr.h"
#include "uops/ir/verifier.h"
#include "uops/parser/parser.h"
