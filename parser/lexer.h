// Tokens of the index-expression grammar. Kept private to the parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uops::parser_detail {

enum class TokenKind { Int, LoopVar, Dim, Param, Min, Max, Punct, End };

struct Token {
  TokenKind kind;
  int column;          // 1-based
  std::string text;    // as written
  int64_t number = 0;  // Int: value; LoopVar: N; Dim: axis
  int source = 0;      // Dim: source letter, A = 0
  char punct = 0;      // Punct: the character
};

// Splits `text` into tokens ending with one End token. Throws uops::Error for a character or
// word that is no token, with the column where it starts, and a uops::LimitError past
// `max_tokens` tokens.
// With `bare_names`, a word that is no other token is a parameter name without its '$'.
std::vector<Token> lex(std::string_view text, size_t max_tokens, bool bare_names = false);

// How a token is named in "found ..." messages.
std::string describe(const Token& t);

}  // namespace uops::parser_detail
