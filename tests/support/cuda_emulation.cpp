// Fibers switch with _setjmp/_longjmp (no system call; the fortified longjmp would reject a jump
// to another stack), except under the sanitizers, which follow swapcontext only.
#undef _FORTIFY_SOURCE
#include "support/cuda_emulation.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "backends/c/c_compiler.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_emitter.h"
#include "backends/cuda/cuda_program.h"
#include "support/cuda_shim_runtime.h"
#include "uops/error.h"
#include "uops/ir/binding.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define UOPS_EMU_SWAPCONTEXT 1
#endif
#if defined(__SANITIZE_THREAD__)
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
void __tsan_destroy_fiber(void* fiber);
}
#endif

namespace uops::testing {

using namespace ir;

namespace {

using Stub = void (*)(void**, int);

std::string read_text(const char* path) {
  std::ifstream in(path);
  if (!in) throw Error(std::string("CUDA emulation: cannot read ") + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- the race and bounds detector ---------------------------------------------------------------

// What one element saw during the current launch. Accesses of the current (block, epoch) keep
// the first thread of each kind and whether another thread followed; earlier epochs of the same
// block are ordered before by the barrier; other blocks are never ordered, so their kinds fold
// into `other_blocks`.
struct Shadow {
  unsigned launch = 0;
  long long block = -1;
  unsigned epoch = 0;
  unsigned char other_blocks = 0, this_block = 0;
  long long first[3] = {-1, -1, -1};
  bool many[3] = {false, false, false};

  unsigned char current() const {
    unsigned char m = 0;
    for (int k = 0; k < 3; ++k)
      if (first[k] >= 0) m |= (unsigned char)(1 << k);
    return m;
  }
  void clear_current() {
    for (int k = 0; k < 3; ++k) first[k] = -1, many[k] = false;
  }
};

// Two accesses by different threads, unordered, conflict unless both read or both are atomic.
bool conflict(int a, int b) {
  return !(a == uops_emu::kRead && b == uops_emu::kRead) &&
         !(a == uops_emu::kAtomic && b == uops_emu::kAtomic);
}

const char* kind_name(int k) {
  return k == uops_emu::kRead ? "read" : k == uops_emu::kWrite ? "plain write" : "atomic";
}

struct Allocation {
  std::string name;
  size_t element = 1;
  std::vector<unsigned char> bytes;
  std::vector<Shadow> shadow;
};

// Process-wide: two devices may load one module (the kernel cache), whose shared arrays are
// statics, and each block must look new to them.
std::atomic<unsigned long long> block_serials{0};

// ---- fibers ----------------------------------------------------------------------------------

constexpr size_t kStackBytes = 256 * 1024;

struct Fiber {
  ucontext_t context;
  jmp_buf jump;
  bool started = false;
  void* stack = nullptr;
  bool done = false;
#if defined(__SANITIZE_THREAD__)
  void* tsan = nullptr;
#endif
};

struct Fibers {
  std::vector<Fiber> fibers;
  ~Fibers() {
    for (Fiber& f : fibers) {
      if (f.stack) munmap(f.stack, kStackBytes);
#if defined(__SANITIZE_THREAD__)
      if (f.tsan) __tsan_destroy_fiber(f.tsan);
#endif
    }
  }
};

// The emulated device's memory, the runtime the kernels call back, the fiber scheduler and the
// race and bounds detector.
class Emulator {
 public:
  Emulator() {
    rt_.self = this;
    rt_.access = [](void* self, const void* a, int kind, bool shared) {
      static_cast<Emulator*>(self)->access(a, kind, shared);
    };
    rt_.barrier = [](void* self) { static_cast<Emulator*>(self)->barrier(); };
    rt_.extent = [](void* self, const void* a) { return static_cast<Emulator*>(self)->extent(a); };
    rt_.fault = [](void* self, const char* what) { static_cast<Emulator*>(self)->fault(what); };
  }

  uops_emu::Runtime* runtime() { return &rt_; }
  // The first fault since the last call, or empty; clears it.
  std::string take_fault() { return std::exchange(fault_, {}); }

  codegen::DeviceAddress allocate(const std::string& name, size_t bytes, size_t element,
                                  unsigned char fill) {
    auto a = std::make_unique<Allocation>();
    a->name = name;
    a->element = element;
    a->bytes.assign(std::max<size_t>(bytes, 1), fill);
    a->shadow.resize(a->bytes.size() / element + 1);
    auto address = codegen::DeviceAddress(reinterpret_cast<uintptr_t>(a->bytes.data()));
    allocations_[uintptr_t(address)] = std::move(a);
    sizes_[uintptr_t(address)] = bytes;
    return address;
  }
  void release(codegen::DeviceAddress a) {
    allocations_.erase(uintptr_t(a));
    sizes_.erase(uintptr_t(a));
    last_ = nullptr;
  }
  // The host address of `bytes` bytes at `a`, which must lie inside one allocation.
  unsigned char* host(codegen::DeviceAddress a, size_t bytes) {
    if (bytes && extent(reinterpret_cast<const void*>(a)) < (long long)bytes)
      throw Error("CUDA emulation: a copy of " + std::to_string(bytes) +
                  " bytes outside every allocation");
    return reinterpret_cast<unsigned char*>(a);
  }

  void launch(const std::string& kernel, Stub stub, void** args, int nargs, codegen::LaunchDims d,
              bool barriers) {
    ++launch_;
    kernel_ = kernel;
    rt_.grid_dim = {d.grid, 1, 1};
    rt_.block_dim = {d.threads, 1, 1};
    for (unsigned b = 0; b < d.grid && fault_.empty(); ++b) {
      rt_.block = {b, 0, 0};
      rt_.block_serial = ++block_serials;
      block_ = b;
      epoch_ = 0;
      shared_.clear();
      if (!barriers) {
        in_fiber_ = false;
        for (unsigned t = 0; t < d.threads; ++t) {
          set_thread(t);
          stub(args, nargs);
        }
      } else {
        run_fibers(stub, args, nargs, d.threads);
      }
    }
  }

 private:
  void set_thread(unsigned t) {
    rt_.thread = {t, 0, 0};
    thread_ = (long long)block_ * rt_.block_dim.x + t;
  }

  void run_fibers(Stub stub, void** args, int nargs, unsigned threads) {
    // Per OS thread (the runtime's streams launch from several): a fiber never resumes on
    // another thread than the one it started on.
    static thread_local Fibers owned;
    std::vector<Fiber>& fibers = owned.fibers;
    if (fibers.size() < threads) fibers.resize(threads);
    stub_ = stub;
    args_ = args;
    nargs_ = nargs;
    in_fiber_ = true;
#if defined(__SANITIZE_THREAD__)
    scheduler_tsan_ = __tsan_get_current_fiber();
#endif
    for (unsigned t = 0; t < threads; ++t) {
      Fiber& f = fibers[t];
      if (!f.stack) {
        f.stack = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (f.stack == MAP_FAILED) throw Error("CUDA emulation: no memory for fiber stacks");
#if defined(__SANITIZE_THREAD__)
        f.tsan = __tsan_create_fiber(0);
#endif
      }
      // A fiber that finished a kernel waits at the top of fiber_main's loop for the next one;
      // only a new one (or one abandoned at a barrier) needs a fresh context.
      if (!f.started) {
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack;
        f.context.uc_stack.ss_size = kStackBytes;
        f.context.uc_link = nullptr;
        makecontext(&f.context, &Emulator::fiber_main, 0);
      }
      f.done = false;
    }
    fibers_ = &fibers;
    for (;;) {
      unsigned done = 0;
      for (unsigned t = 0; t < threads; ++t) {
        if (fibers[t].done) {
          ++done;
          continue;
        }
        set_thread(t);
        current_ = this;
        switch_to(fibers[t]);
        done += fibers[t].done;
      }
      if (done == threads) break;
      if (done > 0) {
        fault("__syncthreads reached by some threads of a block but not all");
        for (Fiber& f : fibers) f.started = false;  // abandoned: restarted from scratch
        break;
      }
      ++epoch_;
    }
  }

  void switch_to(Fiber& f) {
    active_ = &f;
#if defined(UOPS_EMU_SWAPCONTEXT)
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(f.tsan, 0);
#endif
    f.started = true;
    swapcontext(&scheduler_, &f.context);
#else
    if (_setjmp(scheduler_jump_) == 0) {
      if (f.started) _longjmp(f.jump, 1);
      f.started = true;
      setcontext(&f.context);
    }
#endif
  }
  void back_to_scheduler() {
#if defined(UOPS_EMU_SWAPCONTEXT)
#if defined(__SANITIZE_THREAD__)
    __tsan_switch_to_fiber(scheduler_tsan_, 0);
#endif
    swapcontext(&active_->context, &scheduler_);
#else
    if (_setjmp(active_->jump) == 0) _longjmp(scheduler_jump_, 1);
#endif
  }

  static void fiber_main() {
    for (;;) {
      Emulator* d = current_;
      d->stub_(d->args_, d->nargs_);
      d->active_->done = true;
      d->back_to_scheduler();
    }
  }

  void barrier() {
    if (!in_fiber_) {
      fault("__syncthreads in a kernel the launch plan runs without a block reduction");
      return;
    }
    back_to_scheduler();
  }

  long long extent(const void* address) {
    auto a = uintptr_t(address);
    auto it = sizes_.upper_bound(a);
    if (it == sizes_.begin()) return 0;
    --it;
    if (a < it->first || a >= it->first + it->second) return 0;
    return (long long)(it->first + it->second - a);
  }

  void fault(const std::string& what) {
    if (fault_.empty())
      fault_ = what + " (kernel " + kernel_ + ", block " + std::to_string(block_) + ", thread " +
               std::to_string(rt_.thread.x) + ")";
  }

  void access(const void* address, int kind, bool shared) {
    auto a = uintptr_t(address);
    Shadow* s = nullptr;
    Allocation* alloc = nullptr;
    size_t element = 0;
    if (shared) {
      s = &shared_[a];
    } else {
      if (!(last_ && a >= last_base_ && a < last_base_ + last_->bytes.size())) {
        auto it = allocations_.upper_bound(a);
        if (it == allocations_.begin()) return fault("access outside every allocation");
        --it;
        last_base_ = it->first;
        last_ = it->second.get();
      }
      alloc = last_;
      element = (a - last_base_) / alloc->element;
      if (a >= last_base_ + alloc->bytes.size()) return fault("access outside every allocation");
      s = &alloc->shadow[element];
    }
    if (s->launch != launch_) *s = Shadow{launch_};
    if (s->block != block_) {
      s->other_blocks |= s->this_block | s->current();
      s->this_block = 0;
      s->clear_current();
      s->block = block_;
      s->epoch = epoch_;
    } else if (s->epoch != epoch_) {
      s->this_block |= s->current();
      s->clear_current();
      s->epoch = epoch_;
    }
    for (int k = 0; k < 3; ++k) {
      bool other_block = (s->other_blocks >> k) & 1;
      bool other_thread = s->first[k] >= 0 && (s->first[k] != thread_ || s->many[k]);
      if ((other_block || other_thread) && conflict(kind, k) && fault_.empty())
        fault(std::string("race on ") +
              (shared ? "shared memory" : alloc->name + "[" + std::to_string(element) + "]") +
              ": " + kind_name(kind) + " against another thread's " + kind_name(k) +
              (other_block ? " in another block" : " between the same barriers"));
    }
    if (s->first[kind] < 0)
      s->first[kind] = thread_;
    else if (s->first[kind] != thread_)
      s->many[kind] = true;
  }

  uops_emu::Runtime rt_{};
  std::map<uintptr_t, std::unique_ptr<Allocation>> allocations_;
  std::map<uintptr_t, size_t> sizes_;
  Allocation* last_ = nullptr;  // the allocation the previous access hit
  uintptr_t last_base_ = 0;
  std::unordered_map<uintptr_t, Shadow> shared_;
  std::string fault_, kernel_;
  unsigned launch_ = 0, epoch_ = 0;
  long long block_ = 0, thread_ = 0;
  bool in_fiber_ = false;
  Stub stub_ = nullptr;
  void** args_ = nullptr;
  int nargs_ = 0;
  ucontext_t scheduler_{};
  jmp_buf scheduler_jump_;
  Fiber* active_ = nullptr;
  std::vector<Fiber>* fibers_ = nullptr;
#if defined(__SANITIZE_THREAD__)
  void* scheduler_tsan_ = nullptr;
#endif
  static thread_local Emulator* current_;
};

thread_local Emulator* Emulator::current_ = nullptr;

// ---- compiled batches ------------------------------------------------------------------------

// Loads of `name[...]` become `name(...)`, which gives the element's value: as a proxy, a load
// in `c ? x[i] : -INFINITY` would take the other operand's type (float in an f64 kernel).
// Stores (`name[...] =`, `name[...] +=`, `&name[...]`) keep the proxy. The brackets change in
// place, so positions stay valid while nested loads are rewritten.
void loads_as_calls(std::string& s, const std::set<std::string>& names) {
  auto ident = [](char c) { return std::isalnum((unsigned char)c) || c == '_'; };
  for (const std::string& name : names)
    for (size_t at = s.find(name + "["); at != std::string::npos; at = s.find(name + "[", at + 1)) {
      if (at > 0 && ident(s[at - 1])) continue;
      size_t open = at + name.size(), close = open;
      for (int depth = 0; close < s.size(); ++close) {
        depth += s[close] == '[' ? 1 : s[close] == ']' ? -1 : 0;
        if (depth == 0) break;
      }
      size_t next = s.find_first_not_of(' ', close + 1);
      bool store = s.compare(next, 2, "+=") == 0 || (s[next] == '=' && s[next + 1] != '=');
      size_t before = s.find_last_not_of(' ', at - 1);
      bool address = at > 0 && before != std::string::npos && s[before] == '&';
      if (store || address) continue;
      s[open] = '(';
      s[close] = ')';
    }
}

// The generated source as host C++: kernels lose C linkage (every program of a batch has a
// block0), tensor parameters and shared arrays become the shim's checked views.
std::string as_host_source(const std::string& cuda) {
  static const std::regex linkage(R"(extern "C" __global__)");
  static const std::regex tensor(R"(((?:const )?(?:float|double|int32_t)) \*__restrict__ (\w+))");
  static const std::regex shared(R"(__shared__ (\w+) (\w+)\[(\d+)\];)");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(cuda.begin(), cuda.end(), tensor);
       it != std::sregex_iterator(); ++it)
    names.insert((*it)[2]);
  for (auto it = std::sregex_iterator(cuda.begin(), cuda.end(), shared);
       it != std::sregex_iterator(); ++it)
    names.insert((*it)[2]);
  std::string s = std::regex_replace(cuda, linkage, "__global__");
  s = std::regex_replace(s, tensor, "uops_emu::Global<$1> $2");
  s = std::regex_replace(s, shared, "static uops_emu::Shared<$1, $3> $2;");
  loads_as_calls(s, names);
  return s;
}

std::string shim_source() {
  return read_text(UOPS_CUDA_SHIM_DIR "/cuda_shim_runtime.h") +
         read_text(UOPS_CUDA_SHIM_DIR "/cuda_shim.inc");
}

// The C backend's compile through the kernel cache, with the C++ compiler: the later -x, -std
// and -O override the C flags it puts first. Gives the module and the shim's runtime pointer.
std::pair<void*, uops_emu::Runtime**> load_module(const std::string& source) {
  CCompileOptions options;
  const char* cxx = std::getenv("CXX");
  options.compiler = cxx && *cxx ? cxx : "c++";
  options.openmp = false;
  options.extra_flags = {"-x", "c++", "-std=c++20", "-O1", "-w"};
  void* handle = cgen::compile_and_load(source, options);
  auto runtime = static_cast<uops_emu::Runtime**>(dlsym(handle, "uops_emu_rt"));
  if (!runtime) throw Error("CUDA emulation: the shim's runtime pointer is missing");
  return {handle, runtime};
}

// The seam's emulated side: kernels compiled as host C++, launched one at a time (the runtime's
// streams call in from several threads) on the emulator's checked memory.
class EmulatedDevice : public cuda::Device {
 public:
  EmulatedDevice(SourceEdit edit, unsigned max_grid)
      : edit_(std::move(edit)), max_grid_(max_grid) {}

  std::string backend() const override { return "cuda-emulation"; }

  std::vector<cuda::LoadedProgram> load(const std::vector<Program>& programs) override {
    std::string source = shim_source();
    std::vector<cuda::LoadedProgram> out(programs.size());
    for (size_t i = 0; i < programs.size(); ++i) {
      cuda::CudaModule mod = cuda::emit_cuda_module(programs[i]);
      std::string ns = "uops_emu_p" + std::to_string(i);
      source += "\nnamespace " + ns + " {\n" +
                as_host_source(edit_ ? edit_(mod.source) : mod.source) + "}  // namespace " + ns +
                "\n";
      for (auto& k : mod.plan.kernels)
        source += "extern \"C\" void " + ns + "_" + k.name + "(void **a, int n) { uops_emu::call(" +
                  ns + "::" + k.name + ", a, n); }\n";
      out[i].plan = std::move(mod.plan);
    }
    auto [handle, runtime] = load_module(source);
    std::lock_guard lock(mutex_);
    for (size_t i = 0; i < programs.size(); ++i)
      for (auto& k : out[i].plan.kernels) {
        std::string name = "uops_emu_p" + std::to_string(i) + "_" + k.name;
        auto stub = reinterpret_cast<Stub>(dlsym(handle, name.c_str()));
        if (!stub) throw Error("CUDA emulation: missing kernel " + name);
        kernels_.push_back({stub, runtime});
        out[i].kernels.push_back(&kernels_.back());
      }
    return out;
  }

  std::vector<const void*> load_source(const std::string& cuda,
                                       const std::vector<std::string>& kernels) override {
    std::string source = shim_source() + "\nnamespace uops_emu_raw {\n" +
                         as_host_source(edit_ ? edit_(cuda) : cuda) +
                         "}  // namespace uops_emu_raw\n";
    for (const std::string& k : kernels)
      source += "extern \"C\" void uops_emu_raw_" + k +
                "(void **a, int n) { uops_emu::call(uops_emu_raw::" + k + ", a, n); }\n";
    auto [handle, runtime] = load_module(source);
    std::lock_guard lock(mutex_);
    std::vector<const void*> out;
    for (const std::string& k : kernels) {
      auto stub = reinterpret_cast<Stub>(dlsym(handle, ("uops_emu_raw_" + k).c_str()));
      if (!stub) throw Error("CUDA emulation: missing kernel " + k);
      kernels_.push_back({stub, runtime});
      out.push_back(&kernels_.back());
    }
    return out;
  }

  codegen::DeviceAddress allocate(size_t bytes, const std::string& name, size_t element) override {
    std::lock_guard lock(mutex_);
    return emu_.allocate(name, bytes, element, 0xff);
  }
  void release(codegen::DeviceAddress address) noexcept override {
    std::lock_guard lock(mutex_);
    emu_.release(address);
  }
  void copy_to_device(codegen::DeviceAddress to, const void* from, size_t bytes) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memcpy(emu_.host(to, bytes), from, bytes);
  }
  void copy_to_host(void* to, codegen::DeviceAddress from, size_t bytes) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memcpy(to, emu_.host(from, bytes), bytes);
  }
  void copy(codegen::DeviceAddress to, codegen::DeviceAddress from, size_t bytes,
            cuda::Stream) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memcpy(emu_.host(to, bytes), emu_.host(from, bytes), bytes);
  }
  void zero(codegen::DeviceAddress address, size_t bytes, cuda::Stream) override {
    std::lock_guard lock(mutex_);
    if (bytes) std::memset(emu_.host(address, bytes), 0, bytes);
  }
  void launch(const codegen::KernelPlan& plan, const void* kernel, codegen::LaunchDims dims,
              void** args, cuda::Stream) override {
    std::lock_guard lock(mutex_);
    auto* k = static_cast<const Kernel*>(kernel);
    *k->runtime = emu_.runtime();
    if (max_grid_ > 0) dims.grid = std::min(dims.grid, max_grid_);
    emu_.launch(plan.name, k->stub, args, int(plan.args.size()) + 1, dims, plan.cooperative);
    if (std::string fault = emu_.take_fault(); !fault.empty())
      throw Error("CUDA emulation: " + fault);
  }
  void synchronize(cuda::Stream) override {}  // every call above has finished when it returns

