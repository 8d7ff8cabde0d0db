#include "backends/codegen/names.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "backends/codegen/kernel_writer.h"

namespace uops::codegen {

namespace {

// C and CUDA keywords, the names the generated code itself uses, and the library functions it
// may call; its helpers' names are helper_names() (kernel_writer.h).
const std::set<std::string>& reserved() {
  static const std::set<std::string> names = {
      "auto",     "break",      "case",     "char",      "const",     "continue",  "default",
      "do",       "double",     "else",     "enum",      "extern",    "float",     "for",
      "goto",     "if",         "inline",   "int",       "long",      "register",  "restrict",
      "return",   "short",      "signed",   "sizeof",    "static",    "struct",    "switch",
      "typedef",  "union",      "unsigned", "void",      "volatile",  "while",     "_Bool",
      "_Complex", "_Imaginary", "bool",     "true",      "false",     "class",     "template",
      "new",      "delete",     "this",     "namespace", "tensors",   "sizes",     "params",
      "threads",  "err",        "total",    "g",         "r",         "s",         "tid",
      "red",      "int64_t",    "int32_t",  "uint64_t",  "INFINITY",  "NAN",       "exp",
      "expf",     "log",        "logf",     "sqrt",      "sqrtf",     "tanh",      "tanhf",
      "sin",      "sinf",       "cos",      "cosf",      "floor",     "floorf",    "fabs",
      "fabsf",    "pow",        "powf",     "main",      "atomicAdd", "atomicCAS", "blockIdx",
      "blockDim", "threadIdx",  "gridDim",  "warpSize"};
  return names;
}

// Names the generated code derives (v3, c2, e0, f2 are CUDA extents, and what it builds on them:
// c2_arg, c2_lanes, v3_end, v3_next; x_n1; tile_v4, row_1) must never be taken by a tensor.
bool looks_generated(const std::string& s) {
  auto all_digits = [](const std::string& t) {
    if (t.empty()) return false;
    for (char ch : t)
      if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
    return true;
  };
  size_t digits = s.find_first_not_of("0123456789", 1);
  if ((s[0] == 'v' || s[0] == 'c' || s[0] == 'e' || s[0] == 'f') && digits != 1 &&
      (digits == std::string::npos || s[digits] == '_'))
    return true;
  for (const char* prefix : {"tile_", "row_"})
    if (s.rfind(prefix, 0) == 0) return true;
  if (s.size() > 4 && s.compare(s.size() - 4, 4, "_arg") == 0) return true;
  size_t n = s.rfind("_n");
  return n != std::string::npos && all_digits(s.substr(n + 2));
}

std::string sanitize(const std::string& name) {
  std::string s;
  for (char ch : name) s += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "t_" + s;
  // C reserves names that start with an underscore (_OPENMP, __SSE2__, _CMP_GT_OQ).
  if (s[0] == '_') s = "t" + s;
  return s;
}

std::string unique(std::string base, std::set<std::string>& taken) {
  // uops_* and UOPS_* name the generated code's own helpers, types and macros, and a name in
  // capitals alone may be a macro of the headers it includes (INT64_MAX, HUGE_VALF, NAN).
  bool capitals =
      std::none_of(base.begin(), base.end(), [](unsigned char ch) { return std::islower(ch); }) &&
      std::any_of(base.begin(), base.end(), [](unsigned char ch) { return std::isupper(ch); });
  if (reserved().count(base) || helper_names().count(base) || looks_generated(base) ||
      base.rfind("uops", 0) == 0 || base.rfind("UOPS", 0) == 0 || capitals)
    base += "_";
  std::string s = base;
  for (int k = 2; taken.count(s); ++k) s = base + "_" + std::to_string(k);
  taken.insert(s);
  return s;
}

}  // namespace

Names make_names(const Program& p) {
  Names n;
  std::set<std::string> taken;
  for (auto& t : p.tensors) n.tensors.push_back(unique(sanitize(t.name), taken));
  for (auto& q : p.params) n.params[q] = unique(sanitize(q), taken);
  return n;
}

}  // namespace uops::codegen
