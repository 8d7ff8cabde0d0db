#include "uops/backends/wavefront.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "backends/c/c_compiler.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/codegen/zero_fill.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_emitter.h"
#include "backends/kernel_cache.h"
#include "backends/scheduled/bound_chain.h"
#include "backends/scheduled/c_block_kernels.h"
#include "backends/scheduled/chain_binding.h"
#include "uops/error.h"
#include "uops/runtime.h"

namespace uops {

using namespace ir;

namespace {

constexpr WaveMode kModes[] = {WaveMode::fused, WaveMode::separate, WaveMode::streams,
                               WaveMode::single};
constexpr int kNumModes = 4;
constexpr int kRepetitions = 7;  // timed runs of each mode of each wavefront

// A wavefront's function: op `only` (or every op when negative) on a team of `threads`, its
// error bits or-ed into errors[op].
using WaveFn = int (*)(void* const* const* tensors, const int64_t* const* sizes,
                       const int64_t* const* params, int threads, int only, int* errors);

// What an op touches, by storage: its reads and writes (a zero fill writes what it zeroes).
void op_accesses(const sched::BoundStep& s, int block, const std::vector<bool>& zero_fill,
                 std::set<int>& reads, std::set<int>& writes) {
  if (block >= 0)
    return chain::reads_and_writes(s.chain.program.blocks[size_t(block)], reads, writes);
  for (size_t t = 0; t < zero_fill.size(); ++t)
    if (zero_fill[t]) writes.insert(int(t));
}

std::vector<std::vector<ChainOp>> plan_wavefronts(const sched::BoundChain& chain,
                                                  const std::vector<std::vector<bool>>& zero_fill,
                                                  size_t max_ops) {
  struct Last {
    int write = -1, read = -1;  // the level of the last write, the latest read since
  };
  std::map<const Tensor*, Last> last;
  std::vector<std::vector<ChainOp>> levels;
  for (size_t i = 0; i < chain.steps.size(); ++i) {
    const sched::BoundStep& s = chain.steps[i];
    for (int b = -1; b < int(s.chain.program.blocks.size()); ++b) {
      std::set<int> reads, writes;
      op_accesses(s, b, zero_fill[i], reads, writes);
      if (b < 0 && writes.empty()) continue;
      int level = 0;
      for (int t : reads) level = std::max(level, last[s.tensors[t]].write + 1);
      for (int t : writes) {
        const Last& l = last[s.tensors[t]];
        level = std::max({level, l.write + 1, l.read + 1});
      }
      for (int t : reads) last[s.tensors[t]].read = std::max(last[s.tensors[t]].read, level);
      for (int t : writes) last[s.tensors[t]] = {level, -1};
      if (size_t(level) >= levels.size()) levels.resize(size_t(level) + 1);
      levels[size_t(level)].push_back({int(i), b});
    }
  }
  std::vector<std::vector<ChainOp>> waves;
  for (const auto& level : levels)
    for (size_t first = 0; first < level.size(); first += max_ops)
      waves.emplace_back(level.begin() + long(first),
                         level.begin() + long(std::min(level.size(), first + max_ops)));
  return waves;
}

// The zero fill and error helpers, and one function per wavefront (WaveFn) calling the blocks'
// worksharing functions inside one parallel region.
std::string wave_functions(const std::vector<std::vector<ChainOp>>& waves) {
  std::string s =
      "\n#include <string.h>\n\n"
      "/* Zeroes `count` buffers of the given byte sizes, each thread a static share. */\n"
      "static int uops_zero(void *const *buffers, const int64_t *bytes, int64_t count) {\n"
      "  for (int64_t j = 0; j < count; ++j) {\n"
      "    const int64_t chunks = (bytes[j] + 4095) / 4096;\n"
      "#ifdef _OPENMP\n#pragma omp for schedule(static) nowait\n#endif\n"
      "    for (int64_t c = 0; c < chunks; ++c) {\n"
      "      const int64_t left = bytes[j] - c * 4096;\n"
      "      memset((char *)buffers[j] + c * 4096, 0, (size_t)(left < 4096 ? left : 4096));\n"
      "    }\n  }\n  return 0;\n}\n\n"
      "static void uops_note(int *errors, int op, int bits) {\n"
      "  if (bits) {\n#ifdef _OPENMP\n#pragma omp atomic\n#endif\n"
      "    errors[op] |= bits;\n  }\n}\n";
  for (size_t w = 0; w < waves.size(); ++w) {
    s += "\nint uops_wave_" + std::to_string(w) +
         "(void *const *const *tensors, const int64_t *const *sizes, const int64_t *const "
         "*params, int threads, int only, int *errors) {\n"
         "#ifdef _OPENMP\n#pragma omp parallel num_threads(threads)\n#else\n  (void)threads;\n"
         "#endif\n  {\n";
    for (size_t j = 0; j < waves[w].size(); ++j) {
      const ChainOp& op = waves[w][j];
      std::string i = std::to_string(j);
      std::string call =
          op.block < 0 ? "uops_zero(tensors[" + i + "], sizes[" + i + "], params[" + i + "][0])"
                       : cgen::block_entry(size_t(op.step), size_t(op.block)) + "(tensors[" + i +
                             "], sizes[" + i + "], params[" + i + "], 1)";
      s += "    if (only < 0 || only == " + i + ") uops_note(errors, " + i + ", " + call + ");\n";
    }
    s += "  }\n  return 0;\n}\n";
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string literal(int64_t v) {
  return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL";
}

// ---- CUDA ----------------------------------------------------------------------------------

// An argument of a task's call after the virtual block index and grid size: the task's tensor
// `tensor` (which the wavefront kernel passes as one of its parameters), or else `text`.
struct CallArg {
  int tensor = -1;
  std::string text;
};

// One entry of a wavefront kernel's static table: `grid` thread blocks run
// `function(vblock, grid, args...)`.
struct Task {
  unsigned grid = 1, threads = 1;
  bool barriers = false;
  std::string function;
  std::vector<CallArg> args;
  std::vector<std::pair<Tensor*, bool>> tensors;  // storage, and whether the call writes it
  std::vector<std::string> names;
};

std::string storage_name(const sched::BoundStep& s, int t) {
  const std::string& bound = s.names[size_t(t)];
  return bound.empty() ? s.chain.label + "." + s.chain.program.tensors[size_t(t)].name : bound;
}

// Block kernel `kp` of step `step`, with the grid it launches alone and its bound sizes and
// parameters as constants.
Task block_task(const sched::BoundStep& s, int step, const codegen::KernelPlan& kp) {
  const Program& p = s.chain.program;
  codegen::LaunchDims dims = codegen::launch_dims(kp, s.binding.env());
  Task task;
  task.grid = dims.grid;
  task.threads = dims.threads;
  task.barriers = kp.cooperative;
  task.function = "uops_s" + std::to_string(step) + "::" + kp.name;
  for (const codegen::KernelArg& a : kp.args) {
    if (a.kind == codegen::KernelArg::tensor) {
      task.args.push_back({int(task.tensors.size()), ""});
      task.tensors.push_back(
          {s.tensors[size_t(a.tensor_id)], p.tensors[size_t(a.tensor_id)].role != Role::input});
      task.names.push_back(storage_name(s, a.tensor_id));
    } else {
      task.args.push_back({-1, literal(a.kind == codegen::KernelArg::size
                                           ? s.binding.shapes[size_t(a.tensor_id)][size_t(a.axis)]
                                           : s.binding.params.at(a.name))});
    }
  }
  task.args.push_back({-1, "error"});
  return task;
}

// Zeroes tensor t of a step: a grid-stride loop of uops_zero_<type>.
Task zero_task(const sched::BoundStep& s, int t, std::set<std::string>& types) {
  std::string type = codegen::KernelWriter::element_type(s.tensors[size_t(t)]->dtype);
  types.insert(type);
  int64_t n = s.tensors[size_t(t)]->numel(), threads = codegen::LaunchPlan::threads_per_block;
  Task task;
  task.grid = unsigned(std::clamp<int64_t>((n + threads - 1) / threads, 1, 1024));
  task.threads = unsigned(threads);
  task.function = "uops_zero_" + type;
  task.args = {{0, ""}, {-1, literal(n)}};
  task.tensors = {{s.tensors[size_t(t)], true}};
  task.names = {storage_name(s, t)};
  return task;
}

// The kernel running `tasks` side by side: one parameter per storage, blocks [o, o + grid) of
// the launch running a task's blocks with vblock = blockIdx.x - o.
void add_kernel(const std::vector<Task>& tasks, CudaWavefronts& out) {
  CudaWavefrontKernel k;
  k.name = "uops_wave_" + std::to_string(out.kernels.size());
  std::map<Tensor*, size_t> param;
  std::vector<bool> written;
  for (const Task& t : tasks)
    for (size_t a = 0; a < t.tensors.size(); ++a) {
      auto [it, fresh] = param.try_emplace(t.tensors[a].first, k.buffers.size());
      if (fresh) {
        k.buffers.push_back(t.tensors[a].first);
        k.names.push_back(t.names[a]);
        written.push_back(false);
      }
      written[it->second] = written[it->second] || t.tensors[a].second;
    }
  std::string sig, body;
  for (size_t a = 0; a < k.buffers.size(); ++a) {
    std::string type = codegen::KernelWriter::element_type(k.buffers[a]->dtype);
    sig += (written[a] ? "" : "const ") + type + " *" + codegen::cuda_dialect().restrict_pointer +
           " a" + std::to_string(a) + ", ";
  }
  unsigned offset = 0;
  for (const Task& t : tasks) {
    std::string call =
        t.function + "(b - " + std::to_string(offset) + "u, " + std::to_string(t.grid) + "u";
    for (const CallArg& a : t.args)
      call +=
          ", " + (a.tensor < 0 ? a.text
                               : "a" + std::to_string(param.at(t.tensors[size_t(a.tensor)].first)));
    call += ")";
    offset += t.grid;
    body += "  if (b < " + std::to_string(offset) + "u) {\n    " + call + ";\n    return;\n  }\n";
    k.threads = std::max(k.threads, t.threads);
    k.barriers |= t.barriers;
  }
  k.grid = offset;
  out.source += "\nextern \"C\" __global__ void " + k.name + "(" + sig +
                "int *error) {\n  const unsigned b = blockIdx.x;\n" + body + "}\n";
  out.kernels.push_back(std::move(k));
}

}  // namespace

const char* wave_mode_name(WaveMode mode) {
  switch (mode) {
    case WaveMode::fused:
      return "fused";
    case WaveMode::separate:
      return "separate";
    case WaveMode::streams:
      return "streams";
    case WaveMode::single:
      return "single";
  }
  return "?";
}

struct WavefrontChain::State {
  WavefrontOptions options;
  sched::BoundChain chain;
  std::vector<std::vector<bool>> zero_fill;  // per step, per tensor
  std::vector<std::vector<ChainOp>> waves;

  // Per op of each wavefront, the arrays its function takes; a zero fill's are its own.
  struct Zero {
    std::vector<void*> buffers;
    std::vector<int64_t> bytes;
    int64_t count = 0;
  };
  std::vector<std::unique_ptr<Zero>> zeros;
  struct Wave {
    std::vector<void* const*> tensors;
    std::vector<const int64_t*> sizes, params;
    std::vector<int> errors;
    WaveFn fn = nullptr;
    std::unique_ptr<runtime::CpuExecutor> streams;
    std::optional<WaveMode> mode;
    std::vector<double> ns;  // median per mode, when measured
  };
  std::vector<Wave> run;
  std::string source;
  int threads = 1;
  bool compiled = false;

  void compile();
  void measure();
  void run_wave(size_t w, WaveMode mode);
  void check_errors(size_t w);
  std::string times_key() const;
};

WavefrontChain::WavefrontChain(std::vector<ChainStep> steps, TensorMap inputs,
                               WavefrontOptions options)
    : state_(std::make_unique<State>()) {
  State& st = *state_;
  if (options.max_ops == 0) throw Error("wavefront: max_ops must be at least 1");
  st.options = std::move(options);
  st.options.compile.openmp = true;
  sched::bind_chain(st.chain, std::move(steps), std::move(inputs));
  for (const sched::BoundStep& s : st.chain.steps)
    st.zero_fill.push_back(codegen::needs_zero_fill(s.chain.program));
  st.waves = plan_wavefronts(st.chain, st.zero_fill, st.options.max_ops);
  // Its functions run on teams of options.threads (0: one per core), compiled for that many.
  st.options.compile.threads = st.options.threads;
  st.threads = cgen::kernel_threads(st.options.compile);

  st.run.resize(st.waves.size());
  for (size_t w = 0; w < st.waves.size(); ++w) {
    State::Wave& wave = st.run[w];
    for (const ChainOp& op : st.waves[w]) {
      const sched::BoundStep& s = st.chain.steps[size_t(op.step)];
      if (op.block >= 0) {
        wave.tensors.push_back(s.pointers.data());
        wave.sizes.push_back(s.sizes.data());
        wave.params.push_back(s.params.data());
        continue;
      }
      auto z = std::make_unique<State::Zero>();
      for (size_t t = 0; t < s.tensors.size(); ++t)
        if (st.zero_fill[size_t(op.step)][t]) {
          z->buffers.push_back(s.pointers[t]);
          z->bytes.push_back(int64_t(s.tensors[t]->bytes.size()));
        }
      z->count = int64_t(z->buffers.size());
      wave.tensors.push_back(z->buffers.data());
      wave.sizes.push_back(z->bytes.data());
      wave.params.push_back(&z->count);
      st.zeros.push_back(std::move(z));
    }
    wave.errors.assign(st.waves[w].size(), 0);
    wave.mode = st.options.mode;
  }
  std::vector<Program> programs;
  for (const sched::BoundStep& s : st.chain.steps) programs.push_back(s.chain.program);
  st.source = cgen::block_kernels_source(programs, cgen::cpu_target(st.options.compile, true)) +
              wave_functions(st.waves);
}

WavefrontChain::~WavefrontChain() = default;

void WavefrontChain::State::compile() {
  if (compiled) return;
  void* handle = cgen::compile_and_load(source, options.compile);
  for (size_t w = 0; w < run.size(); ++w) {
    std::string name = "uops_wave_" + std::to_string(w);
    run[w].fn = reinterpret_cast<WaveFn>(dlsym(handle, name.c_str()));
    UOPS_ASSERT(run[w].fn, "compiled unit lacks its entry point " + name);
  }
  compiled = true;
}

void WavefrontChain::State::run_wave(size_t w, WaveMode mode) {
  Wave& wave = run[w];
  if (mode == WaveMode::fused || mode == WaveMode::single) {
    wave.fn(wave.tensors.data(), wave.sizes.data(), wave.params.data(),
            mode == WaveMode::single ? 1 : threads, -1, wave.errors.data());
  } else if (mode == WaveMode::separate) {
    for (size_t j = 0; j < waves[w].size(); ++j)
      wave.fn(wave.tensors.data(), wave.sizes.data(), wave.params.data(), threads, int(j),
              wave.errors.data());
  } else {
    if (!wave.streams) {
      // Ops of a wavefront are independent: nodes without edges, each on one thread.
      runtime::GraphBuilder builder;
      for (size_t j = 0; j < waves[w].size(); ++j)
        builder.add("wavefront " + std::to_string(w) + " op " + std::to_string(j),
                    [&wave, j] {
                      wave.fn(wave.tensors.data(), wave.sizes.data(), wave.params.data(), 1, int(j),
                              wave.errors.data());
                    },
                    {}, {});
      size_t streams = options.streams ? options.streams : size_t(threads);
      wave.streams = std::make_unique<runtime::CpuExecutor>(
          std::move(builder).build({std::min(streams, waves[w].size())}));
    }
    wave.streams->run();
  }
}

void WavefrontChain::State::check_errors(size_t w) {
  Wave& wave = run[w];
  for (size_t j = 0; j < wave.errors.size(); ++j)
    if (int bits = std::exchange(wave.errors[j], 0)) {
      std::fill(wave.errors.begin(), wave.errors.end(), 0);
      const ChainStep& step = chain.steps[size_t(waves[w][j].step)].chain;
      throw Error("step '" + step.label + "': " + codegen::kernel_error_message(bits));
    }
}

// The compiled unit's key (source, compiler, flags, host), the shapes and parameters (run-time
// arguments of the unit), the team and the streams.
std::string WavefrontChain::State::times_key() const {
  std::ostringstream shapes;
  for (const sched::BoundStep& s : chain.steps) {
    for (int64_t v : s.sizes) shapes << v << ' ';
    shapes << "| ";
    for (int64_t v : s.params) shapes << v << ' ';
    shapes << "\n";
  }
  return kernel_cache_key(
      cgen::compile_key(source, options.compile) + "\n" + shapes.str(), "wavefront times v2",
      "threads " + std::to_string(threads) + " streams " + std::to_string(options.streams) +
          " repetitions " + std::to_string(kRepetitions));
}

void WavefrontChain::State::measure() {
  compile();
  bool pending = false;
  for (const Wave& wave : run) pending |= !wave.mode;
  if (!pending) return;
  std::filesystem::path path = kernel_cache_path(times_key(), ".times");
  std::vector<std::vector<double>> ns(run.size());
  if (auto cached = options.remeasure ? std::nullopt : read_artifact(path)) {
    std::istringstream in(*cached);
    for (auto& row : ns) {
      row.resize(kNumModes);
      for (double& v : row) in >> v;
    }
    if (!in) ns.assign(run.size(), {});
  }
  if (ns.empty() || ns[0].size() != size_t(kNumModes)) {
    // The modes run on the live buffers, saved first: measuring must not change a run's result.
    TensorMap saved = chain.buffers;
    std::vector<std::vector<std::vector<double>>> samples(
        run.size(), std::vector<std::vector<double>>(kNumModes));
    for (int r = 0; r < kRepetitions; ++r)
      for (size_t w = 0; w < run.size(); ++w)
        for (int k = 0; k < kNumModes; ++k) {
          int m = (k + r + int(w)) % kNumModes;  // interleaved: each mode goes first in turn
          auto start = std::chrono::steady_clock::now();
          run_wave(w, kModes[m]);
          auto end = std::chrono::steady_clock::now();
          samples[w][size_t(m)].push_back(
              std::chrono::duration<double, std::nano>(end - start).count());
          std::fill(run[w].errors.begin(), run[w].errors.end(), 0);
        }
    for (auto& [name, tensor] : saved)
      std::copy(tensor.bytes.begin(), tensor.bytes.end(), chain.buffers.at(name).bytes.begin());
    std::ostringstream text;
    text.precision(17);
    for (size_t w = 0; w < run.size(); ++w) {
      ns[w].clear();
      for (int m = 0; m < kNumModes; ++m) {
        ns[w].push_back(median(samples[w][size_t(m)]));
        text << ns[w].back() << (m + 1 == kNumModes ? "\n" : " ");
      }
    }
    store_artifact(path, text.str());
  }
  for (size_t w = 0; w < run.size(); ++w) {
    if (run[w].mode) continue;
    run[w].ns = ns[w];
    run[w].mode = kModes[std::min_element(ns[w].begin(), ns[w].end()) - ns[w].begin()];
  }
}

void WavefrontChain::run() {
  State& st = *state_;
  st.measure();
  for (size_t w = 0; w < st.run.size(); ++w) {
    st.run_wave(w, *st.run[w].mode);
    st.check_errors(w);
  }
}

const std::vector<std::vector<ChainOp>>& WavefrontChain::wavefronts() const {
  return state_->waves;
}

std::vector<WaveMode> WavefrontChain::modes() {
  state_->measure();
  std::vector<WaveMode> out;
  for (const auto& wave : state_->run) out.push_back(*wave.mode);
  return out;
}

std::vector<std::vector<double>> WavefrontChain::measured_ns() {
  state_->measure();
  std::vector<std::vector<double>> out;
  for (const auto& wave : state_->run) out.push_back(wave.ns);
  return out;
}

const Tensor& WavefrontChain::read(const std::string& buffer) const {
  return sched::read_buffer(state_->chain, buffer);
}

void WavefrontChain::write(const std::string& buffer, const Tensor& value) {
  sched::write_buffer(state_->chain, buffer, value);
}

CudaWavefronts WavefrontChain::cuda() const {
  const State& st = *state_;
  CudaWavefronts out;
  std::vector<codegen::LaunchPlan> plans;
  std::string modules;
  for (size_t i = 0; i < st.chain.steps.size(); ++i) {
    cuda::CudaModule mod = cuda::emit_cuda_module(st.chain.steps[i].chain.program, true);
    modules += "\nnamespace uops_s" + std::to_string(i) + " {\n" + mod.source + "}\n";
    plans.push_back(std::move(mod.plan));
  }
  std::set<std::string> zero_types;
  for (const auto& wave : st.waves) {
    std::vector<Task> tasks;
    for (const ChainOp& op : wave) {
      const sched::BoundStep& s = st.chain.steps[size_t(op.step)];
      if (op.block >= 0) {
        tasks.push_back(block_task(s, op.step, plans[size_t(op.step)].kernels[size_t(op.block)]));
        continue;
      }
      for (size_t t = 0; t < s.tensors.size(); ++t)
        if (st.zero_fill[size_t(op.step)][t]) tasks.push_back(zero_task(s, int(t), zero_types));
    }
    // Split where the blocks would pass the grid limit.
    std::vector<Task> group;
    unsigned blocks = 0;
    for (Task& t : tasks) {
      if (!group.empty() && blocks + t.grid > codegen::LaunchPlan::max_grid) {
        add_kernel(group, out);
        group.clear();
        blocks = 0;
      }
      blocks += t.grid;
      group.push_back(std::move(t));
    }
    if (!group.empty()) add_kernel(group, out);
  }

  std::string zeros;
  for (const std::string& type : zero_types)
    zeros += "\n__device__ void uops_zero_" + type + "(unsigned vblock, unsigned vgrid, " + type +
             " *__restrict__ t, long long n) {\n"
             "  for (long long i = (long long)vblock * blockDim.x + threadIdx.x; i < n;\n"
             "       i += (long long)vgrid * blockDim.x)\n    t[i] = 0;\n}\n";
  out.source =
      "/* Generated by uops: one kernel per wavefront; see uops/backends/wavefront.h. */\n"
      "typedef int int32_t;\n" +
      modules + zeros + out.source;
  return out;
}

void WavefrontChain::run_cuda() {
  std::string why;
  std::shared_ptr<cuda::Device> device = cuda::driver_device(&why);
  if (!device) throw Error("the CUDA backend cannot run: " + why);
  cuda::run_wavefronts(*device, cuda());
}

}  // namespace uops