 private:
  struct Kernel {
    Stub stub;
    uops_emu::Runtime** runtime;  // the shim's pointer in the kernel's module
  };

  SourceEdit edit_;
  unsigned max_grid_;
  std::mutex mutex_;
  Emulator emu_;
  std::deque<Kernel> kernels_;  // stable addresses: the handles of LoadedProgram
};

}  // namespace

std::shared_ptr<cuda::Device> emulated_cuda_device(const SourceEdit& edit, unsigned max_grid) {
  return std::make_shared<EmulatedDevice>(edit, max_grid);
}

std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(std::vector<Program> programs,
                                                            const SourceEdit& edit,
                                                            unsigned max_grid) {
  return emulate_cuda_batch(emulated_cuda_device(edit, max_grid), std::move(programs));
}

std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(
    const std::shared_ptr<cuda::Device>& device, std::vector<Program> programs) {
  std::vector<cuda::LoadedProgram> loaded = device->load(programs);
  std::vector<std::unique_ptr<Executable>> out;
  for (size_t i = 0; i < programs.size(); ++i)
    out.push_back(
        std::make_unique<cuda::CudaProgram>(device, std::move(programs[i]), std::move(loaded[i])));
  return out;
}

std::unique_ptr<Executable> emulate_cuda(Program p, const SourceEdit& edit, unsigned max_grid) {
  std::vector<Program> one;
  one.push_back(std::move(p));
  return std::move(emulate_cuda_batch(std::move(one), edit, max_grid).front());
}

}  // namespace uops::testing
