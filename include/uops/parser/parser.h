// The index-expression parser (docs/design.md §3.1): a lexer and a recursive-descent parser over
//
//   expr   := [ '+' | '-' ] term { ('+' | '-') term }
//   term   := factor { ('*' | '/' | '%') factor }
//   factor := INT | 'i' INT | 'd' LETTER INT [ '[' '=' 'd' LETTER INT ']' ] | '$' IDENT
//           | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
//
// It returns the parsed form of an expression (see index_expr.h). Every error is a uops::Error
// naming the expression, the 1-based column, what was expected and what was found.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "uops/parser/index_expr.h"

namespace uops {

struct ParseOptions {
  bool allow_loop_vars = true;  // false for shape expressions
  int rank = -1;                // `iN` needs N < rank; -1: no limit
  int num_sources = 26;         // `dS` needs S < num_sources
  // Known parameter names; `$name` outside it is an error. Null accepts any name.
  const std::vector<std::string>* params = nullptr;
  // Names without '$' are parameters too (launch rules: `(x_n1 + 255) / 256`); `iN` and `dXN`
  // keep their meaning.
  bool bare_names = false;
};

struct ParsedIndex {
  ir::Index expr;
  // `dA1[=dB0]` asserts that two axis sizes are equal; each pair is (dA1, dB0).
  std::vector<std::pair<ir::Index, ir::Index>> equalities;
};

ParsedIndex parse_index(std::string_view text, const ParseOptions& options = {});

}  // namespace uops
