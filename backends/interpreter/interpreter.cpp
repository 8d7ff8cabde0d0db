#include "uops/backends/interpreter.h"

#include <functional>
#include <optional>

#include "backends/backend_entries.h"
#include "uops/error.h"
#include "uops/ir/binding.h"
#include "uops/ir/scalar_semantics.h"

namespace uops {

using namespace ir;

namespace {

template <typename T>
struct Frame {
  std::vector<int64_t> vars;
  std::vector<T> carried;
  std::vector<int64_t> arg;
};

// An index expression compiled for one binding: c0 + sum(coef * var), or a closure.
template <typename T>
struct CIndex {
  int64_t c0 = 0;
  std::vector<std::pair<int, int64_t>> terms;
  std::function<int64_t(const Frame<T>&)> general;

  int64_t operator()(const Frame<T>& f) const {
    if (general) return general(f);
    int64_t r = c0;
    for (auto& [v, c] : terms) r += c * f.vars[v];
    return r;
  }
};

struct Storage {
  DType dtype;
  const void* read;  // inputs are read-only
  void* write;
};

template <typename T>
T read_element(const Storage& s, int64_t off) {
  switch (s.dtype) {
    case DType::f32:
      return T(static_cast<const float*>(s.read)[off]);
    case DType::f64:
      return T(static_cast<const double*>(s.read)[off]);
    case DType::i32:
      return T(static_cast<const int32_t*>(s.read)[off]);
  }
  return T(0);
}

template <typename T>
void write_element(const Storage& s, int64_t off, T v) {
  switch (s.dtype) {
    case DType::f32:
      static_cast<float*>(s.write)[off] = float(v);
      break;
    case DType::f64:
      static_cast<double*>(s.write)[off] = double(v);
      break;
    case DType::i32:
      static_cast<int32_t*>(s.write)[off] = to_i32(v);
      break;
  }
}

template <typename T>
class Run {
 public:
  using VFn = std::function<T(Frame<T>&)>;
  using SFn = std::function<void(Frame<T>&)>;

  Run(const Program& p, const TensorMap& inputs, const ParamMap& params)
      : p_(p), b_(bind(p, inputs, params)), env_(b_.env()) {
    owned_.resize(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) {
      const TensorInfo& info = p.tensors[t];
      strides_.push_back(std::vector<int64_t>(info.shape.size()));
      int64_t s = 1;
      for (size_t a = info.shape.size(); a-- > 0;) {
        strides_[t][a] = s;
        s *= b_.shapes[t][a];
      }
      if (info.role == Role::input) {
        storage_.push_back({info.dtype, inputs.at(info.name).bytes.data(), nullptr});
      } else {
        owned_[t] = Tensor(info.dtype, b_.shapes[t]);
        storage_.push_back({info.dtype, owned_[t].bytes.data(), owned_[t].bytes.data()});
      }
    }
    carried_ops_.resize(p.num_carried, ReduceOp::sum);
    for (auto& blk : p.blocks)
      for (auto& l : blk.loops)
        for (auto& c : l.carried) carried_ops_[c.id] = c.op;
  }

  TensorMap execute() {
    Frame<T> f;
    f.vars.assign(p_.num_vars, 0);
    f.carried.assign(p_.num_carried, T(0));
    f.arg.assign(p_.num_carried, 0);
    for (auto& blk : p_.blocks) {
      CBlock cb = compile_block(blk);
      run_loop(cb, 0, f);
    }
    TensorMap out;
    for (int t : p_.outputs()) out[p_.tensors[t].name] = std::move(owned_[t]);
    return out;
  }

 private:
  struct CLoop {
    int var;
    CIndex<T> start, end;
    std::vector<std::pair<int, T>> resets;  // carried id, identity
    std::vector<SFn> stmts;
  };
  struct CBlock {
    std::vector<CLoop> loops;
  };

