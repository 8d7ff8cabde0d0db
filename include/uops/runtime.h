// The scheduled graph runtime: build a graph of kernels with declared buffer accesses, then run
// its static multi-stream schedule on the CPU or a CUDA device.
#pragma once

#include "uops/runtime/builder.h"
#include "uops/runtime/context.h"
#include "uops/runtime/control_flow.h"
#include "uops/runtime/cpu_executor.h"
#include "uops/runtime/cuda_context.h"
#include "uops/runtime/cuda_executor.h"
#include "uops/runtime/devices.h"
#include "uops/runtime/error.h"
#include "uops/runtime/graph.h"
#include "uops/runtime/placement.h"
#include "uops/runtime/schedule.h"
#include "uops/runtime/trace.h"
