// The CUDA glue (uops/backends/cuda_runtime_nodes.h) on the CPU emulation of a device
// (support/cuda_emulation.h), scheduled by the CPU executor: chains of forward and gradient
// programs and the MLP's training steps give what the interpreter gives, the host copies happen
// only at the edges, and caller-owned device memory runs with no host copy at all. Needs neither
// a GPU nor the CUDA toolkit.
#include "uops/backends/cuda_runtime_nodes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backends/codegen/zero_fill.h"
#include "mlp_model.h"
#include "scheduled/cuda_glue_cases.h"
#include "scheduled/sum_without_zeroing.h"
#include "support/cuda_emulation.h"
#include "uops/backends/interpreter.h"
#include "uops/error.h"
#include "uops/ir/graph.h"
#include "uops/ir/lower.h"
#include "uops/ir/verifier.h"
#include "uops/ops/op_gradient.h"
#include "uops/ops/registry.h"
#include "uops/passes/pipeline.h"
#include "uops/runtime.h"

namespace uops {
namespace {

using namespace testing::glue;

// The emulated device, counting the bytes copied between host and device.
class CountingDevice : public cuda::Device {
 public:
  std::shared_ptr<cuda::Device> inner = testing::emulated_cuda_device();
  size_t bytes_in = 0, bytes_out = 0;