  std::optional<CIndex<T>> affine(const Index& e) {
    CIndex<T> r;
    switch (e->kind) {
      case IndexKind::Const:
        r.c0 = e->constant;
        return r;
      case IndexKind::Dim:
      case IndexKind::Param:
        r.c0 = evaluate(e, env_);
        return r;
      case IndexKind::Var:
        r.terms.push_back({e->var, 1});
        return r;
      case IndexKind::Data:
        return std::nullopt;
      default:
        break;
    }
    auto a = affine(e->a);
    if (!a) return std::nullopt;
    if (e->kind == IndexKind::Neg) return scale(*a, -1);
    auto b = affine(e->b);
    if (!b) return std::nullopt;
    switch (e->kind) {
      case IndexKind::Add:
        return combine(*a, *b, 1);
      case IndexKind::Sub:
        return combine(*a, *b, -1);
      case IndexKind::Mul:
        if (a->terms.empty()) return scale(*b, a->c0);
        if (b->terms.empty()) return scale(*a, b->c0);
        return std::nullopt;
      default:
        if (!a->terms.empty() || !b->terms.empty()) return std::nullopt;
        // A division by zero raises when the expression runs, not here: in a loop that runs
        // zero times it never does (docs/design.md §3.4), as in generated code.
        if ((e->kind == IndexKind::Div || e->kind == IndexKind::Mod) && b->c0 == 0)
          return std::nullopt;
        r.c0 = evaluate(idx::binary(e->kind, idx::constant(a->c0), idx::constant(b->c0)), env_);
        return r;
    }
  }
  static CIndex<T> scale(CIndex<T> a, int64_t k) {
    a.c0 *= k;
    for (auto& t : a.terms) t.second *= k;
    return a;
  }
  static CIndex<T> combine(CIndex<T> a, const CIndex<T>& b, int64_t sign) {
    a.c0 += sign * b.c0;
    for (auto& [v, c] : b.terms) {
      bool found = false;
      for (auto& t : a.terms)
        if (t.first == v) {
          t.second += sign * c;
          found = true;
        }
      if (!found) a.terms.push_back({v, sign * c});
    }
    return a;
  }

  CIndex<T> compile_index(const Index& e) {
    if (auto a = affine(e)) return *a;
    CIndex<T> r;
    r.general = closure(e);
    return r;
  }

  std::function<int64_t(const Frame<T>&)> closure(const Index& e) {
    if (auto a = affine(e)) return [a = *a](const Frame<T>& f) { return a(f); };
    if (e->kind == IndexKind::Data) {
      int t = e->tensor;
      std::vector<CIndex<T>> args;
      for (auto& x : e->args) args.push_back(compile_index(x));
      Storage s = storage_[t];
      std::vector<int64_t> shape = b_.shapes[t], stride = strides_[t];
      return [args, s, shape, stride](const Frame<T>& f) -> int64_t {
        int64_t off = 0;
        for (size_t k = 0; k < args.size(); ++k) {
          int64_t i = args[k](f);
          if (i < 0 || i >= shape[k]) return 0;
          off += i * stride[k];
        }
        return static_cast<const int32_t*>(s.read)[off];
      };
    }
    if (e->kind == IndexKind::Neg) {
      auto a = closure(e->a);
      return [a](const Frame<T>& f) { return -a(f); };
    }
    auto a = closure(e->a), b = closure(e->b);
    switch (e->kind) {
      case IndexKind::Add:
        return [a, b](const Frame<T>& f) { return a(f) + b(f); };
      case IndexKind::Sub:
        return [a, b](const Frame<T>& f) { return a(f) - b(f); };
      case IndexKind::Mul:
        return [a, b](const Frame<T>& f) { return a(f) * b(f); };
      case IndexKind::Div:
        return [a, b](const Frame<T>& f) { return floor_div(a(f), b(f)); };
      case IndexKind::Mod:
        return [a, b](const Frame<T>& f) { return floor_mod(a(f), b(f)); };
      case IndexKind::Min:
        return [a, b](const Frame<T>& f) { return std::min(a(f), b(f)); };
      default:
        return [a, b](const Frame<T>& f) { return std::max(a(f), b(f)); };
    }
  }

  // Element offset of an access, or -1 when it falls outside the tensor.
  struct CAccess {
    std::vector<CIndex<T>> index;
    std::vector<int64_t> shape, stride;
    bool checked;
    int64_t offset(const Frame<T>& f) const {
      int64_t off = 0;
      for (size_t k = 0; k < index.size(); ++k) {
        int64_t i = index[k](f);
        if (i < 0 || i >= shape[k]) {
          if (!checked) throw InternalError("an access proven in range fell outside its tensor");
          return -1;
        }
        off += i * stride[k];
      }
      return off;
    }
  };

  CAccess compile_access(int t, const std::vector<Index>& index, bool checked) {
    CAccess a;
    for (auto& e : index) a.index.push_back(compile_index(e));
    a.shape = b_.shapes[t];
    a.stride = strides_[t];
    a.checked = checked;
    return a;
  }

