// Train a 2-layer MLP (linear -> relu -> linear -> cross_entropy) with generated C kernels
// scheduled by the runtime on two CPU streams, and check every step's loss against the same
// steps run one by one by the interpreter.
//
// Every op, gradient and update is a uop program; a ChainStep binds its tensors to named
// buffers ("h", "dlogits", "dw1"...), and the runtime orders the programs' blocks through
// the buffers they share. Writes a Chrome trace and the schedule as DOT of the last step to
// the directory given as the first argument (default: the current one). Where a CUDA device
// exists, trains once more with the same steps as CUDA kernels on the CUDA executor (the glue's
// CUDA sibling, captured as a CUDA graph) and checks that loss trajectory too.
//
//   train_mlp [OUT_DIR]      exit status 0 when the trajectories agree and the loss decreases
#include <uops/backends/cuda_runtime_nodes.h>
#include <uops/runtime.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "mlp_model.h"

using namespace uops;
using namespace uops::mlp;

int main(int argc, char** argv) {
  std::string out_dir = argc > 1 ? argv[1] : ".";
  std::vector<ChainStep> steps = training_step();

  // All blocks of all steps: one compiler call. The nodes keep the kernels and buffers alive.
  ChainNodes nodes(steps, initial_buffers());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  std::printf("%zu nodes on %zu streams\n", executor.graph().size(),
              executor.graph().schedule().streams.size());

  TensorMap reference = initial_buffers();
  bool ok = true;
  double previous = INFINITY;
  for (int s = 0; s < kSteps; ++s) {
    runtime::Trace trace;
    executor.run(&trace);
    interpret_chain(steps, reference);
    double loss = nodes.read("loss").get(0), expected = reference.at("loss").get(0);
    // Reassociated sums (CCompileOptions::reassociate) may round differently from the
    // interpreter's order, hence a relative tolerance rather than equality.
    double difference = std::abs(loss - expected) / std::abs(expected);
    std::printf("step %d  loss %.12f  interpreter %.12f  relative difference %.1e\n", s, loss,
                expected, difference);
    ok &= difference <= 1e-9 && loss < previous;
    previous = loss;
    if (s == kSteps - 1) {
      runtime::write_chrome_json(trace, out_dir + "/train_mlp_trace.json");
      runtime::write_dot(executor.graph(), out_dir + "/train_mlp_schedule.dot");
    }
  }

  std::string why = cuda_unavailable_reason();
  if (why.empty() && !runtime::CudaExecutor::available()) why = "no CUDA device";
  if (!why.empty()) {
    std::printf("CUDA glue: skipped (%s)\n", why.c_str());
  } else {
    CudaChainNodes cuda_nodes(steps, initial_buffers());
    runtime::GraphBuilder cuda_builder;
    cuda_nodes.add_to(cuda_builder);
    runtime::CudaExecutor cuda_executor(std::move(cuda_builder).build({2}), {0, true});
    TensorMap cuda_reference = initial_buffers();
    previous = INFINITY;
    for (int s = 0; s < kSteps; ++s) {
      cuda_executor.run();
      interpret_chain(steps, cuda_reference);
      double loss = cuda_nodes.read("loss").get(0), expected = cuda_reference.at("loss").get(0);
      double difference = std::abs(loss - expected) / std::abs(expected);
      std::printf("CUDA step %d  loss %.12f  interpreter %.12f  relative difference %.1e\n", s,
                  loss, expected, difference);
      ok &= difference <= 1e-9 && loss < previous;
      previous = loss;
    }
  }
  std::printf("%s\n", ok ? "ok" : "MISMATCH or loss not decreasing");
  return ok ? 0 : 1;
}
