#include "lexer.h"

#include <cctype>

#include "uops/error.h"

namespace uops::parser_detail {

namespace {

[[noreturn]] void fail(std::string_view text, int column, const std::string& what) {
  throw Error("\"" + std::string(text) + "\": column " + std::to_string(column) + ": " + what);
}

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

int64_t to_int(std::string_view text, std::string_view digits, int column) {
  int64_t v = 0;
  for (char c : digits) {
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
      fail(text, column, "integer '" + std::string(digits) + "' does not fit in 64 bits");
  }
  return v;
}

}  // namespace

std::string describe(const Token& t) {
  if (t.kind == TokenKind::End) return "end of input";
  return "'" + t.text + "'";
}

std::vector<Token> lex(std::string_view text, size_t max_tokens, bool bare_names) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    int column = int(i) + 1;
    if (std::isspace(c)) {
      ++i;
      continue;
    }
    if (out.size() == max_tokens)
      throw LimitError("\"" + std::string(text.substr(0, 64)) + "...\": an index expression of " +
                       "more than " + std::to_string(max_tokens) + " tokens is past the limit");
    if (std::isdigit(c)) {
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      std::string_view word = text.substr(i, j - i);
      if (j < text.size() && (std::isalpha(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        fail(text, int(j) + 1,
             "expected an operator after '" + std::string(word) + "', found '" + text[j] + "'");
      out.push_back({TokenKind::Int, column, std::string(word), to_int(text, word, column)});
      i = j;
      continue;
    }
    if (std::isalpha(c) || c == '_' || c == '$') {
      size_t j = i + 1;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      std::string_view word = text.substr(i, j - i);
      Token t{TokenKind::Int, column, std::string(word)};
      if (c == '$') {
        if (word.size() == 1 || std::isdigit(static_cast<unsigned char>(word[1])))
          fail(text, column, "expected a parameter name after '$'");
        t.kind = TokenKind::Param;
      } else if (word == "min") {
        t.kind = TokenKind::Min;
      } else if (word == "max") {
        t.kind = TokenKind::Max;
      } else if (word[0] == 'i' && is_digits(word.substr(1))) {
        t.kind = TokenKind::LoopVar;
        t.number = to_int(text, word.substr(1), column);
      } else if (word[0] == 'd' && word.size() >= 3 &&
                 std::isupper(static_cast<unsigned char>(word[1])) && is_digits(word.substr(2))) {
        t.kind = TokenKind::Dim;
        t.source = word[1] - 'A';
        t.number = to_int(text, word.substr(2), column);
      } else if (bare_names) {
        t.kind = TokenKind::Param;
        t.text = "$" + t.text;
      } else {
        fail(text, column,
             "expected a term, found '" + std::string(word) +
                 "' (names are iN, dXN, $param, min, max)");
      }
      out.push_back(std::move(t));
      i = j;
      continue;
    }
    if (std::string_view("+-*/%(),[]=").find(char(c)) != std::string_view::npos) {
      Token t{TokenKind::Punct, column, std::string(1, char(c))};
      t.punct = char(c);
      out.push_back(std::move(t));
      ++i;
      continue;
    }
    std::string shown = std::isprint(c) ? std::string(1, char(c)) : "\\x" + [&] {
      const char* hex = "0123456789abcdef";
      return std::string{hex[c >> 4], hex[c & 15]};
    }();
    fail(text, column, "unexpected character '" + shown + "'");
  }
  out.push_back({TokenKind::End, int(text.size()) + 1, ""});
  return out;
}

}  // namespace uops::parser_detail
