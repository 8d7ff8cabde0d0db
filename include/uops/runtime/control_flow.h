// Control flow in built graphs: a `while` or `case` node holds sub-graphs and decides at run
// time, from a buffer, which to run and how often (NNC's while and case..of). The result is an
// ordinary Node for GraphBuilder::add: its accesses are the condition (or selector) buffer
// plus everything its sub-graphs access, so the enclosing graph orders it like any kernel.
// A sub-graph runs on its own executor (its own schedule and streams; on the CPU the thread
// running the node serves as its stream 0), created once with the node and reused on every run.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "uops/runtime/cpu_executor.h"
#include "uops/runtime/cuda_executor.h"
#include "uops/runtime/graph.h"

namespace uops::runtime {

// Runs `body` as long as keep_going() (which reads `condition`) returns true, checked before
// every iteration; at most max_iterations times, after which the node fails with Error.
Node while_node(std::string name, BufferId condition, std::function<bool()> keep_going, Graph body,
                std::size_t max_iterations, CpuExecutorOptions options = {});

// Runs branches[select()] (select reads `selector`); an index out of range fails with Error.
Node case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
               std::vector<Graph> branches, CpuExecutorOptions options = {});

// The same nodes for CudaExecutor, by host-side evaluation: the node's CUDA kernel
// synchronizes the stream it is given (so everything ordered before the node has finished),
// then evaluates the condition on the host (which may read device memory) and runs the
// sub-graph on its own CudaExecutor to completion, as often as it says. The enqueueing thread
// blocks meanwhile, and an enclosing executor with use_cuda_graph fails (a capture cannot
// synchronize). Throws Error without a CUDA device.
Node cuda_while_node(std::string name, BufferId condition, std::function<bool()> keep_going,
                     Graph body, std::size_t max_iterations, CudaOptions options = {});
Node cuda_case_node(std::string name, BufferId selector, std::function<std::size_t()> select,
                    std::vector<Graph> branches, CudaOptions options = {});

}  // namespace uops::runtime
