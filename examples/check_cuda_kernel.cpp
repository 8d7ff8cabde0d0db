// Check a hand-written CUDA kernel against the canonical uop implementation of an op: the
// softmax of examples/cuda/softmax.cu (or the .cu file given as the first argument, with the
// same entry point and parameters) on random cases. It runs on the GPU where there is one and
// this build has NVRTC, and otherwise on the CPU emulation of CUDA, whose detectors report out of
// bounds accesses, races, divergent barriers, reads of unwritten shared memory and bad warp masks.
//
//   check_cuda_kernel [FILE.cu] [BLOCK]     e.g. check_cuda_kernel my_softmax.cu 96
#include <uops/oracle/cuda_kernel.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#ifndef UOPS_EXAMPLES_DIR
#define UOPS_EXAMPLES_DIR "examples"
#endif

int main(int argc, char** argv) {
  using namespace uops;
  std::string path = argc > 1 ? argv[1] : std::string(UOPS_EXAMPLES_DIR) + "/cuda/softmax.cu";
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "check_cuda_kernel: cannot read %s\n", path.c_str());
    return 2;
  }
  std::ostringstream source;
  source << in.rdbuf();

  oracle::CudaKernel kernel;
  kernel.source = source.str();
  kernel.file = path;
  kernel.entry = "softmax_rows";
  // softmax_rows(const float* x, float* y, int rows, int cols): x [rows, cols] and y are the
  // op's input and output, rows and cols the sizes of x's two axes.
  kernel.args = {"x", "y", "x_n0", "x_n1"};
  kernel.grid = "min(x_n0, 1024)";            // a block per row, up to 1024 blocks
  kernel.block = argc > 2 ? argv[2] : "256";  // any multiple of 32 up to 1024
  try {
    const OpDef& op = find_op("softmax");
    std::string why;
    std::string backend = oracle::cuda_kernel_backend(oracle::CudaTarget::automatic, &why);
    if (backend != "cuda") std::printf("running on the CUDA emulation: %s\n", why.c_str());
    oracle::CheckReport report = oracle::check_cuda_kernel(op, kernel);
    std::printf("%s", report.message().c_str());
    return report.passed ? 0 : 1;
  } catch (const Error& e) {  // a compile error, a malformed launch rule
    std::fprintf(stderr, "check_cuda_kernel: %s\n", e.what());
    return 2;
  }
}
