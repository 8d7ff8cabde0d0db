// Wavefront fusion (Rammer, NNFusion's BlockFusion) for chains of programs
// (uops/backends/runtime_nodes.h): the independent kernels of one wavefront run as one launch.
//
// The ops of a chain are the blocks of its steps, plus one zero fill per step for the tensors
// its launch plan zero-fills (backends/codegen/zero_fill.h). An op depends on an earlier op that
// writes a buffer it reads or writes, or reads a buffer it writes (a step's temporaries are
// buffers of its own); its wavefront is one more than the largest of those it depends on (BFS
// levels), and a level of more than `max_ops` ops is split in chain order. No op of a wavefront
// touches a buffer another one writes, so they may run in any order or at once.
//
// Guarantee: running the wavefronts in order, in any mode, leaves in every buffer what
// interpret_chain leaves (the same values with CCompileOptions::reassociate off, NaN's sign and
// payload aside, as for the C backend alone; within rounding on CUDA), and a kernel that
// raises stops the run with the interpreter's error, naming the step. Binding is checked in the
// constructor, as ChainNodes checks it.
//
// C: one function per wavefront, one OpenMP parallel region whose threads each take a static
// share (`omp for schedule(static) nowait`) of every op's parallel loop, the loop the C backend
// chooses; an op without one runs on one thread (`omp single nowait`). The region's end is the
// only barrier. Modes, per wavefront:
//   fused     that region, with every op of the wavefront;
//   separate  one region per op, one after another (one launch per op);
//   streams   each op on one thread, as nodes of a runtime graph over CPU streams;
//   single    the fused function on a team of one thread: every op in turn, no hand-off.
// Without a fixed mode, the first run() times the four modes of every wavefront (medians of
// interleaved repetitions, on the live buffers, which are saved before and restored after) and
// keeps the fastest. The times are cached in the kernel cache under its trust rules (private
// folder, verified digest, O_NOFOLLOW), keyed by the compiled unit's key, the shapes and
// parameters, the threads and the streams: a later process with the same chain measures nothing.
//
// CUDA: cuda() prints one `__global__` per wavefront whose thread blocks dispatch through a
// static table to the ops' kernels, which are the kernel plan's kernels printed as device
// functions of a virtual block index and grid size: blocks [o_j, o_j + g_j) run op j, g_j being
// the grid op j launches alone; a zero fill is a grid-stride loop. Dependent wavefronts are
// separate kernels, launched in order. A wavefront whose grids add up past
// LaunchPlan::max_grid is split. Shapes and parameters are bound, so they are printed as
// constants; the kernels take the storage of their buffers. run_cuda() copies every buffer to the
// device, launches the kernels and copies every buffer back.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "uops/backends/c/c_backend.h"
#include "uops/backends/runtime_nodes.h"

namespace uops {

struct ChainOp {
  int step = 0;
  int block = -1;  // -1: the step's zero fill
};

enum class WaveMode { fused, separate, streams, single };
const char* wave_mode_name(WaveMode mode);

struct WavefrontOptions {
  CCompileOptions compile;  // OpenMP is always on: it is the parallelism
  int threads = 0;          // the team of a region; 0: one per core
  std::size_t streams = 0;  // CPU streams of the streams mode; 0: `threads`
  std::size_t max_ops = 32;
  std::optional<WaveMode> mode;  // every wavefront in this mode; unset: measured
  bool remeasure = false;        // measure even when times are cached
};

struct CudaWavefrontKernel {
  std::string name;
  unsigned grid = 1, threads = 1;
  bool barriers = false;  // some op reduces cooperatively (__syncthreads)
  // The tensor parameters in order (then `int *error`): the chain's storage of each buffer, and
  // a name for it (the buffer's, or "<step label>.<tensor>" for a temporary).
  std::vector<Tensor*> buffers;
  std::vector<std::string> names;
};

struct CudaWavefronts {
  std::string source;
  std::vector<CudaWavefrontKernel> kernels;  // launched in order
};

class WavefrontChain {
 public:
  // As ChainNodes: every misuse of the steps is an Error here.
  WavefrontChain(std::vector<ChainStep> steps, TensorMap inputs, WavefrontOptions options = {});
  ~WavefrontChain();
  WavefrontChain(const WavefrontChain&) = delete;

  // Runs every wavefront in order. The first run compiles (through the kernel cache) and, without
  // a fixed mode, chooses each wavefront's mode.
  void run();

  const std::vector<std::vector<ChainOp>>& wavefronts() const;
  // Each wavefront's mode (measuring first when none is chosen yet), and the median times, in
  // nanoseconds, that chose it (fused, separate, streams, single; empty for a fixed mode).
  std::vector<WaveMode> modes();
  std::vector<std::vector<double>> measured_ns();

  const Tensor& read(const std::string& buffer) const;
  void write(const std::string& buffer, const Tensor& value);

  CudaWavefronts cuda() const;
  // Runs cuda()'s kernels in order on the CUDA driver's device, on the chain's buffers; an Error
  // where this build or machine cannot (see cuda_unavailable_reason).
  void run_cuda();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace uops
