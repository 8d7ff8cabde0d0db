// Oracle-test a hand-written kernel against the canonical uop implementation of an op.
#include <uops/oracle/harness.h>

#include <cstdio>

int main() {
  using namespace uops;
  // A hand-written transpose.
  oracle::Implementation mine = [](const TensorMap& in, const ParamMap&) {
    const Tensor& x = in.at("x");
    Tensor y(x.dtype, {x.shape[1], x.shape[0]});
    for (int64_t i = 0; i < x.shape[0]; ++i)
      for (int64_t j = 0; j < x.shape[1]; ++j) y.set(j * x.shape[0] + i, x.get(i * x.shape[1] + j));
    return TensorMap{{"y", y}};
  };
  oracle::CheckOptions options;
  options.trials = 200;
  options.backend = "mine";
  oracle::CheckReport report = oracle::check(find_op("transpose"), mine, options);
  std::printf("%s", report.message().c_str());
  return report.passed ? 0 : 1;
}
