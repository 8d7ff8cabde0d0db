#include "uops/oracle/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "uops/error.h"

namespace uops::oracle {

using namespace ir;

namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
// Common vector and tile widths: a tail is drawn at a valid size next to one of them.
constexpr int64_t kWidths[] = {8, 16, 32, 64, 128, 256, 1024};

int64_t draw(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// splitmix64's finalizer: consecutive inputs give unrelated outputs.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The largest size trial `trial` may draw: 16, doubling every 4 trials.
int64_t size_cap(int trial) {
  return int64_t(16) << std::min(std::max(trial, 0) / 4, 24);
}

}  // namespace

struct Generator::Derived {
  OpDef op;
  DType dtype = DType::f32;
  int64_t max_elements = kCaseElements;
  int64_t max_axis = 0;
  Graph graph;
  Description description;
  Program program;
  struct Input {
    std::string name;
    int tensor = -1;
  };
  std::vector<Input> inputs;                 // in the OpDef's order
  std::vector<std::string> classes;          // each class of equal axes, named "x.1"
  std::vector<std::vector<int>> axis_class;  // per input: each axis's class
  std::vector<Equality> equalities;          // the assertions union-find did not settle
  // Per class: an assertion sets its size from several others (a gradient op's d<y> is shaped
  // like y), so it is never drawn or halved; `finish` solves it.
  std::vector<bool> computed;
  std::vector<Index> divisors;               // index divisors free of loop variables
  std::map<std::string, ParamRange> ranges;  // every parameter's
  std::map<int, size_t> graph_input;         // graph node id -> position in `inputs`
  // Per input: the size of the axis an index input selects along (null when it selects none).
  std::vector<Index> selects;
  std::vector<Index> reductions;   // each reduce node's length
  std::vector<int> reduced;        // classes of the input axes a reduction runs along
  std::vector<int> tiled;          // classes of the input axes an output has: where tiles lie
  std::map<int, size_t> input_of;  // program tensor id -> position in `inputs`

  // The classes an expression of the program reads.
  std::vector<int> classes_in(const Index& e) const {
    std::vector<int> out;
    visit(e, [&](const IndexNode& x) {
      auto in = x.kind == IndexKind::Dim ? input_of.find(x.tensor) : input_of.end();
      if (in == input_of.end()) return;
      int cls = axis_class[in->second][x.axis];
      if (std::find(out.begin(), out.end(), cls) == out.end()) out.push_back(cls);
    });
    return out;
  }

  int64_t value(const Index& e, const Case& c) const {
    IndexEnv env;
    env.dim = [&](int t, int a) { return c.sizes.at(classes[axis_class[input_of.at(t)][a]]); };
    env.param = [&](const std::string& n) { return c.params.at(n); };
    return evaluate(e, env);
  }

  // The one solver of asserted sizes: the equalities the union-find left force sizes
  // (`dA1 = 2 * dB1`, `dy.1 = (x.1 - w.1) / s + 1`): a side that reads one class not held takes
  // the size that makes it equal to the other side, found by bisection (a side never decreases
  // as a size grows). Unsolvable ones are left for `problem` to refuse.
  void settle(Case& c, std::vector<bool> held) const {
    for (int pass = 0; pass < 2; ++pass)
      for (const Equality& eq : equalities)
        for (int flip = 0; flip < 2; ++flip) {
          const Index& side = flip ? eq.b : eq.a;
          const Index& other = flip ? eq.a : eq.b;
          std::vector<int> mine = classes_in(side), theirs = classes_in(other);
          if (mine.size() != 1 || held[size_t(mine[0])] ||
              std::find(theirs.begin(), theirs.end(), mine[0]) != theirs.end())
            continue;
          int64_t& size = c.sizes[classes[size_t(mine[0])]];
          int64_t drawn = size;
          try {
            int64_t target = value(other, c), lo = 1, hi = max_elements;
            while (lo < hi) {
              size = lo + (hi - lo) / 2;
              if (value(side, c) < target) {
                lo = size + 1;
              } else {
                hi = size;
              }
            }
            size = lo;
            if (value(side, c) == target) {
              held[size_t(mine[0])] = true;
              break;
            }
          } catch (const Error&) {
          }
          size = drawn;
        }
  }

  // Evaluates an expression of the graph (Dim over input node ids) on a case.
  int64_t graph_value(const Index& e, const Case& c) const {
    IndexEnv env;
    env.dim = [&](int node, int a) { return c.shapes.at(inputs[graph_input.at(node)].name)[a]; };
    env.param = [&](const std::string& n) { return c.params.at(n); };
    return evaluate(e, env);
  }

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

