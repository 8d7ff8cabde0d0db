#include "uops/oracle/generator.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>
#include <tuple>

#include "uops/error.h"

namespace uops::oracle {

using namespace ir;

namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
// Sizes around common vector and tile widths, where vectorized and tiled kernels keep their tails.
constexpr int64_t kTails[] = {15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};

int64_t draw(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace

struct Generator::Derived {
  OpDef op;
  DType dtype = DType::f32;
  int64_t max_elements = kCaseElements;
  Program program;
  struct Input {
    std::string name;
    int tensor = -1;
  };
  std::vector<Input> inputs;                 // in the OpDef's order
  std::vector<std::string> classes;          // each class of equal axes, named "x.1"
  std::vector<std::vector<int>> axis_class;  // per input: each axis's class
  std::vector<Equality> equalities;          // the assertions union-find did not settle
  // Classes whose size an assertion sets from the others (a gradient op's d<y> is shaped like
  // y): computed, not drawn, so that the assertion holds.
  std::vector<std::pair<int, Index>> derived;
  std::vector<Index> divisors;               // index divisors free of loop variables
  std::map<std::string, ParamRange> ranges;  // every parameter's

  std::string class_name(int input, int axis) const {
    return inputs[input].name + "." + std::to_string(axis);
  }

  // The inputs' shapes per program tensor id, from a case's sizes.
  std::vector<std::vector<int64_t>> tensor_shapes(const std::map<std::string, int64_t>& sizes,
                                                  Shapes* named) const {
    std::vector<std::vector<int64_t>> s(program.tensors.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<int64_t>& dims = s[inputs[i].tensor];
      for (int c : axis_class[i]) dims.push_back(sizes.at(classes[c]));
      if (named) (*named)[inputs[i].name] = dims;
    }
    return s;
  }

  // Why the case is not valid ("" when it is); `elements` gets its element count.
  std::string problem(const Case& c, int64_t* elements) const {
    *elements = kSaturated;
    for (auto& [name, v] : c.sizes)
      if (v < 1) return "size " + name + " is " + std::to_string(v);
    if (op.invalid) {
      std::string why = op.invalid(c.shapes, c.params);
      if (!why.empty()) return why;
    }
    std::vector<std::vector<int64_t>> shapes = tensor_shapes(c.sizes, nullptr);
    IndexEnv env;
    env.dim = [&](int t, int a) { return shapes[t][a]; };
    env.param = [&](const std::string& n) { return c.params.at(n); };
    try {
      for (const Equality& eq : equalities) {
        int64_t a = evaluate(eq.a, env), b = evaluate(eq.b, env);
        if (a != b)
          return index_text(program, eq.a) + " = " + std::to_string(a) + " but " +
                 index_text(program, eq.b) + " = " + std::to_string(b);
      }
      for (const Index& d : divisors)
        if (evaluate(d, env) == 0)
          return "an index is divided by " + index_text(program, d) + " = 0";
      int64_t total = 0;
      for (size_t t = 0; t < program.tensors.size(); ++t) {
        const TensorInfo& info = program.tensors[t];
        int64_t n = 1;
        for (size_t a = 0; a < info.shape.size(); ++a) {
          int64_t d = info.role == Role::input ? shapes[t][a] : evaluate(info.shape[a], env);
          if (d < 1)
            return "tensor '" + info.name + "' would have size " + std::to_string(d) + " on axis " +
                   std::to_string(a) + " (" + index_text(program, info.shape[a]) + ")";
          if (__builtin_mul_overflow(n, d, &n)) n = kSaturated;
        }
        if (__builtin_add_overflow(total, n, &total)) total = kSaturated;
      }
      *elements = total;
    } catch (const Error& e) {
      return e.what();  // an index or shape divided by zero
    }
    return "";
  }

  Case make(uint64_t seed) const {
    Case c;
    c.op = op.name;
    c.dtype = dtype;
    c.seed = seed;
    return c;
  }

  void finish(Case& c) const {
    for (auto& [cls, e] : derived) {
      std::vector<std::vector<int64_t>> shapes = tensor_shapes(c.sizes, nullptr);
      IndexEnv env;
      env.dim = [&](int t, int a) { return shapes[t][a]; };
      env.param = [&](const std::string& n) { return c.params.at(n); };
      try {
        c.sizes[classes[cls]] = evaluate(e, env);
      } catch (const Error&) {
        c.sizes[classes[cls]] = 0;  // divided by zero: `problem` refuses the case
      }
    }
    c.shapes.clear();
    tensor_shapes(c.sizes, &c.shapes);
  }
};

Generator::Generator(const OpDef& op, DType dtype, int64_t max_elements) {
  auto d = std::make_shared<Derived>();
  d->op = op;
  d->dtype = dtype;
  d->max_elements = max_elements;
  d->program = forward_program(op, dtype);
  const Program& p = d->program;
  // Union-find over every input axis; an equality of two plain axis sizes merges their classes.
  std::vector<int> first(p.tensors.size(), -1);
  int n = 0;
  for (const OpInput& in : op.inputs) {
    int t = p.find_tensor(in.name);
    if (t < 0 || p.tensors[t].role != Role::input)
      throw Error("op '" + op.name + "': its graph has no input '" + in.name + "'");
    d->inputs.push_back({in.name, t});
    first[t] = n;
    n += int(p.tensors[t].shape.size());
  }
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> root = [&](int x) {
    return parent[x] == x ? x : parent[x] = root(parent[x]);
  };
  auto slot = [&](const Index& e) {
    return e->kind == IndexKind::Dim && first[e->tensor] >= 0 ? first[e->tensor] + e->axis : -1;
  };
  std::vector<std::pair<int, Index>> derived_slots;
  for (const Equality& eq : p.equalities) {
    int a = slot(eq.a), b = slot(eq.b);
    if (a >= 0 && b >= 0) {
      parent[root(b)] = root(a);
    } else {
      d->equalities.push_back(eq);
      // An input axis asserted equal to an expression over other inputs' axes.
      for (auto [s, e, t] : {std::tuple{a, eq.b, eq.a}, std::tuple{b, eq.a, eq.b}}) {
        bool own = false;
        visit(e, [&](const IndexNode& x) {
          own |= x.kind == IndexKind::Dim && x.tensor == t->tensor;
          own |= x.kind == IndexKind::Var || x.kind == IndexKind::Data;
        });
        if (s >= 0 && !own) derived_slots.emplace_back(s, e);
      }
    }
  }
  std::map<int, int> class_of_root;
  for (size_t i = 0; i < d->inputs.size(); ++i) {
    int t = d->inputs[i].tensor;
    d->axis_class.emplace_back();
    for (size_t a = 0; a < p.tensors[t].shape.size(); ++a) {
      int r = root(first[t] + int(a));
      auto [it, fresh] = class_of_root.emplace(r, int(d->classes.size()));
      if (fresh) d->classes.push_back(d->class_name(int(i), int(a)));
      d->axis_class.back().push_back(it->second);
    }
  }
  // In the order the assertions came (a size may be set from one set before it), once a class.
  for (auto& [s, e] : derived_slots) {
    int cls = -1;
    for (size_t i = 0; i < d->inputs.size(); ++i) {
      int t = d->inputs[i].tensor;
      if (s >= first[t] && s < first[t] + int(p.tensors[t].shape.size()))
        cls = d->axis_class[i][s - first[t]];
    }
    bool seen = false;
    for (auto& [c, unused] : d->derived) seen |= c == cls;
    if (!seen) d->derived.emplace_back(cls, e);
  }
  // Divisors in loop bounds and index expressions that do not depend on the loop variables.
  auto collect = [&](const Index& e) {
    visit(e, [&](const IndexNode& x) {
      if ((x.kind == IndexKind::Div || x.kind == IndexKind::Mod) && !uses_any_var(x.b) &&
          !uses_data(x.b) && !is_const(x.b))
        d->divisors.push_back(x.b);
    });
  };
  for (const Block& b : p.blocks)
    for (const Loop& l : b.loops) {
      collect(l.start);
      collect(l.end);
      for (const Stmt& s : l.stmts) {
        for (const Index& e : s.index) collect(e);
        if (s.arg) collect(s.arg);
        // Visits every node of the value (and rebuilds it, unchanged).
        rewrite(s.value, [&](const Value& v) -> Value {
          for (const Index& e : v->index) collect(e);
          collect(v->ivalue);
          return nullptr;
        });
      }
    }
  for (const std::string& name : p.params) {
    auto it = op.param_ranges.find(name);
    d->ranges[name] = it == op.param_ranges.end() ? ParamRange{} : it->second;
    if (d->ranges[name].lo > d->ranges[name].hi)
      throw Error("op '" + op.name + "': the range of parameter '" + name + "' is empty");
  }
  d_ = std::move(d);
}

Case Generator::random(uint64_t seed) const {
  const Derived& d = *d_;
  std::mt19937_64 rng(seed);
  Case c = d.make(seed);
  size_t k = d.classes.size();
  for (int attempt = 0; attempt < 2000; ++attempt) {
    c.sizes.clear();
    c.params.clear();
    // 65% small, 25% one or two axes at a tail width, 10% larger shapes.
    int64_t mode = attempt < 1000 ? draw(rng, 0, 99) : 0;
    std::vector<bool> pinned(k, false);
    // Small sizes lean to 1-3 so that an op of many axes keeps some of them past 4.
    for (size_t i = 0; i < k; ++i)
      c.sizes[d.classes[i]] = mode >= 90 ? draw(rng, 1, 48) : draw(rng, 1, draw(rng, 0, 1) ? 3 : 8);
    if (mode >= 65 && mode < 90 && k > 0) {
      for (int64_t j = draw(rng, 1, 2); j > 0; --j) {
        size_t i = size_t(draw(rng, 0, int64_t(k) - 1));
        c.sizes[d.classes[i]] = kTails[draw(rng, 0, std::size(kTails) - 1)];
        pinned[i] = true;
      }
    }
    for (auto& [name, r] : d.ranges) c.params[name] = draw(rng, r.lo, r.hi);
    for (auto& [cls, e] : d.derived) pinned[cls] = true;  // halving it would change nothing
    d.finish(c);
    int64_t elements = 0;
    std::string why = d.problem(c, &elements);
    // Over the budget (an eighth of it for small cases, which must stay small however many
    // axes the op has): halve the largest free axis until it fits.
    int64_t budget = mode < 65 ? std::max<int64_t>(1, d.max_elements / 8) : d.max_elements;
    while (why.empty() && elements > budget) {
      size_t largest = k;
      for (size_t i = 0; i < k; ++i)
        if (!pinned[i] && c.sizes[d.classes[i]] > 1 &&
            (largest == k || c.sizes[d.classes[i]] > c.sizes[d.classes[largest]]))
          largest = i;
      if (largest == k) break;
      c.sizes[d.classes[largest]] /= 2;
      d.finish(c);
      why = d.problem(c, &elements);
    }
    if (why.empty() && elements <= budget) return c;
  }
  throw Error("op '" + d.op.name +
              "': no valid case in 2000 draws; declare its parameters' ranges (param_ranges) or "
              "check its description");
}

Case Generator::fixed(uint64_t seed, const Shapes& shapes, const ParamMap& params) const {
  const Derived& d = *d_;
  const std::string& name = d.op.name;
  Case c = d.make(seed);
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    const std::string& input = d.inputs[i].name;
    auto it = shapes.find(input);
    if (it == shapes.end()) throw Error(name + ": no shape given for input '" + input + "'");
    const std::vector<int>& axes = d.axis_class[i];
    if (it->second.size() != axes.size())
      throw Error(name + ": input '" + input + "' has rank " + std::to_string(axes.size()) +
                  ", not " + std::to_string(it->second.size()));
    for (size_t a = 0; a < axes.size(); ++a) {
      auto [pos, fresh] = c.sizes.emplace(d.classes[axes[a]], it->second[a]);
      if (!fresh && pos->second != it->second[a])
        throw Error(name + ": axis " + d.class_name(int(i), int(a)) + " must equal axis " +
                    pos->first + " (" + std::to_string(pos->second) + "), not " +
                    std::to_string(it->second[a]));
    }
  }
  for (auto& [input, dims] : shapes) {
    bool known = false;
    for (auto& in : d.inputs) known |= in.name == input;
    if (!known) throw Error(name + ": it has no input '" + input + "'");
  }
  for (auto& [p, v] : params)
    if (!d.ranges.count(p)) throw Error(name + ": it has no parameter '" + p + "'");
  for (auto& [p, r] : d.ranges) {
    auto it = params.find(p);
    if (it == params.end()) throw Error(name + ": parameter '" + p + "' is not given");
    c.params[p] = it->second;
  }
  d.finish(c);
  int64_t elements = 0;
  std::string why = d.problem(c, &elements);
  std::string text = shapes_text(c.shapes) + (c.params.empty() ? "" : " ") + params_text(c.params);
  if (!why.empty()) throw Error(name + ": " + text + " is not a valid case: " + why);
  if (elements > kMaxCaseElements)
    throw LimitError(
        name + ": " + text + " is too large a case: its tensors hold " +
        (elements == kSaturated ? std::string("more than 2^63") : std::to_string(elements)) +
        " elements (the limit is 2^32)");
  return c;
}

TensorMap Generator::inputs(const Case& c) const {
  return make_inputs(d_->op, c);
}

std::vector<Case> Generator::shrink(const Case& c) const {
  const Derived& d = *d_;
  int64_t limit = elements(c);
  auto smaller = [](int64_t v, int64_t lo) {
    std::vector<int64_t> out;
    for (int64_t w : {lo, v / 2, v - 1})
      if (w >= lo && w < v && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    return out;
  };
  std::vector<Case> out;
  auto consider = [&](Case n) {
    d.finish(n);
    if (n.sizes == c.sizes && n.params == c.params) return;  // a derived size, set back
    int64_t e = 0;
    if (d.problem(n, &e).empty() && e <= limit) out.push_back(std::move(n));
  };
  for (auto& [name, v] : c.sizes)
    for (int64_t w : smaller(v, 1)) {
      Case n = c;
      n.sizes[name] = w;
      consider(n);
    }
  for (auto& [name, v] : c.params)
    for (int64_t w : smaller(v, std::min<int64_t>(d.ranges.at(name).lo, 0))) {
      Case n = c;
      n.params[name] = w;
      consider(n);
    }
  return out;
}

int64_t Generator::elements(const Case& c) const {
  int64_t e = 0;
  d_->problem(c, &e);
  return e;
}

Case random_case(const OpDef& op, DType dtype, uint64_t seed) {
  return Generator(op, dtype).random(seed);
}

Case fixed_case(const OpDef& op, DType dtype, uint64_t seed, const Shapes& shapes,
                const ParamMap& params) {
  return Generator(op, dtype).fixed(seed, shapes, params);
}

std::vector<Case> shrink_candidates(const OpDef& op, const Case& c) {
  return Generator(op, c.dtype).shrink(c);
}

TensorMap make_inputs(const OpDef& op, const Case& c) {
  std::mt19937_64 rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  const std::vector<Values>& modes =
      op.values.empty() ? std::vector<Values>{Values::uniform} : op.values;
  Values mode = modes[draw(rng, 0, int64_t(modes.size()) - 1)];
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  // Large mode shifts each case far enough that exp overflows in f64 without the max shift.
  double offset = mode == Values::large ? (draw(rng, 0, 1) ? 1000.0 : -800.0) : 0.0;
  TensorMap in;
  for (const OpInput& i : op.inputs) {
    Tensor t(i.is_index ? DType::i32 : c.dtype, c.shapes.at(i.name));
    std::pair<int64_t, int64_t> range{0, 4};
    if (i.is_index && i.values) range = i.values(c.shapes, c.params);
    if (range.first > range.second) std::swap(range.first, range.second);
    for (int64_t e = 0; e < t.numel(); ++e) {
      double v = unit(rng);
      if (i.is_index) {
        v = double(draw(rng, range.first, range.second));
      } else if (i.nonzero) {
        v = (v < 0 ? -0.5 : 0.5) + v / 2;  // |v| in [0.5, 1.5]
      } else if (mode == Values::positive) {
        v = 0.05 + (v + 2.0) * 0.75;
      } else if (mode == Values::ties) {
        v = double(draw(rng, -3, 3));
      } else if (mode == Values::large) {
        v += offset;
      }
      t.set(e, v);
    }
    in[i.name] = std::move(t);
  }
  return in;
}

std::string case_text(const Case& c) {
  std::string out = c.op + " " + dtype_name(c.dtype) + " seed=" + std::to_string(c.seed);
  for (auto& [name, dims] : c.shapes) {
    out += " " + name + "=[";
    for (size_t a = 0; a < dims.size(); ++a) out += (a ? "," : "") + std::to_string(dims[a]);
    out += "]";
  }
  for (auto& [name, v] : c.params) out += " " + name + "=" + std::to_string(v);
  return out;
}

Case parse_case(const OpDef& op, const std::string& text) {
  std::istringstream is(text);
  std::string name, dtype, word;
  is >> name >> dtype;
  auto bad = [&](const std::string& why) {
    return Error("case '" + text + "': " + why +
                 " (expected: OP DTYPE seed=N INPUT=[D0,D1,...] ... PARAM=V ...)");
  };
  if (name != op.name) throw bad("it is a case of op '" + name + "', not of '" + op.name + "'");
  DType dt = DType::f32;
  try {
    dt = dtype_from_name(dtype);
  } catch (const Error&) {
    throw bad("'" + dtype + "' is not a dtype");
  }
  auto integer = [&](const std::string& s) {
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size()) throw bad("'" + s + "' is not an integer");
    return v;
  };
  uint64_t seed = 0;
  bool seeded = false;
  Shapes shapes;
  ParamMap params;
  while (is >> word) {
    size_t eq = word.find('=');
    if (eq == std::string::npos || eq == 0) throw bad("'" + word + "' is not NAME=VALUE");
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "seed") {
      seed = uint64_t(integer(value));
      seeded = true;
    } else if (!value.empty() && value.front() == '[') {
      if (value.back() != ']') throw bad("'" + word + "' lacks its ']'");
      std::vector<int64_t>& dims = shapes[key];
      std::stringstream ds(value.substr(1, value.size() - 2));
      for (std::string item; std::getline(ds, item, ',');) dims.push_back(integer(item));
    } else {
      params[key] = integer(value);
    }
  }
  if (!seeded) throw bad("no seed");
  return Generator(op, dt).fixed(seed, shapes, params);
}

std::string shapes_text(const Shapes& shapes, const char* sep) {
  std::string out;
  for (auto& [name, dims] : shapes) {
    if (!out.empty()) out += sep;
    out += name + "=";
    for (size_t a = 0; a < dims.size(); ++a) out += (a ? "," : "") + std::to_string(dims[a]);
  }
  return out;
}

std::string params_text(const ParamMap& params, const char* sep) {
  std::string out;
  for (auto& [name, v] : params) {
    if (!out.empty()) out += sep;
    out += name + "=" + std::to_string(v);
  }
  return out;
}

}  // namespace uops::oracle
