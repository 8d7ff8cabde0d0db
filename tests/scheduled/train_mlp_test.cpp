// A 2-layer MLP trained by generated kernels through the runtime: forward ops, cross_entropy,
// their gradient programs and SGD updates chained through named buffers, scheduled on two CPU
// streams, give the loss trajectory of the same steps run one by one by the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "mlp_model.h"
#include "uops/runtime.h"

namespace uops {
namespace {

using namespace mlp;

// Under ThreadSanitizer (gcc's, whose runtime the kernels then share) the generated kernels are
// instrumented too, so two nodes that touch one buffer without a dependency between them are
// reported, not only races in the runtime's own code.
CCompileOptions kernel_options() {
  CCompileOptions options;
#ifdef __SANITIZE_THREAD__
  options.extra_flags = {"-fsanitize=thread"};
#endif
  return options;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TrainMlp, RuntimeLossTrajectoryMatchesInterpreterAndDecreases) {
  std::vector<ChainStep> steps = training_step();
  TensorMap reference = initial_buffers();
  std::vector<double> expected;
  for (int s = 0; s < kSteps; ++s) {
    interpret_chain(steps, reference);
    expected.push_back(reference.at("loss").get(0));
  }

  ChainNodes nodes(steps, initial_buffers(), kernel_options());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  ASSERT_EQ(executor.graph().schedule().streams.size(), 2u) << "the backward pass branches";
  std::vector<double> losses;
  for (int s = 0; s < kSteps; ++s) {
    executor.run();
    losses.push_back(nodes.read("loss").get(0));
  }

  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(losses[s], expected[s], 1e-9 * std::abs(expected[s])) << "step " << s;
    if (s > 0) {
      EXPECT_LT(losses[s], losses[s - 1]) << "step " << s;
    }
  }
  EXPECT_LT(losses.back(), 0.9 * losses.front());
  for (const char* w : {"w1", "b1", "w2", "b2"}) {
    const Tensor &a = reference.at(w), &b = nodes.read(w);
    for (int64_t i = 0; i < a.numel(); ++i)
      ASSERT_NEAR(a.get(i), b.get(i), 1e-9 * (1 + std::abs(a.get(i)))) << w << " " << i;
  }
}

TEST(TrainMlp, TraceAndDotOfOneStepNameTheNodes) {
  ChainNodes nodes(training_step(), initial_buffers(), kernel_options());
  runtime::GraphBuilder builder;
  nodes.add_to(builder);
  runtime::CpuExecutor executor(std::move(builder).build({2}));
  runtime::Trace trace;
  executor.run(&trace);
  EXPECT_EQ(trace.events.size(), executor.graph().size());

  std::string json = testing::TempDir() + "train_mlp_step.json";
  std::string dot = testing::TempDir() + "train_mlp_step.dot";
  runtime::write_chrome_json(trace, json);
  runtime::write_dot(executor.graph(), dot);
  std::string json_text = read_file(json), dot_text = read_file(dot);
  for (const char* name : {"fc1: zero", "fc1: block 0", "loss grad: block 0", "relu grad: zero",
                           "sgd w1: block 0", "copy b2: block 0"}) {
    EXPECT_NE(json_text.find(name), std::string::npos) << name;
    EXPECT_NE(dot_text.find(name), std::string::npos) << name;
  }
}

// The same training inside a `while` node (NNC's control flow): the body is one step and a node
// that records the loss and counts; the loop runs until the count reaches kSteps. Its losses
// are those of the kSteps steps unrolled into one graph, bit for bit, and the loop shows in the
// trace and the DOT as the node "train".
TEST(TrainMlp, WhileLoopReachesTheLossesOfTheUnrolledSteps) {
  std::vector<ChainStep> unrolled_steps;
  for (int s = 0; s < kSteps; ++s) {
    for (ChainStep step : training_step()) {
      step.label = "step " + std::to_string(s) + " " + step.label;
      step.buffers["loss"] = "loss " + std::to_string(s);
      unrolled_steps.push_back(std::move(step));
    }
  }
  ChainNodes unrolled(unrolled_steps, initial_buffers(), kernel_options());
  runtime::GraphBuilder u;
  unrolled.add_to(u);
  runtime::CpuExecutor(std::move(u).build({2})).run();
  std::vector<double> expected;
  for (int s = 0; s < kSteps; ++s)
    expected.push_back(unrolled.read("loss " + std::to_string(s)).get(0));

  ChainNodes looped(training_step(), initial_buffers(), kernel_options());
  runtime::GraphBuilder body;
  looped.add_to(body);
  const Tensor& loss = looped.read("loss");
  int count = 0;
  std::vector<double> losses;
  body.add("record loss",
           [&] {
             losses.push_back(loss.get(0));
             ++count;
           },
           {runtime::buffer_id(&loss)}, {runtime::buffer_id(&count)});
  runtime::GraphBuilder outer;
  outer.add(runtime::while_node(
      "train", runtime::buffer_id(&count), [&] { return count < kSteps; },
      std::move(body).build({2}), kSteps + 1));
  runtime::CpuExecutor executor(std::move(outer).build());
  runtime::Trace trace;
  executor.run(&trace);

  EXPECT_EQ(losses, expected);
  EXPECT_LT(losses.back(), 0.9 * losses.front());
  for (const char* w : {"w1", "b1", "w2", "b2"}) {
    EXPECT_EQ(looped.read(w).bytes, unrolled.read(w).bytes) << w;
  }
  ASSERT_EQ(trace.events.size(), 1u);
  EXPECT_EQ(trace.events[0].name, "train");
  EXPECT_NE(runtime::to_chrome_json(trace).find("\"name\":\"train\""), std::string::npos);
  EXPECT_NE(runtime::to_dot(executor.graph()).find("[label=\"train\""), std::string::npos);
}

}  // namespace
}  // namespace uops
