// libFuzzer target for the index-expression parser. The only acceptable failure is a
// uops::Error; any other exception, crash or sanitizer report is a finding. Every expression
// that parses must print and parse back to an equal tree, and printing must be canonical.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "uops/error.h"
#include "uops/parser/index_expr.h"
#include "uops/parser/parser.h"

namespace {

[[noreturn]] void finding(const std::string& what, std::string_view text) {
  std::fprintf(stderr, "FINDING: %s\ninput: \"%.*s\"\n", what.c_str(), int(text.size()),
               text.data());
  std::abort();
}

void check_round_trip(std::string_view text, const uops::ir::Index& e) {
  std::string printed = uops::ir::to_string(e);
  uops::ir::Index back;
  try {
    back = uops::parse_index(printed).expr;
  } catch (const uops::Error& err) {
    finding("printed form \"" + printed + "\" does not parse: " + err.what(), text);
  }
  if (!uops::ir::equal(back, e))
    finding("\"" + printed + "\" parses back as \"" + uops::ir::to_string(back) + "\"", text);
  if (uops::ir::to_string(back) != printed) finding("printing is not canonical: " + printed, text);
}

// Evaluation may fail only with uops::Error (division by zero, overflow).
void evaluate_all(const uops::ir::Index& e) {
  uops::ir::IndexEnv env;
  env.var = [](int v) -> int64_t { return int64_t(v) * 7 - 20; };
  env.dim = [](int s, int a) -> int64_t { return s * 3 + a; };
  env.param = [](const std::string& n) -> int64_t { return int64_t(n.size()) - 3; };
  try {
    uops::ir::evaluate(e, env);
  } catch (const uops::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    uops::ParsedIndex p = uops::parse_index(text);
    check_round_trip(text, p.expr);
    for (auto& [a, b] : p.equalities) {
      check_round_trip(text, a);
      check_round_trip(text, b);
    }
    evaluate_all(p.expr);
  } catch (const uops::Error&) {
  }
  // The restricted forms used for shapes and reindex indices must fail the same clean way.
  static const std::vector<std::string> params = {"stride", "pad", "k"};
  uops::ParseOptions shape;
  shape.allow_loop_vars = false;
  shape.num_sources = 2;
  shape.params = &params;
  uops::ParseOptions index = shape;
  index.allow_loop_vars = true;
  index.rank = 3;
  for (const uops::ParseOptions* o : {&shape, &index}) {
    try {
      uops::parse_index(text, *o);
    } catch (const uops::Error&) {
    }
  }
  return 0;
}
