// Fibers switch with _setjmp/_longjmp (no system call; the fortified longjmp would reject a jump
// to another stack), except under the sanitizers, which follow swapcontext only.
#undef _FORTIFY_SOURCE
#include "support/cuda_emulation.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "backends/c/c_compiler.h"
#include "backends/codegen/kernel_writer.h"
#include "backends/cuda/cuda_emitter.h"
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

// One run of a program: its device memory, the runtime the kernels call back, the scheduler.
class Device {
 public:
  Device() {
    rt_.self = this;
    rt_.access = [](void* self, const void* a, int kind, bool shared) {
      static_cast<Device*>(self)->access(a, kind, shared);
    };
    rt_.barrier = [](void* self) { static_cast<Device*>(self)->barrier(); };
    rt_.extent = [](void* self, const void* a) { return static_cast<Device*>(self)->extent(a); };
    rt_.fault = [](void* self, const char* what) { static_cast<Device*>(self)->fault(what); };
  }

  uops_emu::Runtime* runtime() { return &rt_; }
  const std::string& first_fault() const { return fault_; }

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
  unsigned char* host(codegen::DeviceAddress a) { return reinterpret_cast<unsigned char*>(a); }

  void launch(const std::string& kernel, Stub stub, void** args, int nargs, codegen::LaunchDims d,
              bool barriers) {
    ++launch_;
    kernel_ = kernel;
    rt_.grid_dim = {d.grid, 1, 1};
    rt_.block_dim = {d.threads, 1, 1};
    for (unsigned b = 0; b < d.grid && fault_.empty(); ++b) {
      rt_.block = {b, 0, 0};
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
    static std::vector<Fiber> fibers;
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
        makecontext(&f.context, &Device::fiber_main, 0);
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
      Device* d = current_;
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
  static thread_local Device* current_;
};

thread_local Device* Device::current_ = nullptr;

// ---- compiled batches ------------------------------------------------------------------------

struct Module {
  void* handle = nullptr;
  uops_emu::Runtime** runtime = nullptr;
};

class EmulatedProgram : public Executable {
 public:
  EmulatedProgram(Program p, codegen::LaunchPlan plan, std::shared_ptr<Module> m,
                  std::vector<Stub> stubs)
      : p_(std::move(p)), plan_(std::move(plan)), m_(std::move(m)), stubs_(std::move(stubs)) {}

  TensorMap run(const TensorMap& inputs, const ParamMap& params) const override {
    Binding b = bind(p_, inputs, params);
    IndexEnv env = b.env();
    Device device;
    *m_->runtime = device.runtime();
    std::vector<codegen::DeviceAddress> buffers;
    for (size_t t = 0; t < p_.tensors.size(); ++t) {
      const TensorInfo& info = p_.tensors[t];
      size_t bytes = size_t(element_count(b.shapes[t])) * dtype_size(info.dtype);
      bool zero = info.role != Role::input && plan_.zero_fill[t];
      buffers.push_back(device.allocate(info.name, bytes, dtype_size(info.dtype), zero ? 0 : 0xff));
      if (info.role == Role::input && bytes)
        std::memcpy(device.host(buffers.back()), inputs.at(info.name).bytes.data(), bytes);
    }
    codegen::DeviceAddress error = device.allocate("error word", sizeof(int), sizeof(int), 0);
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      const codegen::KernelPlan& kp = plan_.kernels[k];
      codegen::PackedArgs args = codegen::pack_args(kp, b, buffers, error);
      device.launch(kp.name, stubs_[k], args.pointers.data(), int(args.pointers.size()),
                    codegen::launch_dims(kp, env), kp.cooperative);
      if (!device.first_fault().empty()) throw Error("CUDA emulation: " + device.first_fault());
    }
    int bits = 0;
    std::memcpy(&bits, device.host(error), sizeof bits);
    if (bits) throw Error(codegen::kernel_error_message(bits));
    TensorMap out;
    for (int t : p_.outputs()) {
      Tensor x(p_.tensors[t].dtype, b.shapes[t]);
      if (!x.bytes.empty()) std::memcpy(x.bytes.data(), device.host(buffers[t]), x.bytes.size());
      out[p_.tensors[t].name] = std::move(x);
    }
    return out;
  }
  std::string backend() const override { return "cuda-emulation"; }
  const Program& program() const override { return p_; }

 private:
  Program p_;
  codegen::LaunchPlan plan_;
  std::shared_ptr<Module> m_;
  std::vector<Stub> stubs_;
};

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

}  // namespace

std::vector<std::unique_ptr<Executable>> emulate_cuda_batch(std::vector<Program> programs,
                                                            const SourceEdit& edit) {
  std::string source = read_text(UOPS_CUDA_SHIM_DIR "/cuda_shim_runtime.h") +
                       read_text(UOPS_CUDA_SHIM_DIR "/cuda_shim.inc");
  std::vector<codegen::LaunchPlan> plans;
  for (size_t i = 0; i < programs.size(); ++i) {
    cuda::CudaModule mod = cuda::emit_cuda_module(programs[i]);
    std::string ns = "uops_emu_p" + std::to_string(i);
    source += "\nnamespace " + ns + " {\n" + as_host_source(edit ? edit(mod.source) : mod.source) +
              "}  // namespace " + ns + "\n";
    for (auto& k : mod.plan.kernels)
      source += "extern \"C\" void " + ns + "_" + k.name + "(void **a, int n) { uops_emu::call(" +
                ns + "::" + k.name + ", a, n); }\n";
    plans.push_back(std::move(mod.plan));
  }
  // The C backend's compile through the kernel cache, with the C++ compiler: the later -x,
  // -std and -O override the C flags it puts first.
  CCompileOptions options;
  const char* cxx = std::getenv("CXX");
  options.compiler = cxx && *cxx ? cxx : "c++";
  options.openmp = false;
  options.extra_flags = {"-x", "c++", "-std=c++20", "-O1", "-w"};
  auto m = std::make_shared<Module>();
  m->handle = cgen::compile_and_load(source, options);
  m->runtime = static_cast<uops_emu::Runtime**>(dlsym(m->handle, "uops_emu_rt"));
  if (!m->runtime) throw Error("CUDA emulation: the shim's runtime pointer is missing");
  std::vector<std::unique_ptr<Executable>> out;
  for (size_t i = 0; i < programs.size(); ++i) {
    std::vector<Stub> stubs;
    for (auto& k : plans[i].kernels) {
      std::string name = "uops_emu_p" + std::to_string(i) + "_" + k.name;
      auto stub = reinterpret_cast<Stub>(dlsym(m->handle, name.c_str()));
      if (!stub) throw Error("CUDA emulation: missing kernel " + name);
      stubs.push_back(stub);
    }
    out.push_back(std::make_unique<EmulatedProgram>(std::move(programs[i]), std::move(plans[i]), m,
                                                    std::move(stubs)));
  }
  return out;
}

std::unique_ptr<Executable> emulate_cuda(Program p, const SourceEdit& edit) {
  std::vector<Program> one;
  one.push_back(std::move(p));
  return std::move(emulate_cuda_batch(std::move(one), edit).front());
}

}  // namespace uops::testing