  // Solves the computed classes from all the others, then fills in the shapes.
  void finish(Case& c) const {
    std::vector<bool> held(classes.size());
    for (size_t i = 0; i < held.size(); ++i) held[i] = !computed[i];
    settle(c, held);
    c.shapes.clear();
    tensor_shapes(c.sizes, &c.shapes);
  }
};

uint64_t trial_seed(uint64_t seed, int trial) {
  // 63 bits, so that the seed reads back as a signed integer anywhere it is printed.
  return mix(mix(seed) ^ uint64_t(uint32_t(trial))) >> 1;
}

Description describe(const Graph& g) {
  Description d;
  for (const UopNode& n : g.nodes()) {
    bool cmp_reduce = n.rop == ReduceOp::max || n.rop == ReduceOp::min ||
                      n.rop == ReduceOp::argmax || n.rop == ReduceOp::argmin;
    if (n.kind == UopKind::reduce) (cmp_reduce ? d.compares : d.sums) = true;
    if (n.kind == UopKind::binary && (n.bop == BinaryOp::max || n.bop == BinaryOp::min))
      d.compares = true;
    bool grows = (n.kind == UopKind::unary && (n.uop == UnaryOp::exp || n.uop == UnaryOp::log)) ||
                 (n.kind == UopKind::binary && n.bop == BinaryOp::pow);
    d.exponential |= grows;
    d.transcendental |= grows || (n.kind == UopKind::unary &&
                                  (n.uop == UnaryOp::tanh || n.uop == UnaryOp::sigmoid ||
                                   n.uop == UnaryOp::sin || n.uop == UnaryOp::cos));
  }
  return d;
}

Generator::Generator(const OpDef& op, DType dtype, int64_t max_elements, int64_t max_axis) {
  auto d = std::make_shared<Derived>();
  d->op = op;
  d->dtype = dtype;
  d->max_elements = max_elements;
  d->max_axis = max_axis;
  d->program = forward_program(op, dtype);
  d->graph = op.build(dtype);
  d->description = describe(d->graph);
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
  for (size_t i = 0; i < d->inputs.size(); ++i) d->input_of[d->inputs[i].tensor] = i;
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::function<int(int)> root = [&](int x) {
    return parent[x] == x ? x : parent[x] = root(parent[x]);
  };
  auto slot = [&](const Index& e) {
    return e->kind == IndexKind::Dim && first[e->tensor] >= 0 ? first[e->tensor] + e->axis : -1;
  };
  std::vector<int> computed_slots;
  for (const Equality& eq : p.equalities) {
    int a = slot(eq.a), b = slot(eq.b);
    if (a >= 0 && b >= 0) {
      parent[root(b)] = root(a);
    } else {
      d->equalities.push_back(eq);
      // An input axis asserted equal to an expression over several other axes (a gradient
      // op's d<y> shaped like y) is computed from them, never drawn. One over a single axis
      // (`dA1 = 2 * dB1`) may be drawn on either side, a tail included.
      for (auto [s, e, t] : {std::tuple{a, eq.b, eq.a}, std::tuple{b, eq.a, eq.b}}) {
        bool own = false;
        std::set<std::pair<int, int>> axes;
        visit(e, [&](const IndexNode& x) {
          own |= x.kind == IndexKind::Dim && x.tensor == t->tensor;
          own |= x.kind == IndexKind::Var || x.kind == IndexKind::Data;
          if (x.kind == IndexKind::Dim) axes.emplace(x.tensor, x.axis);
        });
        if (s >= 0 && !own && axes.size() != 1) computed_slots.push_back(s);
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
  d->computed.assign(d->classes.size(), false);
  for (int s : computed_slots)
    for (size_t i = 0; i < d->inputs.size(); ++i) {
      int t = d->inputs[i].tensor;
      if (s >= first[t] && s < first[t] + int(p.tensors[t].shape.size()))
        d->computed[size_t(d->axis_class[i][s - first[t]])] = true;
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
  // The graph's inputs, the axes index inputs select along, and the reductions.
  const std::vector<UopNode>& nodes = d->graph.nodes();
  for (size_t id = 0; id < nodes.size(); ++id)
    for (size_t i = 0; i < d->inputs.size(); ++i)
      if (nodes[id].kind == UopKind::input && nodes[id].name == d->inputs[i].name)
        d->graph_input[int(id)] = i;
  for (int t : p.outputs())
    for (const Index& e : p.tensors[t].shape)
      if (e->kind == IndexKind::Dim && first[e->tensor] >= 0) {
        for (size_t i = 0; i < d->inputs.size(); ++i)
          if (d->inputs[i].tensor == e->tensor) {
            int cls = d->axis_class[i][e->axis];
            if (std::find(d->tiled.begin(), d->tiled.end(), cls) == d->tiled.end())
              d->tiled.push_back(cls);
          }
      }
  d->selects.resize(d->inputs.size());
  for (const UopNode& n : nodes) {
    if (n.kind == UopKind::reduce) {
      Index length = idx::constant(1);
      for (int a : n.axes) length = idx::mul(length, nodes[n.operands[0]].shape[a]);
      d->reductions.push_back(length);
      // A reduced axis that is an input's axis: where a long axis does the most good.
      for (int a : n.axes) {
        const Index& e = nodes[n.operands[0]].shape[a];
        auto in = e->kind == IndexKind::Dim ? d->graph_input.find(e->tensor) : d->graph_input.end();
        if (in != d->graph_input.end()) {
          int cls = d->axis_class[in->second][e->axis];
          if (std::find(d->reduced.begin(), d->reduced.end(), cls) == d->reduced.end())
            d->reduced.push_back(cls);
        }
      }
    }
    if (n.kind != UopKind::select) continue;
    int from = n.operands[1];  // back through reindexing and casts to the input it reads
    while (nodes[from].kind == UopKind::reindex || nodes[from].kind == UopKind::cast)
      from = nodes[from].operands[0];
    auto it = d->graph_input.find(from);
    if (it != d->graph_input.end()) d->selects[it->second] = nodes[n.operands[0]].shape[n.axis];
  }
  d_ = std::move(d);
}

Case Generator::random(uint64_t seed, int trial, int* redrawn) const {
  const Derived& d = *d_;
  std::mt19937_64 rng(seed);
  Case c = d.make(seed);
  size_t k = d.classes.size();
  // No single axis past the budget: a tensor that has it holds at least that many elements.
  int64_t hard = d.max_axis > 0 ? std::min(d.max_axis, d.max_elements) : d.max_elements;
  int64_t cap = std::min(size_cap(trial), hard);
  std::vector<int64_t> widths;
  for (int64_t w : kWidths)
    if (w <= cap) widths.push_back(w);
  if (redrawn) *redrawn = 0;
  for (int attempt = 0; attempt < 2000; ++attempt) {
    c.sizes.clear();
    c.params.clear();
    // 52% small, 15% a tail, 12% a corner (tails on two axes), 6% every axis large (halved to
    // fit an eighth of the budget, so they end up balanced), 15% one long axis, the others 1.
    // The shares and budgets keep the mean case about as cheap as when no axis passed 129.
    int64_t pick = attempt < 1000 ? draw(rng, 0, 99) : 0;
    enum Shape { small, tail, corner, balanced, along };
    Shape shape = pick < 52   ? small
                  : pick < 67 ? tail
                  : pick < 79 ? corner
                  : pick < 85 ? balanced
                              : along;
    enum Hold { free, kept, pinned };  // a long axis is halved last, a tail never
    std::vector<Hold> hold(k, free);
    for (size_t i = 0; i < k; ++i) {
      // Small sizes lean to 1-3 so that an op of many axes keeps some of them past 4.
      int64_t v = shape == balanced ? draw(rng, 1, cap)
                  : shape == along  ? 1
                  : shape == small  ? draw(rng, 1, draw(rng, 0, 1) ? 3 : 8)
                                    : draw(rng, 1, draw(rng, 0, 3) ? 3 : 8);
      c.sizes[d.classes[i]] = std::min(v, cap);
    }
    if (shape == along && k > 0) {
      // Half the time an axis a reduction runs along. Log-uniform from 192 (or the cap) to 640
      // or, in an eighth of them, to the cap: past 256 in most, thousands in some.
      size_t i = !d.reduced.empty() && draw(rng, 0, 1)
                     ? size_t(d.reduced[size_t(draw(rng, 0, int64_t(d.reduced.size()) - 1))])
                     : size_t(draw(rng, 0, int64_t(k) - 1));
      int64_t top = draw(rng, 0, 7) ? std::min<int64_t>(cap, 640) : cap;
      double lo = std::log2(double(std::min<int64_t>(192, top))), hi = std::log2(double(top));
      double e = std::uniform_real_distribution<double>(lo, hi)(rng);
      c.sizes[d.classes[i]] = std::clamp<int64_t>(int64_t(std::exp2(e)), 1, cap);
      hold[i] = kept;
    }
    struct Tail {
      size_t axis;
      int64_t size, step;  // the size aimed at, and which way to look for a valid one
    };
    std::vector<Tail> tails;
    // A corner's tails are next to 16 or 32: past the first tile of 8, and small enough that
    // two of them fit the budget.
    std::vector<int64_t> corners;
    for (int64_t w : {16, 32})
      if (w <= cap) corners.push_back(w);
    const std::vector<int64_t>& choices = shape == corner ? corners : widths;
    if ((shape == tail || shape == corner) && k > 0 && !choices.empty()) {
      // A corner's two axes are an output's when it has two.
      bool tiled = shape == corner && d.tiled.size() >= 2;
      size_t n = shape == corner ? std::min<size_t>(2, k) : 1;
      while (tails.size() < n) {
        size_t i = tiled ? size_t(d.tiled[size_t(draw(rng, 0, int64_t(d.tiled.size()) - 1))])
                         : size_t(draw(rng, 0, int64_t(k) - 1));
        if (hold[i] == pinned) continue;
        // A corner's tails are next to 32 in a quarter of them, else next to 16.
        int64_t w = shape == corner ? choices[draw(rng, 0, 3) ? 0 : choices.size() - 1]
                                    : choices[size_t(draw(rng, 0, int64_t(choices.size()) - 1))];
        int64_t r = draw(rng, 0, 4), delta = r < 2 ? -1 : r < 4 ? 1 : 0;
        tails.push_back({i, std::clamp<int64_t>(w + delta, 1, hard), delta < 0 ? -1 : 1});
        c.sizes[d.classes[i]] = tails.back().size;
        hold[i] = pinned;
      }
    }
    for (auto& [name, r] : d.ranges) c.params[name] = draw(rng, r.lo, r.hi);
    // An axis an assertion sets from the others is solved by `finish`: never drawn or halved.
    for (size_t i = 0; i < k; ++i)
      if (d.computed[i]) hold[i] = pinned;
    std::vector<bool> held(k);
    for (size_t i = 0; i < k; ++i) held[i] = hold[i] != free;
    d.settle(c, held);
    d.finish(c);
    int64_t elements = 0;
    std::string why = d.problem(c, &elements);
    // A constrained axis (even, a multiple of a parameter) takes the nearest size it accepts,
    // looking first the way the tail leans.
    for (const Tail& t : tails) {
      if (why.empty()) break;
      for (int64_t o = 1; o <= 8 && !why.empty(); ++o)
        for (int64_t v : {t.size + o * t.step, t.size - o * t.step}) {
          if (v < 1 || v > hard) continue;
          c.sizes[d.classes[t.axis]] = v;
          d.settle(c, held);
          d.finish(c);
          why = d.problem(c, &elements);
          if (why.empty()) break;
        }
      if (!why.empty()) {
        c.sizes[d.classes[t.axis]] = t.size;
        d.settle(c, held);
        d.finish(c);
        why = d.problem(c, &elements);
      }
    }

    // Over the budget (an eighth of it for small and balanced cases, which must stay small
    // however many axes the op has, a quarter for tails and corners): halve the largest free axis,
    // the long one last, until it fits.
    int64_t budget = shape == small || shape == balanced ? std::max<int64_t>(1, d.max_elements / 8)
                     : shape == tail || shape == corner  ? std::max<int64_t>(1, d.max_elements / 4)
                                                         : d.max_elements;
    while (why.empty() && elements > budget) {
      size_t largest = k;
      for (Hold level : {free, kept}) {
        for (size_t i = 0; i < k; ++i)
          if (hold[i] == level && c.sizes[d.classes[i]] > 1 &&
              (largest == k || c.sizes[d.classes[i]] > c.sizes[d.classes[largest]]))
            largest = i;
        if (largest != k) break;
      }
      if (largest == k) break;
      c.sizes[d.classes[largest]] /= 2;
      d.finish(c);
      why = d.problem(c, &elements);
    }
    if (why.empty() && elements <= budget) return c;
    if (redrawn && !why.empty()) ++*redrawn;  // over the budget is no fault of the op's
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
  const Derived& d = *d_;
  const OpDef& op = d.op;
  std::mt19937_64 rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  // Left at uniform, the values follow the description: past exp's range (every value shifted
  // by +1000 or -800) where it has exp, log or pow; scaled by 1000 where it sums (a shift there
  // would measure only the cancellation in x - mean(x)); ties where it compares.
  std::vector<Values> modes = op.values.empty() ? std::vector<Values>{Values::uniform} : op.values;
  size_t scaled = modes.size() + 1;  // the position of the scaled uniform mode, if any
  if (modes == std::vector<Values>{Values::uniform}) {
    if (d.description.exponential) modes.push_back(Values::large);
    if (d.description.sums) {
      scaled = modes.size();
      modes.push_back(Values::uniform);
    }
    if (d.description.compares) modes.push_back(Values::ties);
  }
  size_t pick = size_t(draw(rng, 0, int64_t(modes.size()) - 1));
  Values mode = modes[pick];
  double scale = pick == scaled ? 1000.0 : 1.0;
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  // Large mode shifts each case far enough that exp overflows in f64 without the max shift.
  double offset = mode == Values::large ? (draw(rng, 0, 1) ? 1000.0 : -800.0) : 0.0;
  TensorMap in;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const OpInput& input = op.inputs[i];
    Tensor t(input.is_index ? DType::i32 : c.dtype, c.shapes.at(input.name));
    // An index input meets its bounds: 0 and n - 1 of the axis it selects along, and, where
    // the op declares a range past them (its out-of-range behaviour), -1 and n.
    std::pair<int64_t, int64_t> range{0, 4};
    std::vector<int64_t> bounds;
    if (input.is_index) {
      int64_t n = d.selects[i] ? d.graph_value(d.selects[i], c) : 0;
      if (input.values) {
        range = input.values(c.shapes, c.params);
      } else if (n > 0) {
        range = {0, n - 1};
      }
      if (range.first > range.second) std::swap(range.first, range.second);
      for (int64_t b : {range.first, range.second, int64_t(0), n - 1, int64_t(-1), n})
        if (b >= range.first && b <= range.second) bounds.push_back(b);
    }
    for (int64_t e = 0; e < t.numel(); ++e) {
      double v = unit(rng);
      if (input.is_index) {
        v = double(draw(rng, 0, 3) == 0 ? bounds[size_t(draw(rng, 0, int64_t(bounds.size()) - 1))]
                                        : draw(rng, range.first, range.second));
      } else if (input.nonzero) {
        v = (v < 0 ? -0.5 : 0.5) + v / 2;  // |v| in [0.5, 1.5]
      } else if (mode == Values::positive) {
        v = 0.05 + (v + 2.0) * 0.75;
      } else if (mode == Values::ties) {
        v = double(draw(rng, -3, 3));
      } else if (mode == Values::large) {
        v += offset;
      } else {
        v *= scale;
      }
      t.set(e, v);
    }
    in[input.name] = std::move(t);
  }
  return in;
}

std::vector<Case> Generator::shrink(const Case& c) const {
  const Derived& d = *d_;
  int64_t limit = elements(c);
  // Every smaller value up to 64; past it the lowest, the halvings and their neighbours, and
  // small steps down: smallest first, so the first that fails is the furthest step.
  auto smaller = [](int64_t v, int64_t lo) {
    std::vector<int64_t> out;
    if (v - lo <= 64) {
      for (int64_t w = lo; w < v; ++w) out.push_back(w);
      return out;
    }
    out.push_back(lo);
    for (int64_t h = v / 2; h > lo; h /= 2)
      for (int64_t w : {h - 1, h, h + 1}) out.push_back(w);
    for (int64_t j = 1; j <= 16; ++j) out.push_back(v - j);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    out.erase(std::remove_if(out.begin(), out.end(), [&](int64_t w) { return w < lo || w >= v; }),
              out.end());
    return out;
  };
  std::vector<Case> out;
  auto consider = [&](Case n) {
    d.finish(n);
    if (n.sizes == c.sizes && n.params == c.params) return;  // a computed size, set back
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

int64_t Generator::reduction_length(const Case& c) const {
  int64_t longest = 1;
  for (const Index& length : d_->reductions)
    longest = std::max(longest, d_->graph_value(length, c));
  return longest;
}

const Description& Generator::description() const {
  return d_->description;
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
  return Generator(op, c.dtype).inputs(c);
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