  std::string backend() const override { return inner->backend(); }
  std::vector<cuda::LoadedProgram> load(const std::vector<Program>& programs) override {
    return inner->load(programs);
  }
  std::vector<const void*> load_source(const std::string& source,
                                       const std::vector<std::string>& kernels) override {
    return inner->load_source(source, kernels);
  }
  cuda::DeviceAddress allocate(size_t bytes, const std::string& name, size_t element) override {
    return inner->allocate(bytes, name, element);
  }
  void release(cuda::DeviceAddress a) noexcept override { inner->release(a); }
  void copy_to_device(cuda::DeviceAddress to, const void* from, size_t bytes) override {
    bytes_in += bytes;
    inner->copy_to_device(to, from, bytes);
  }
  void copy_to_host(void* to, cuda::DeviceAddress from, size_t bytes) override {
    bytes_out += bytes;
    inner->copy_to_host(to, from, bytes);
  }
  void copy(cuda::DeviceAddress to, cuda::DeviceAddress from, size_t bytes,
            cuda::Stream s) override {
    inner->copy(to, from, bytes, s);
  }
  void zero(cuda::DeviceAddress a, size_t bytes, cuda::Stream s) override {
    inner->zero(a, bytes, s);
  }
  void launch(const codegen::KernelPlan& k, const void* kernel, codegen::LaunchDims dims,
              void** args, cuda::Stream s) override {
    inner->launch(k, kernel, dims, args, s);
  }
  void synchronize(cuda::Stream s) override { inner->synchronize(s); }
};

runtime::CpuExecutor executor_for(const CudaChainNodes& nodes, size_t streams) {
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  return runtime::CpuExecutor(std::move(builder).build({streams}));
}

// Two runs (the second must not see the first's sums) on two streams, every buffer compared.
void expect_chain_matches_interpreter(const std::vector<ChainStep>& steps,
                                      const TensorMap& inputs) {
  TensorMap reference = inputs;
  interpret_chain(steps, reference);
  auto device = std::make_shared<CountingDevice>();
  CudaChainNodes nodes(steps, inputs, device);
  runtime::CpuExecutor executor = executor_for(nodes, 2);
  for (int run = 0; run < 2; ++run) {
    size_t in = device->bytes_in, out = device->bytes_out;
    executor.run();
    EXPECT_EQ(device->bytes_in, in) << "a run copies nothing from the host";
    EXPECT_EQ(device->bytes_out, out) << "a run copies nothing to the host";
    for (auto& [name, tensor] : reference) expect_close(tensor, nodes.read(name), name);
  }
}

TEST(CudaGlueEmulated, SoftmaxForwardAndGradientChainMatchesInterpreter) {
  ChainCase c = chain_case("softmax");
  expect_chain_matches_interpreter(c.steps, c.inputs);
}

TEST(CudaGlueEmulated, Conv2dForwardAndGradientChainMatchesInterpreter) {
  ChainCase c = chain_case("conv2d");
  expect_chain_matches_interpreter(c.steps, c.inputs);
}

TEST(CudaGlueEmulated, GatherAndItsScatterGradientChainMatchesInterpreter) {
  ChainCase c = chain_case("gather");
  expect_chain_matches_interpreter(c.steps, c.inputs);
}

// Under the sanitizers every access the emulation's detector logs costs much more: one step
// (its loss still equals the interpreter's; the release build checks five and the decrease).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kMlpSteps = 1;
#else
constexpr int kMlpSteps = mlp::kSteps;
#endif

TEST(CudaGlueEmulated, MlpLossesMatchInterpreterAndCGlue) {
  using namespace mlp;
  std::vector<ChainStep> steps = training_step();
  TensorMap reference = initial_buffers();
  ChainNodes c_nodes(steps, initial_buffers());
  CudaChainNodes cuda_nodes(steps, initial_buffers(), testing::emulated_cuda_device());
  runtime::GraphBuilder c_builder;
  c_nodes.add_to(c_builder);
  runtime::CpuExecutor c_executor(std::move(c_builder).build({2}));
  runtime::CpuExecutor cuda_executor = executor_for(cuda_nodes, 2);
  ASSERT_EQ(cuda_executor.graph().size(), c_executor.graph().size())
      << "one node per block and one zero node per step, as the C glue";

  std::vector<double> losses;
  for (int s = 0; s < kMlpSteps; ++s) {
    interpret_chain(steps, reference);
    c_executor.run();
    cuda_executor.run();
    double expected = reference.at("loss").get(0), loss = cuda_nodes.read("loss").get(0);
    EXPECT_NEAR(loss, expected, 1e-9 * std::abs(expected)) << "step " << s;
    EXPECT_NEAR(loss, c_nodes.read("loss").get(0), 1e-9 * std::abs(expected)) << "step " << s;
    losses.push_back(loss);
  }
  if (kMlpSteps > 1) {
    EXPECT_LT(losses.back(), 0.9 * losses.front());
  }
  for (const char* w : {"w1", "b1", "w2", "b2"})
    expect_close(reference.at(w), cuda_nodes.read(w), w);
}

TEST(CudaGlueEmulated, ZeroNodesFillWhatTheKernelPlanSays) {
  std::vector<ChainStep> steps = forward_and_gradient("softmax", {});
  CudaChainNodes nodes(steps, {{"x", random_tensor({3, 5}, 2)}}, testing::emulated_cuda_device());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::Graph graph = std::move(builder).build();
  runtime::NodeIndex n = 0;
  for (const ChainStep& step : steps) {
    const runtime::Node& zero = graph.node(n);
    EXPECT_EQ(zero.name, step.label + ": zero");
    std::vector<bool> fill = codegen::needs_zero_fill(step.program);
    // The step's error word and the tensors the plan zero-fills, nothing else.
    EXPECT_EQ(zero.writes.size(), 1 + size_t(std::count(fill.begin(), fill.end(), true)))
        << step.label;
    n += 1 + runtime::NodeIndex(step.program.blocks.size());
  }
  EXPECT_EQ(n, graph.size());
}

TEST(CudaGlueEmulated, OutputsStartAtZeroOnEveryRun) {
  // y[0] += x[i] with no zeroing block: only the zero node (the plan zero-fills y) makes the
  // sum right, on the first run (device memory starts as garbage) and on the next ones.
  Program p = testing::sum_without_zeroing();
  ASSERT_EQ(verify(p), std::vector<std::string>{});
  Tensor x(DType::f64, {300});
  for (int i = 0; i < 300; ++i) x.set(i, i + 1.0);
  CudaChainNodes nodes({{"sum", p, {}, {}}}, {{"x", x}}, testing::emulated_cuda_device());
  runtime::CpuExecutor executor = executor_for(nodes, 1);
  for (int run = 0; run < 2; ++run) {
    executor.run();
    EXPECT_EQ(nodes.read("y").get(0), 45150.0) << "run " << run;
  }
}

TEST(CudaGlueEmulated, AKernelErrorIsTheInterpretersErrorOnRead) {
  Graph g;
  g.param("k");
  Node x = g.input("x", 2, DType::f32);
  g.output("z", g.reindex(x, {"dA0", "dA1"}, {"i0", "i1 / $k"}, {x}));
  Program p = lower(g);
  TensorMap inputs = {{"x", Tensor(DType::f32, {2, 3})}};
  std::string want;
  try {
    interpret(p, inputs, {{"k", 0}});
  } catch (const Error& e) {
    want = e.what();
  }
  ASSERT_FALSE(want.empty());
  CudaChainNodes nodes({{"divide", p, {}, {{"k", 0}}}}, inputs, testing::emulated_cuda_device());
  runtime::CpuExecutor executor = executor_for(nodes, 1);
  executor.run();
  try {
    nodes.read("z");
    FAIL() << "the kernel's error bits were not reported";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "step 'divide': " + want);
  }
}

TEST(CudaGlueEmulated, MisuseIsAnErrorBeforeAnythingRuns) {
  std::vector<ChainStep> steps = forward_and_gradient("softmax", {});
  auto device = testing::emulated_cuda_device();
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  // The same binding errors as the C glue.
  std::string missing = message([&] { CudaChainNodes(steps, {}, device); });
  EXPECT_EQ(missing, message([&] { ChainNodes(steps, {}); }));
  EXPECT_NE(missing.find("reads buffer 'x'"), std::string::npos) << missing;
  std::string dtype = message([&] {
    CudaChainNodes(steps, {{"x", Tensor(DType::f32, {2, 2})}}, device);
  });
  EXPECT_EQ(dtype, message([&] { ChainNodes(steps, {{"x", Tensor(DType::f32, {2, 2})}}); }));
  EXPECT_NE(dtype.find("step 'forward'"), std::string::npos) << dtype;

  CudaChainNodes nodes(steps, {{"x", random_tensor({3, 5}, 2)}}, device);
  EXPECT_NE(message([&] { nodes.read("nope"); }).find("no buffer named 'nope'"), std::string::npos);
  EXPECT_NE(message([&] {
              nodes.write("x", random_tensor({5, 3}, 2));
            }).find("is f64 [3, 5]"),
            std::string::npos);
  EXPECT_NE(message([&] { nodes.device_tensor("nope"); }), "");
}

TEST(CudaDeviceBuffers, RunOnDeviceUsesTheCallersMemoryWithoutHostCopies) {
  const OpDef& op = find_op("softmax");
  Program p = optimize(forward_program(op, DType::f64));
  auto device = std::make_shared<CountingDevice>();
  auto exe = std::move(testing::emulate_cuda_batch(device, {p}).front());
  Tensor x = random_tensor({6, 11}, 3);
  TensorMap expected = interpret(p, {{"x", x}}, {});

  DeviceTensor dx{device->allocate(x.bytes.size(), "x", 8), DType::f64, x.shape};
  DeviceTensor dy{device->allocate(x.bytes.size(), "y", 8), DType::f64, x.shape};
  device->copy_to_device(dx.address, x.bytes.data(), x.bytes.size());
  size_t in = device->bytes_in, out = device->bytes_out;
  run_on_device(*exe, {{"x", dx}, {"y", dy}});
  EXPECT_EQ(device->bytes_in, in);
  EXPECT_EQ(device->bytes_out, out + sizeof(int)) << "only the error word comes back";
  Tensor y = Tensor::uninitialized(DType::f64, x.shape);
  device->copy_to_host(y.bytes.data(), dy.address, y.bytes.size());
  expect_close(expected.at("y"), y, "y");

  auto message = [&](const DeviceTensorMap& tensors, const Executable& e) {
    try {
      run_on_device(e, tensors);
    } catch (const Error& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  EXPECT_EQ(message({{"x", dx}}, *exe), "missing output 'y'");
  DeviceTensor wrong = dy;
  wrong.shape = {11, 6};
  EXPECT_EQ(message({{"x", dx}, {"y", wrong}}, *exe),
            "output 'y' is f64 [11, 6], but the program writes f64 [6, 11]");
  EXPECT_EQ(message({{"x", dx}, {"y", dy}, {"z", dy}}, *exe),
            "'z' is no input or output of the program");
  DeviceTensor f32 = dx;
  f32.dtype = DType::f32;
  EXPECT_EQ(message({{"x", f32}, {"y", dy}}, *exe), "input 'x' has dtype f32, expected f64");
  EXPECT_NE(message({{"x", dx}, {"y", dy}}, *make_interpreter(p)).find("CUDA backend"),
            std::string::npos);
  device->release(dx.address);
  device->release(dy.address);
}

}  // namespace
}  // namespace uops
