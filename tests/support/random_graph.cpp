#include "support/random_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

namespace uops {

namespace {

std::string str(const char* prefix, int64_t n) {
  return prefix + std::to_string(n);
}

// What the generator knows about each node besides the graph: its sizes for the chosen inputs
// and whether every value is known positive (smooth cases keep log and friends finite).
struct Info {
  Node node;
  std::vector<int64_t> shape;
  DType dtype;
  bool positive;
};

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& o) : rng_(seed), o_(o) {}

  RandomCase run() {
    if (o_.params && chance(0.3)) {
      c_.graph.param("p");
      c_.params["p"] = uniform(0, 2);
    }
    int num_inputs = int(uniform(1, 3));
    for (int i = 0; i < num_inputs; ++i) new_float_input();
    int target = int(uniform(1, std::max(1, o_.max_nodes)));
    for (int tries = 0; made_ < target && tries < 20 * target; ++tries) step();
    if (made_ == 0)
      add(c_.graph.unary(UnaryOp::neg, floats_[0].node), floats_[0].shape, o_.dtype, false);
    choose_outputs();
    if (o_.empty_raising && chance(0.2)) empty_raising_output();
    if (o_.raising_element && chance(0.3)) raising_element_output();
    return std::move(c_);
  }

 private:
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return real(0, 1) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(uniform(0, int64_t(v.size()) - 1))];
  }
  // Recent nodes are picked more often so that chains grow deep.
  const Info& pick_float() {
    if (floats_.size() > 3 && chance(0.5)) return floats_[floats_.size() - 1 - uniform(0, 2)];
    return pick(floats_);
  }

  static int64_t numel(const std::vector<int64_t>& s) {
    return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
  }

  void fill_values(Tensor& t, bool smooth) {
    bool ties = chance(0.3);
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v = smooth ? real(0.5, 1.5) : real(-2, 2);
      if (ties && !smooth) v = std::round(v * 2) / 2;
      t.set(i, v);
    }
  }

  Info& add(Node n, std::vector<int64_t> shape, DType dtype, bool positive) {
    infos_.push_back({n, std::move(shape), dtype, positive});
    if (dtype != DType::i32) floats_.push_back(infos_.back());
    return infos_.back();
  }

  std::vector<int64_t> random_shape() {
    int rank = int(uniform(0, o_.max_rank));
    std::vector<int64_t> s;
    for (int a = 0; a < rank; ++a) s.push_back(uniform(1, std::max(1, o_.max_size)));
    return s;
  }

  void new_float_input() {
    std::string name = str("x", inputs_++);
    auto shape = random_shape();
    Node n = c_.graph.input(name, int(shape.size()), o_.dtype);
    Tensor t(o_.dtype, shape);
    fill_values(t, o_.smooth);
    c_.inputs[name] = std::move(t);
    add(n, shape, o_.dtype, o_.smooth);
  }

  // An i32 input shaped like `like` except `axis`, holding indices in [-1, size] so that some
  // fall outside `like`'s axis.
  Info new_index_input(const std::vector<int64_t>& like, int axis) {
    std::string name = str("k", inputs_++);
    std::vector<int64_t> shape = like;
    shape[axis] = uniform(1, 3);
    Node n = c_.graph.input(name, int(shape.size()), DType::i32);
    Tensor t(DType::i32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, double(uniform(-1, like[axis])));
    c_.inputs[name] = std::move(t);
    return add(n, shape, DType::i32, false);
  }

  double random_fill() { return pick(std::vector<double>{0.0, 0.0, 1.0, -1.5, 2.5}); }

  void step() {
    // Without iotas and casts, the thresholds of the generator before them: seeds found then
    // give the same graphs.
    static constexpr double with[] = {0.22, 0.4, 0.62, 0.75, 0.82, 0.9, 0.95};
    static constexpr double without[] = {0.32, 0.5, 0.72, 0.85, 0.92, 1.0, 1.0};
    const double* t = o_.iotas_and_casts ? with : without;
    if (o_.contractions && chance(0.2)) return chance(0.7) ? contraction_step() : window_step();
    double r = real(0, 1);
    if (r < t[0]) return reindex_step();
    if (r < t[1]) return unary_step();
    if (r < t[2]) return binary_step();
    if (r < t[3]) return reduce_step();
    if (r < t[4]) return ternary_step();
    if (r < t[5]) return select_step();
    if (r < t[6]) return iota_step();
    return cast_step();
  }

  bool fits(const std::vector<int64_t>& shape) const {
    return shape.size() <= 5 && numel(shape) <= 256;
  }

  // One random reindex of `x`: transpose, broadcast, slice, pad, shift, flip, stride, axis drop
  // or merge; the other axes map straight through.
  void reindex_step() {
    const Info x = pick_float();
    int rank = int(x.shape.size());
    std::vector<std::string> shape, index;
    std::vector<int64_t> out;
    double fill = 0.0;
    for (int a = 0; a < rank; ++a) {
      shape.push_back(str("dA", a));
      index.push_back(str("i", a));
      out.push_back(x.shape[a]);
    }
    int k = rank ? int(uniform(0, rank - 1)) : 0;
    std::string ik = str("i", k), dk = str("dA", k);
    switch (uniform(0, 9)) {
      case 0: {  // transpose
        if (rank < 2) return;
        std::vector<int> perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        for (int j = 0; j < rank; ++j) {
          shape[j] = str("dA", perm[j]);
          out[j] = x.shape[perm[j]];
          index[perm[j]] = str("i", j);
        }
        break;
      }
      case 1: {  // broadcast: a new axis at position q
        int q = int(uniform(0, rank));
        int64_t size = uniform(1, 3);
        shape.insert(shape.begin() + q, std::to_string(size));
        out.insert(out.begin() + q, size);
        for (int a = 0; a < rank; ++a) index[a] = str("i", a < q ? a : a + 1);
        break;
      }
      case 2:  // slice
        if (!rank || x.shape[k] < 2) return;
        shape[k] = dk + " - 1";
        out[k] -= 1;
        if (chance(0.5)) index[k] = ik + " + 1";
        break;
      case 3:  // pad both sides
        if (!rank) return;
        shape[k] = dk + " + 2";
        out[k] += 2;
        index[k] = ik + " - 1";
        fill = random_fill();
        break;
      case 4:  // shift within the same size
        if (!rank) return;
        index[k] = ik + (chance(0.5) ? " + 1" : " - 1");
        fill = random_fill();
        break;
      case 5:  // flip
        if (!rank) return;
        index[k] = dk + " - 1 - " + ik;
        break;
      case 6:  // stride 2
        if (!rank) return;
        shape[k] = "(" + dk + " + 1) / 2";
        out[k] = (x.shape[k] + 1) / 2;
        index[k] = ik + " * 2";
        break;
      case 7: {  // drop a size-1 axis
        auto it = std::find(x.shape.begin(), x.shape.end(), 1);
        if (it == x.shape.end()) return;
        int d = int(it - x.shape.begin());
        shape.erase(shape.begin() + d);
        out.erase(out.begin() + d);
        for (int a = 0; a < rank; ++a) index[a] = a == d ? "0" : str("i", a < d ? a : a - 1);
        break;
      }
      case 8: {  // merge axes k and k+1 (a reshape): non-affine indices
        if (k + 1 >= rank) return;
        std::string dn = str("dA", k + 1);
        shape[k] = dk + " * " + dn;
        shape.erase(shape.begin() + k + 1);
        out[k] *= out[k + 1];
        out.erase(out.begin() + k + 1);
        index[k] = ik + " / " + dn;
        index[k + 1] = ik + " % " + dn;
        for (int a = k + 2; a < rank; ++a) index[a] = str("i", a - 1);
        break;
      }
      default: {  // pad by a run-time parameter
        if (!rank || !c_.params.count("p")) return;
        shape[k] = dk + " + $p";
        out[k] += c_.params["p"];
        index[k] = ik + " - $p";
        fill = random_fill();
        break;
      }
    }
    if (!fits(out)) return;
    Node n = c_.graph.reindex(x.node, shape, index, {x.node}, fill);
    add(n, out, x.dtype, x.positive && fill > 0);
    ++made_;
  }

  // A float node shaped like `like`: an existing one, or a reindex of a random node onto that
  // shape (axes mapped straight, at 0, or wrapped with %; some reads fall outside and fill).
  Info shaped_like(const Info& like) {
    std::vector<const Info*> same;
    for (auto& f : floats_)
      if (f.shape == like.shape) same.push_back(&f);
    if (!same.empty() && chance(0.6)) return *pick(same);
    const Info z = pick_float();
    std::vector<std::string> shape, index;
    int rank = int(like.shape.size());
    for (int a = 0; a < rank; ++a) shape.push_back(str("dB", a));
    for (size_t j = 0; j < z.shape.size(); ++j) {
      double r = real(0, 1);
      if (!rank || r < 0.2) {
        index.push_back("0");
      } else {
        std::string i = str("i", uniform(0, rank - 1));
        index.push_back(r < 0.7 ? i : i + " % " + str("dA", int64_t(j)));
      }
    }
    double fill = random_fill();
    Node n = c_.graph.reindex(z.node, shape, index, {z.node, like.node}, fill);
    ++made_;
    return add(n, like.shape, z.dtype, z.positive && fill > 0);
  }

  void unary_step() {
    const Info x = pick_float();
    std::vector<UnaryOp> ops = {UnaryOp::neg,     UnaryOp::exp, UnaryOp::tanh,
                                UnaryOp::sigmoid, UnaryOp::sin, UnaryOp::cos};
    if (!o_.smooth) {
      ops.insert(ops.end(), {UnaryOp::abs, UnaryOp::floor, UnaryOp::log, UnaryOp::sqrt,
                             UnaryOp::rsqrt, UnaryOp::recip});
      if (!o_.jumps) std::erase(ops, UnaryOp::floor);
    } else if (x.positive) {
      ops.insert(ops.end(), {UnaryOp::log, UnaryOp::sqrt, UnaryOp::rsqrt, UnaryOp::recip});
    }
    UnaryOp op = pick(ops);
    bool positive = op == UnaryOp::exp || op == UnaryOp::sigmoid ||
                    (x.positive && (op == UnaryOp::sqrt || op == UnaryOp::rsqrt ||
                                    op == UnaryOp::recip || op == UnaryOp::abs));
    add(c_.graph.unary(op, x.node), x.shape, x.dtype, positive);
    ++made_;
  }

  void binary_step() {
    const Info x = pick_float();
    const Info y = shaped_like(x);
    std::vector<BinaryOp> ops = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul};
    if (!o_.smooth) {
      ops.insert(ops.end(), {BinaryOp::div, BinaryOp::pow, BinaryOp::max, BinaryOp::min});
      if (o_.jumps) ops.insert(ops.end(), {BinaryOp::eq, BinaryOp::ne, BinaryOp::lt, BinaryOp::le});
    } else {
      if (y.positive) ops.push_back(BinaryOp::div);
      if (x.positive) ops.push_back(BinaryOp::pow);
    }
    BinaryOp op = pick(ops);
    bool positive = (x.positive && y.positive &&
                     (op == BinaryOp::add || op == BinaryOp::mul || op == BinaryOp::div)) ||
                    (x.positive && op == BinaryOp::pow);
    add(c_.graph.binary(op, x.node, y.node), x.shape, x.dtype, positive);
    ++made_;
  }

  void ternary_step() {
    if (o_.smooth || !o_.jumps) return;
    const Info c = pick_float();
    const Info a = shaped_like(c), b = shaped_like(c);
    add(c_.graph.ternary(c.node, a.node, b.node), c.shape, c.dtype, a.positive && b.positive);
    ++made_;
  }

  void reduce_step() {
    const Info x = pick_float();
    std::vector<int> axes;
    for (int a = 0; a < int(x.shape.size()); ++a)
      if (chance(0.5)) axes.push_back(a);
    if (axes.empty() && !x.shape.empty() && chance(0.8)) axes.push_back(int(x.shape.size()) - 1);
    std::vector<ReduceOp> ops = {ReduceOp::sum, ReduceOp::mean, ReduceOp::prod};
    if (!o_.smooth) ops.insert(ops.end(), {ReduceOp::max, ReduceOp::min});
    if (!o_.smooth && o_.arg_reductions)
      ops.insert(ops.end(), {ReduceOp::argmax, ReduceOp::argmin});
    ReduceOp op = pick(ops);
    std::vector<int64_t> out = x.shape;
    for (int a : axes) out[a] = 1;
    Node n = c_.graph.reduce(op, axes, x.node);
    ++made_;
    if (is_arg_reduce(op)) {
      add(n, out, DType::i32, false);
      // Gather what was found: the arg-reduction's result is a select index in range.
      if (o_.selects && axes.size() == 1 && chance(0.5)) {
        add(c_.graph.select(axes[0], x.node, n), out, x.dtype, x.positive);
        ++made_;
      }
      return;
    }
    add(n, out, x.dtype, x.positive);
  }

  // y[..., j, 0] = sum over k of x[..., k] * w: w a new input [n, k] or [k, n]; half the time one
  // axis of x is read shifted by one, so that reads at an edge fall outside and fill.
  void contraction_step() {
    const Info x = pick_float();
    int r = int(x.shape.size());
    if (!r) return;
    int64_t k = x.shape.back(), n = uniform(1, 9);
    std::vector<int64_t> product(x.shape.begin(), x.shape.end() - 1);
    product.insert(product.end(), {n, k});
    if (!fits(product)) return;
    bool transposed = chance(0.5);
    std::string name = str("x", inputs_++);
    std::vector<int64_t> wshape = transposed ? std::vector<int64_t>{n, k} : std::vector{k, n};
    Node w = c_.graph.input(name, 2, o_.dtype);
    Tensor t(o_.dtype, wshape);
    fill_values(t, o_.smooth);
    c_.inputs[name] = std::move(t);
    add(w, wshape, o_.dtype, o_.smooth);
    std::string wn = transposed ? "dB0" : "dB1", wk = transposed ? "dB1" : "dB0";
    std::vector<std::string> shape, xindex;
    for (int a = 0; a + 1 < r; ++a) {
      shape.push_back(str("dA", a));
      xindex.push_back(str("i", a));
    }
    shape.push_back(wn);
    shape.push_back(str("dA", r - 1));
    xindex.push_back(str("i", r));
    double fill = 0.0;
    bool shifted = chance(0.5);
    if (shifted) {
      int a = int(uniform(0, r - 1));
      xindex[a] += chance(0.5) ? " + 1" : " - 1";
      fill = random_fill();
    }
    std::vector<std::string> asserted = shape;
    asserted.back() += "[=" + wk + "]";
    Node xr = c_.graph.reindex(x.node, asserted, xindex, {x.node, w}, fill);
    std::vector<std::string> windex = {str("i", r - 1), str("i", r)};
    if (!transposed) std::swap(windex[0], windex[1]);
    Node wr = c_.graph.reindex(w, shape, windex, {x.node, w});
    Node sum = c_.graph.reduce(ReduceOp::sum, {r}, c_.graph.binary(BinaryOp::mul, xr, wr));
    // Without the reduced axis, as ops write it: the output's last axis is j.
    std::vector<std::string> kept, at;
    for (int a = 0; a < r; ++a) {
      kept.push_back(str("dA", a));
      at.push_back(str("i", a));
    }
    at.push_back("0");
    product.pop_back();
    add(c_.graph.reindex(sum, kept, at, {sum}), product, o_.dtype,
        x.positive && o_.smooth && (!shifted || fill > 0));
    made_ += 5;
  }

  // A window reduced into each output element along the second-to-last axis, as pooling does:
  // y[..., o, c] = sum or max over w in [0, K) of x?[..., o - P + w, c], the padding read as a
  // fill (-inf for a max, at times), at times shifted along c too. The C backend tiles it (o,
  // then c in tiles) and reads x by rows of c.
  void window_step() {
    const Info x = pick_float();
    int r = int(x.shape.size());
    if (r < 2) return;
    int64_t k = uniform(1, 3), pad = uniform(0, 2), grow = 2 * pad - k + 1;
    std::vector<int64_t> product = x.shape;
    product[size_t(r - 2)] += grow;
    if (product[size_t(r - 2)] < 1) return;
    product.insert(product.end() - 1, k);
    if (!fits(product)) return;
    std::vector<std::string> shape, index, kept, at;
    for (int a = 0; a < r - 2; ++a) {
      shape.push_back(str("dA", a));
      index.push_back(str("i", a));
    }
    shape.push_back(str("dA", r - 2) + (grow < 0 ? " - " : " + ") + std::to_string(std::abs(grow)));
    shape.push_back(std::to_string(k));
    shape.push_back(str("dA", r - 1));
    index.push_back(str("i", r - 2) + " - " + std::to_string(pad) + " + " + str("i", r - 1));
    // At times shifted along c too, so that some rows of c fall partly outside.
    index.push_back(str("i", r) + (chance(0.3) ? " + 1" : ""));
    ReduceOp op = chance(0.5) ? ReduceOp::sum : ReduceOp::max;
    double fill = op == ReduceOp::max && !o_.smooth && chance(0.5)
                      ? -std::numeric_limits<double>::infinity()
                      : random_fill();
    Node window = c_.graph.reindex(x.node, shape, index, {x.node}, fill);
    Node reduced = c_.graph.reduce(op, {r - 1}, window);
    for (int a = 0; a < r - 1; ++a) {
      kept.push_back(str("dA", a));
      at.push_back(str("i", a));
    }
    kept.push_back(str("dA", r));
    at.push_back("0");
    at.push_back(str("i", r - 1));
    product.erase(product.end() - 2);
    add(c_.graph.reindex(reduced, kept, at, {reduced}), product, o_.dtype,
        x.positive && o_.smooth && fill > 0);
    made_ += 3;
  }

  // An index-value tensor shaped like a float node: positions, sizes and parameters as values.
  // An i32 one is cast back to float or gathers along an axis (some positions out of range).
  void iota_step() {
    const Info like = pick_float();
    int rank = int(like.shape.size());
    std::vector<std::string> shape;
    for (int a = 0; a < rank; ++a) shape.push_back(str("dA", a));
    std::string ik = str("i", rank ? uniform(0, rank - 1) : 0);
    std::string ij = str("i", rank ? uniform(0, rank - 1) : 0);
    std::string dj = str("dA", rank ? uniform(0, rank - 1) : 0);
    std::vector<std::string> values = {"2", c_.params.count("p") ? "$p - 1" : "-3"};
    if (rank)
      values.insert(values.end(),
                    {ik, dj, ik + " * 2 - " + ij + " + 1", "max(" + ik + " - " + ij + ", 0)",
                     "(" + ik + " + 3) % " + dj, ik + " / 2 - 1"});
    std::string value = pick(values);
    bool i32 = chance(0.5);
    Node n = c_.graph.iota(shape, value, {like.node}, i32 ? DType::i32 : o_.dtype);
    ++made_;
    if (!i32) {
      add(n, like.shape, o_.dtype, false);
      return;
    }
    add(n, like.shape, DType::i32, false);
    if (o_.selects && rank && chance(0.5)) {
      add(c_.graph.select(int(uniform(0, rank - 1)), like.node, n), like.shape, like.dtype, false);
    } else {
      add(c_.graph.cast(n, o_.dtype), like.shape, o_.dtype, false);
    }
    ++made_;
  }

  // Casts: an i32 node to float; a float through i32 (truncation) or the other float type and
  // back. Smooth cases keep to the first, which has no jumps.
  void cast_step() {
    const Info x = pick(infos_);
    if (x.dtype == DType::i32) {
      add(c_.graph.cast(x.node, o_.dtype), x.shape, o_.dtype, false);
      ++made_;
      return;
    }
    if (o_.smooth) return;
    DType via = chance(0.6) && o_.jumps  ? DType::i32
                : o_.dtype == DType::f32 ? DType::f64
                                         : DType::f32;
    Node mid = c_.graph.cast(x.node, via);
    if (via == DType::i32) add(mid, x.shape, via, false);
    add(c_.graph.cast(mid, o_.dtype), x.shape, o_.dtype, false);
    made_ += 2;
  }

  void select_step() {
    if (!o_.selects || !o_.i32_inputs) return;
    const Info x = pick_float();
    if (x.shape.empty()) return;
    int axis = int(uniform(0, int64_t(x.shape.size()) - 1));
    Info index = new_index_input(x.shape, axis);
    add(c_.graph.select(axis, x.node, index.node), index.shape, x.dtype, false);
    ++made_;
  }

  // An extra output with an empty axis whose index divides by a parameter that is zero: its
  // loops run zero times, so the division never happens and nothing may raise (a backend that
  // evaluates the index eagerly would).
  void empty_raising_output() {
    const Info& x = pick_float();
    int rank = int(x.shape.size());
    if (!rank) return;
    c_.graph.param("z");
    c_.params["z"] = 0;
    int k = int(uniform(0, rank - 1));
    std::vector<std::string> shape, index;
    for (int a = 0; a < rank; ++a) {
      shape.push_back(a == k ? "0" : str("dA", a));
      index.push_back(str("i", a) + (a == k ? " + 1 / $z" : ""));
    }
    c_.graph.output("empty", c_.graph.reindex(x.node, shape, index, {x.node}));
  }

  // An extra output reading x at an index that divides by (iK - $q): with $q in [0, size],
  // element q of axis K raises (wherever it lands among threads and blocks), or none does.
  void raising_element_output() {
    const Info& x = pick_float();
    int rank = int(x.shape.size());
    if (!rank) return;
    int k = int(uniform(0, rank - 1));
    c_.graph.param("q");
    c_.params["q"] = uniform(0, x.shape[k]);
    std::vector<std::string> shape, index;
    for (int a = 0; a < rank; ++a) {
      shape.push_back(str("dA", a));
      index.push_back(str("i", a) + (a == k ? " + 1 / (" + str("i", a) + " - $q)" : ""));
    }
    c_.graph.output("raising", c_.graph.reindex(x.node, shape, index, {x.node}));
  }

  void choose_outputs() {
    std::vector<Node> chosen = {infos_.back().node};
    int extra = int(uniform(0, 2));
    for (int i = 0; i < extra; ++i) {
      const Info& n = pick(infos_);
      bool dup = false;
      for (Node c : chosen) dup |= c.id == n.node.id;
      if (!dup) chosen.push_back(n.node);
    }
    for (size_t i = 0; i < chosen.size(); ++i) c_.graph.output(str("out", int64_t(i)), chosen[i]);
  }

  std::mt19937_64 rng_;
  RandomGraphOptions o_;
  RandomCase c_;
  std::vector<Info> infos_, floats_;
  int inputs_ = 0, made_ = 0;
};

}  // namespace

RandomCase random_case(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).run();
}

ir::Program with_partial_loops(ir::Program p, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (ir::Block& b : p.blocks)
    for (ir::Loop& l : b.loops) {
      auto r = rng() % 6;
      if (r == 0) l.end = ir::idx::sub(l.end, ir::idx::constant(1));
      if (r == 1) l.start = ir::idx::add(l.start, ir::idx::constant(1));
    }
  return p;
}

}  // namespace uops