  VFn compile_value(const Value& v) {
    switch (v->kind) {
      case ValueKind::Const:
        return [c = T(v->constant)](Frame<T>&) { return c; };
      case ValueKind::Load: {
        CAccess a = compile_access(v->tensor, v->index, v->checked);
        Storage s = storage_[v->tensor];
        T fill = T(v->fill);
        return [a, s, fill](Frame<T>& f) {
          int64_t off = a.offset(f);
          return off < 0 ? fill : read_element<T>(s, off);
        };
      }
      case ValueKind::Carried: {
        int id = v->carried;
        if (is_arg_reduce(carried_ops_[id])) return [id](Frame<T>& f) { return T(f.arg[id]); };
        return [id](Frame<T>& f) { return f.carried[id]; };
      }
      case ValueKind::IndexValue: {
        CIndex<T> e = compile_index(v->ivalue);
        return [e](Frame<T>& f) { return T(e(f)); };
      }
      case ValueKind::Unary: {
        VFn a = compile_value(v->a);
        UnaryOp op = v->uop;
        return [a, op](Frame<T>& f) { return apply_unary<T>(op, a(f)); };
      }
      case ValueKind::Binary: {
        VFn a = compile_value(v->a), b = compile_value(v->b);
        BinaryOp op = v->bop;
        return [a, b, op](Frame<T>& f) { return apply_binary<T>(op, a(f), b(f)); };
      }
      case ValueKind::Ternary: {
        VFn c = compile_value(v->a), a = compile_value(v->b), b = compile_value(v->c);
        return [c, a, b](Frame<T>& f) { return c(f) != T(0) ? a(f) : b(f); };
      }
    }
    UOPS_ASSERT(false, "unknown value kind");
  }

  SFn compile_stmt(const Stmt& s) {
    VFn value = compile_value(s.value);
    if (s.kind == StmtKind::reduce) {
      int id = s.carried;
      ReduceOp op = s.op;
      if (s.arg) {
        CIndex<T> arg = compile_index(s.arg);
        return [value, id, op, arg](Frame<T>& f) {
          if (reduce_step<T>(op, f.carried[id], value(f))) f.arg[id] = arg(f);
        };
      }
      return [value, id, op](Frame<T>& f) { reduce_step<T>(op, f.carried[id], value(f)); };
    }
    CAccess a = compile_access(s.tensor, s.index, s.checked);
    Storage st = storage_[s.tensor];
    if (s.kind == StmtKind::assign)
      return [value, a, st](Frame<T>& f) {
        T v = value(f);
        int64_t off = a.offset(f);
        if (off >= 0) write_element<T>(st, off, v);
      };
    ReduceOp op = s.op;
    return [value, a, st, op](Frame<T>& f) {
      T v = value(f);
      int64_t off = a.offset(f);
      if (off < 0) return;
      T acc = read_element<T>(st, off);
      reduce_step<T>(op, acc, v);
      write_element<T>(st, off, acc);
    };
  }

  CBlock compile_block(const Block& blk) {
    CBlock cb;
    for (auto& l : blk.loops) {
      CLoop cl;
      cl.var = l.var;
      cl.start = compile_index(l.start);
      cl.end = compile_index(l.end);
      for (auto& c : l.carried) cl.resets.push_back({c.id, T(reduce_identity(c.op))});
      for (auto& s : l.stmts) cl.stmts.push_back(compile_stmt(s));
      cb.loops.push_back(std::move(cl));
    }
    return cb;
  }

  void run_loop(const CBlock& b, size_t k, Frame<T>& f) {
    const CLoop& l = b.loops[k];
    int64_t end = l.end(f);
    for (int64_t v = l.start(f); v < end; ++v) {
      f.vars[l.var] = v;
      for (auto& [id, identity] : l.resets) {
        f.carried[id] = identity;
        f.arg[id] = 0;
      }
      if (k + 1 < b.loops.size()) run_loop(b, k + 1, f);
      for (auto& s : l.stmts) s(f);
    }
  }

  const Program& p_;
  Binding b_;
  IndexEnv env_;
  std::vector<Tensor> owned_;
  std::vector<Storage> storage_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<ReduceOp> carried_ops_;
};

class Interpreter : public Executable {
 public:
  explicit Interpreter(Program p) : p_(std::move(p)) {}
  TensorMap run(const TensorMap& inputs, const ParamMap& params) const override {
    return interpret(p_, inputs, params);
  }
  std::string backend() const override { return "interp"; }
  const Program& program() const override { return p_; }

 private:
  Program p_;
};

}  // namespace

TensorMap interpret(const Program& p, const TensorMap& inputs, const ParamMap& params) {
  if (p.value_type() == DType::f64) return Run<double>(p, inputs, params).execute();
  return Run<float>(p, inputs, params).execute();
}

std::unique_ptr<Executable> make_interpreter(Program p) {
  return std::make_unique<Interpreter>(std::move(p));
}

Backend interpreter_backend() {
  return {"interp", "the interpreter", [] { return std::string(); }, make_interpreter, nullptr};
}

}  // namespace uops
