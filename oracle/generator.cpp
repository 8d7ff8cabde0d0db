#include "uops/oracle/generator.h"

#include <algorithm>
#include <functional>
#include <random>

#include "uops/error.h"

namespace uops::oracle {

namespace {

using Sizes = std::map<std::string, int64_t>;

struct Range {
  std::string name;
  int64_t lo, hi;
};

enum class Values { uniform, positive, ties, large };

// How an op's cases are drawn: its free sizes, how each input's axes use them, its parameters,
// the constraints ranges alone do not express, and which value distributions stress it.
struct Spec {
  std::vector<Range> sizes;
  std::map<std::string, std::vector<std::string>> layout;
  std::vector<Range> params;
  std::function<bool(const Sizes&, const ParamMap&)> valid;
  std::vector<Values> modes = {Values::uniform};
  std::string divisor;  // an input kept away from zero
};

int64_t out_size(int64_t in, int64_t pad, int64_t span, int64_t stride) {
  return floor_div(in + 2 * pad - span, stride) + 1;
}

Spec binary_spec(std::vector<Values> modes = {Values::uniform}) {
  Spec s;
  s.sizes = {{"M", 1, 6}, {"N", 1, 8}};
  s.layout = {{"x", {"M", "N"}}, {"y", {"M", "N"}}};
  s.modes = modes;
  return s;
}

Spec unary_spec(std::vector<Values> modes = {Values::uniform}) {
  Spec s;
  s.sizes = {{"M", 1, 6}, {"N", 1, 8}};
  s.layout = {{"x", {"M", "N"}}};
  s.modes = modes;
  return s;
}

Spec image_spec(const std::vector<Range>& params) {
  Spec s;
  s.sizes = {{"N", 1, 2}, {"H", 1, 10}, {"W", 1, 10}, {"C", 1, 3}};
  s.layout = {{"x", {"N", "H", "W", "C"}}};
  s.params = params;
  return s;
}

std::map<std::string, Spec> make_specs() {
  std::map<std::string, Spec> m;
  for (auto name : {"add", "sub", "mul"}) m[name] = binary_spec();
  m["div"] = binary_spec();
  m["div"].divisor = "y";
  m["max"] = binary_spec({Values::uniform, Values::ties});
  m["min"] = binary_spec({Values::uniform, Values::ties});
  m["relu"] = unary_spec({Values::uniform, Values::ties});
  for (auto name : {"sigmoid", "tanh", "exp", "gelu"}) m[name] = unary_spec();
  m["log"] = unary_spec({Values::positive});

  Spec& mm = m["matmul"];
  mm.sizes = {{"M", 1, 8}, {"K", 1, 8}, {"N", 1, 8}};
  mm.layout = {{"a", {"M", "K"}}, {"b", {"K", "N"}}};
  Spec& bmm = m["batched_matmul"];
  bmm.sizes = {{"B", 1, 3}, {"M", 1, 6}, {"K", 1, 6}, {"N", 1, 6}};
  bmm.layout = {{"a", {"B", "M", "K"}}, {"b", {"B", "K", "N"}}};
  Spec& lin = m["linear"];
  lin.sizes = {{"M", 1, 8}, {"K", 1, 8}, {"N", 1, 8}};
  lin.layout = {{"x", {"M", "K"}}, {"w", {"N", "K"}}, {"b", {"N"}}};
  m["transpose"] = unary_spec();

  Spec& conv = m["conv2d"];
  conv = image_spec({{"stride", 1, 3}, {"pad", 0, 4}, {"dilation", 1, 3}});
  conv.sizes.push_back({"O", 1, 3});
  conv.sizes.push_back({"KH", 1, 4});
  conv.sizes.push_back({"KW", 1, 4});
  conv.layout["w"] = {"O", "KH", "KW", "C"};
  conv.valid = [](const Sizes& s, const ParamMap& p) {
    int64_t d = p.at("dilation");
    return out_size(s.at("H"), p.at("pad"), d * (s.at("KH") - 1) + 1, p.at("stride")) >= 1 &&
           out_size(s.at("W"), p.at("pad"), d * (s.at("KW") - 1) + 1, p.at("stride")) >= 1;
  };
  Spec& dw = m["depthwise_conv2d"];
  dw = image_spec({{"stride", 1, 3}, {"pad", 0, 4}});
  dw.sizes.push_back({"KH", 1, 4});
  dw.sizes.push_back({"KW", 1, 4});
  dw.layout["w"] = {"KH", "KW", "C"};
  dw.valid = [](const Sizes& s, const ParamMap& p) {
    return out_size(s.at("H"), p.at("pad"), s.at("KH"), p.at("stride")) >= 1 &&
           out_size(s.at("W"), p.at("pad"), s.at("KW"), p.at("stride")) >= 1;
  };
  Spec& maxpool = m["maxpool2d"];
  maxpool = image_spec({{"k", 1, 4}, {"stride", 1, 4}, {"pad", 0, 3}});
  maxpool.modes = {Values::uniform, Values::ties};
  // pad < k: every window then holds at least one element of x.
  maxpool.valid = [](const Sizes& s, const ParamMap& p) {
    int64_t k = p.at("k"), pad = p.at("pad"), st = p.at("stride");
    return pad < k && out_size(s.at("H"), pad, k, st) >= 1 && out_size(s.at("W"), pad, k, st) >= 1;
  };
  Spec& avgpool = m["avgpool2d"];
  avgpool = image_spec({{"k", 1, 4}, {"stride", 1, 4}});
  avgpool.valid = [](const Sizes& s, const ParamMap& p) {
    return s.at("H") >= p.at("k") && s.at("W") >= p.at("k");
  };

  Spec rows = unary_spec({Values::uniform, Values::large});
  rows.sizes = {{"M", 1, 5}, {"N", 1, 10}};
  m["softmax"] = rows;
  m["log_softmax"] = rows;
  Spec& ln = m["layernorm"];
  ln = unary_spec();
  ln.layout["gamma"] = {"N"};
  ln.layout["beta"] = {"N"};
  m["sum"] = unary_spec();
  m["mean"] = unary_spec();
  m["max_reduce"] = unary_spec({Values::uniform, Values::ties});
  m["argmax"] = unary_spec({Values::uniform, Values::ties});

  Spec& gather = m["gather"];
  gather.sizes = {{"V", 1, 8}, {"D", 1, 5}, {"L", 1, 8}};
  gather.layout = {{"table", {"V", "D"}}, {"idx", {"L"}}};
  Spec& concat = m["concat"];
  concat.sizes = {{"M", 1, 6}, {"N1", 1, 6}, {"N2", 1, 6}};
  concat.layout = {{"x", {"M", "N1"}}, {"y", {"M", "N2"}}};
  m["pad2d"] = image_spec({{"pad", 0, 3}});
  Spec& ce = m["cross_entropy"];
  ce.sizes = {{"M", 1, 6}, {"N", 1, 10}};
  ce.layout = {{"logits", {"M", "N"}}, {"labels", {"M"}}};
  ce.modes = {Values::uniform, Values::large};
  return m;
}

const Spec& spec_of(const OpDef& op) {
  static const std::map<std::string, Spec> specs = make_specs();
  auto it = specs.find(op.name);
  UOPS_ASSERT(it != specs.end(), "no oracle generator for op " + op.name);
  return it->second;
}

bool valid(const Spec& s, const Sizes& sizes, const ParamMap& params) {
  for (auto& r : s.sizes)
    if (sizes.at(r.name) < 1) return false;
  for (auto& r : s.params)
    if (params.at(r.name) < (r.lo > 0 ? 1 : 0)) return false;
  return !s.valid || s.valid(sizes, params);
}

Shapes shapes_of(const Spec& s, const Sizes& sizes) {
  Shapes out;
  for (auto& [input, axes] : s.layout)
    for (auto& a : axes) out[input].push_back(sizes.at(a));
  return out;
}

int64_t draw(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace

Case random_case(const OpDef& op, DType dtype, uint64_t seed) {
  const Spec& s = spec_of(op);
  std::mt19937_64 rng(seed);
  Case c;
  c.op = op.name;
  c.dtype = dtype;
  c.seed = seed;
  for (int attempt = 0;; ++attempt) {
    UOPS_ASSERT(attempt < 10000, "no valid case found for " + op.name);
    c.sizes.clear();
    c.params.clear();
    for (auto& r : s.sizes) c.sizes[r.name] = draw(rng, r.lo, r.hi);
    for (auto& r : s.params) c.params[r.name] = draw(rng, r.lo, r.hi);
    if (valid(s, c.sizes, c.params)) break;
  }
  c.shapes = shapes_of(s, c.sizes);
  return c;
}

Case fixed_case(const OpDef& op, DType dtype, uint64_t seed, const Shapes& shapes,
                const ParamMap& params) {
  const Spec& s = spec_of(op);
  Case c;
  c.op = op.name;
  c.dtype = dtype;
  c.seed = seed;
  for (auto& [input, axes] : s.layout) {
    auto it = shapes.find(input);
    if (it == shapes.end()) throw Error(op.name + ": no shape given for input '" + input + "'");
    if (it->second.size() != axes.size())
      throw Error(op.name + ": input '" + input + "' has rank " + std::to_string(axes.size()) +
                  ", not " + std::to_string(it->second.size()));
    for (size_t a = 0; a < axes.size(); ++a) {
      auto [pos, fresh] = c.sizes.emplace(axes[a], it->second[a]);
      if (!fresh && pos->second != it->second[a])
        throw Error(op.name + ": size " + axes[a] + " is " + std::to_string(pos->second) +
                    " in one input and " + std::to_string(it->second[a]) + " in '" + input + "'");
    }
  }
  for (auto& [name, v] : shapes)
    if (!s.layout.count(name)) throw Error(op.name + ": it has no input '" + name + "'");
  for (auto& r : s.params) {
    auto it = params.find(r.name);
    if (it == params.end()) throw Error(op.name + ": parameter '" + r.name + "' is not given");
    c.params[r.name] = it->second;
  }
  if (!valid(s, c.sizes, c.params))
    throw Error(op.name + ": " + shapes_text(shapes) + " " + params_text(c.params) +
                " is not a valid case");
  c.shapes = shapes_of(s, c.sizes);
  return c;
}

TensorMap make_inputs(const OpDef& op, const Case& c) {
  const Spec& s = spec_of(op);
  std::mt19937_64 rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  Values mode = s.modes[draw(rng, 0, int64_t(s.modes.size()) - 1)];
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  // Large mode shifts each case far enough that exp overflows in f64 without the max shift.
  double offset = mode == Values::large ? (draw(rng, 0, 1) ? 1000.0 : -800.0) : 0.0;
  TensorMap in;
  for (const OpInput& i : op.inputs) {
    Tensor t(i.is_index ? DType::i32 : c.dtype, c.shapes.at(i.name));
    for (int64_t e = 0; e < t.numel(); ++e) {
      double v = unit(rng);
      if (op.name == "gather" && i.is_index) {
        v = double(draw(rng, -2, c.sizes.at("V") + 1));  // out of range now and then
      } else if (op.name == "cross_entropy" && i.is_index) {
        v = double(draw(rng, 0, c.sizes.at("N") - 1));
      } else if (i.name == s.divisor) {
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

std::vector<Case> shrink_candidates(const OpDef& op, const Case& c) {
  const Spec& s = spec_of(op);
  auto smaller = [](int64_t v, int64_t lo) {
    std::vector<int64_t> out;
    for (int64_t w : {lo, v / 2, v - 1})
      if (w >= lo && w < v && std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    return out;
  };
  std::vector<Case> out;
  auto consider = [&](Case n) {
    if (!valid(s, n.sizes, n.params)) return;
    n.shapes = shapes_of(s, n.sizes);
    out.push_back(std::move(n));
  };
  for (auto& r : s.sizes)
    for (int64_t v : smaller(c.sizes.at(r.name), 1)) {
      Case n = c;
      n.sizes[r.name] = v;
      consider(n);
    }
  for (auto& r : s.params)
    for (int64_t v : smaller(c.params.at(r.name), r.lo > 0 ? 1 : 0)) {
      Case n = c;
      n.params[r.name] = v;
      consider(n);
    }
  return out;
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
