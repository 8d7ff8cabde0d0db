// The CUDA glue and device buffers on a real device, under the CUDA executor: the chains and
// the MLP's training steps of the emulated tests (cuda_runtime_nodes_test.cpp), plain and
// captured as a CUDA graph. Skips, saying why, where this build has no NVRTC or the machine no
// device.
#include <gtest/gtest.h>

#include "scheduled/cuda_glue_cases.h"
#include "uops/backends/cuda/cuda_backend.h"
#include "uops/backends/cuda_runtime_nodes.h"
#include "uops/backends/interpreter.h"
#include "uops/runtime.h"

namespace uops {
namespace {

using namespace testing::glue;

std::string no_device() {
  if (std::string why = cuda_unavailable_reason(); !why.empty()) return why;
  if (!runtime::CudaExecutor::available()) return "the CUDA executor finds no device";
  return "";
}

runtime::CudaExecutor executor_for(const CudaChainNodes& nodes, bool graph) {
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  return runtime::CudaExecutor(std::move(builder).build({2}), {0, graph});
}

TEST(CudaGlueOnDevice, ChainsMatchInterpreterPlainAndAsCudaGraph) {
  if (std::string why = no_device(); !why.empty()) GTEST_SKIP() << why;
  for (const char* op : {"softmax", "conv2d", "gather"})
    for (bool graph : {false, true}) {
      SCOPED_TRACE(std::string(op) + (graph ? " as a CUDA graph" : ""));
      ChainCase c = chain_case(op);
      TensorMap reference = c.inputs;
      interpret_chain(c.steps, reference);
      CudaChainNodes nodes(c.steps, c.inputs);
      runtime::CudaExecutor executor = executor_for(nodes, graph);
      for (int run = 0; run < 2; ++run) {
        executor.run();
        for (auto& [name, tensor] : reference) expect_close(tensor, nodes.read(name), name);
      }
    }
}

TEST(CudaGlueOnDevice, MlpLossesMatchInterpreter) {
  if (std::string why = no_device(); !why.empty()) GTEST_SKIP() << why;
  std::vector<double> expected = mlp_losses();
  for (bool graph : {false, true}) {
    CudaChainNodes nodes(mlp::training_step(), mlp::initial_buffers());
    runtime::CudaExecutor executor = executor_for(nodes, graph);
    for (int s = 0; s < mlp::kSteps; ++s) {
      executor.run();
      EXPECT_NEAR(nodes.read("loss").get(0), expected[s], 1e-9 * std::abs(expected[s]))
          << "step " << s << (graph ? " as a CUDA graph" : "");
    }
  }
}

TEST(CudaGlueOnDevice, RunOnDeviceWorksOnTheGluesBuffers) {
  if (std::string why = no_device(); !why.empty()) GTEST_SKIP() << why;
  Program p = optimize(forward_program(find_op("softmax"), DType::f64));
  Tensor x = random_tensor({6, 11}, 3);
  // The glue only holds the buffers here: a copy step makes "y" as big as "x".
  CudaChainNodes nodes({{"copy", copy_program(2, DType::f64), {{"x", "x"}, {"y", "y"}}, {}}},
                       {{"x", x}});
  run_on_device(*compile_cuda(p),
                {{"x", nodes.device_tensor("x")}, {"y", nodes.device_tensor("y")}});
  expect_close(interpret(p, {{"x", x}}, {}).at("y"), nodes.read("y"), "y");
}

}  // namespace
}  // namespace uops
