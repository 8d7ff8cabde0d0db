#include "uops/parser/parser.h"

#include <algorithm>

#include "lexer.h"
#include "uops/error.h"

namespace uops {

using namespace ir;

namespace {

using parser_detail::Token;
using parser_detail::TokenKind;

// Deep enough for any real index, shallow enough that hostile input cannot exhaust the stack.
constexpr int kMaxNesting = 256;
// Real index expressions are short; the bound on the tree keeps every recursive walk of it
// (printing, comparing, freeing) far from the stack limit, since long chains of `+` nest deeply.
// It counts nodes, not characters, so that the printed form of an accepted tree (which spells
// it with spaces and parentheses of its own) is accepted too. The token bound, loose enough for
// any printed tree of that many nodes (at most 7 tokens a node), stops hostile input early, and
// the bounds on the text and on a name keep the lexer's work and the printed form's length small.
constexpr size_t kMaxNodes = 4096;
constexpr size_t kMaxTokens = 8 * kMaxNodes;
constexpr size_t kMaxName = 256;
constexpr size_t kMaxText = size_t(1) << 24;
// Ranks are at most 8; anything far beyond is a typo, and must not wrap around in an int.
constexpr int64_t kMaxAxis = 64;

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& options)
      : text_(text), options_(options), tokens_(parser_detail::lex(text, kMaxTokens)) {}

  ParsedIndex parse() {
    ParsedIndex out;
    out.expr = expr();
    if (peek().kind != TokenKind::End) expected("an operator or end of input");
    if (size_t n = node_count(out.expr); n > kMaxNodes)
      throw LimitError("\"" + std::string(text_.substr(0, 64)) + "...\": an index expression of " +
                       std::to_string(n) + " nodes is larger than the limit of " +
                       std::to_string(kMaxNodes));
    out.equalities = std::move(equalities_);
    return out;
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& next() { return tokens_[pos_++]; }
  bool at(char punct) const { return peek().kind == TokenKind::Punct && peek().punct == punct; }

  [[noreturn]] void fail(int column, const std::string& what) const {
    throw Error("\"" + std::string(text_) + "\": column " + std::to_string(column) + ": " + what);
  }
  [[noreturn]] void expected(const std::string& what) const {
    fail(peek().column, "expected " + what + ", found " + parser_detail::describe(peek()));
  }
  void expect(char punct) {
    if (!at(punct)) expected(std::string("'") + punct + "'");
    ++pos_;
  }

  Index expr() {
    if (++depth_ > kMaxNesting) fail(peek().column, "expression nested too deeply");
    // A leading sign binds to the first factor, as unary minus does in C and Python, so that
    // -7/2 is (-7)/2 = -4 under floor division.
    bool negate = false;
    if (at('+') || at('-')) negate = next().punct == '-';
    Index e = term(negate);
    while (at('+') || at('-')) {
      char op = next().punct;
      Index rhs = term();
      e = op == '+' ? idx::add(e, rhs) : idx::sub(e, rhs);
    }
    --depth_;
    return e;
  }

  Index term(bool negate_first = false) {
    Index e = factor();
    if (negate_first) e = idx::neg(e);
    while (at('*') || at('/') || at('%')) {
      char op = next().punct;
      Index rhs = factor();
      e = op == '*' ? idx::mul(e, rhs) : op == '/' ? idx::floordiv(e, rhs) : idx::floormod(e, rhs);
    }
    return e;
  }

  Index dim(const Token& t) {
    if (t.source >= options_.num_sources) {
      std::string range = options_.num_sources == 0
                              ? "no shape sources are given"
                              : std::string("the sources are A") +
                                    (options_.num_sources > 1
                                         ? std::string("-") + char('A' + options_.num_sources - 1)
                                         : std::string());
      fail(t.column,
           "shape source " + std::string(1, char('A' + t.source)) + " is out of range: " + range);
    }
    if (t.number > kMaxAxis)
      fail(t.column, "axis " + std::to_string(t.number) + " is out of range");
    return idx::dim(t.source, int(t.number));
  }

  Index factor() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Int:
        ++pos_;
        return idx::constant(t.number);
      case TokenKind::LoopVar:
        ++pos_;
        if (!options_.allow_loop_vars)
          fail(t.column, "loop index '" + t.text + "' is not allowed in a shape expression");
        if (options_.rank >= 0 && t.number >= options_.rank)
          fail(t.column, "loop index '" + t.text + "' is out of range: the output has rank " +
                             std::to_string(options_.rank));
        if (t.number > kMaxAxis) fail(t.column, "loop index '" + t.text + "' is out of range");
        return idx::var(int(t.number));
      case TokenKind::Dim: {
        ++pos_;
        Index d = dim(t);
        if (at('[')) {
          ++pos_;
          expect('=');
          if (peek().kind != TokenKind::Dim) expected("an axis size like 'dB0'");
          Index other = dim(next());
          expect(']');
          equalities_.emplace_back(d, other);
        }
        return d;
      }
      case TokenKind::Param: {
        ++pos_;
        std::string name = t.text.substr(1);
        if (options_.params && std::find(options_.params->begin(), options_.params->end(), name) ==
                                   options_.params->end())
          fail(t.column, "unknown parameter '$" + name + "'");
        if (name.size() > kMaxName)
          fail(t.column, "parameter name longer than " + std::to_string(kMaxName) + " characters");
        return idx::param(name);
      }
      case TokenKind::Min:
      case TokenKind::Max: {
        ++pos_;
        expect('(');
        Index a = expr();
        expect(',');
        Index b = expr();
        expect(')');
        return t.kind == TokenKind::Min ? idx::min(a, b) : idx::max(a, b);
      }
      case TokenKind::Punct:
        if (t.punct == '(') {
          ++pos_;
          Index e = expr();
          expect(')');
          return e;
        }
        break;
      case TokenKind::End:
        break;
    }
    expected("a term");
  }

  std::string_view text_;
  const ParseOptions& options_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  std::vector<std::pair<Index, Index>> equalities_;
};

}  // namespace

ParsedIndex parse_index(std::string_view text, const ParseOptions& options) {
  if (text.size() > kMaxText)
    throw LimitError("an index expression of " + std::to_string(text.size()) +
                     " characters is longer than the limit of " + std::to_string(kMaxText));
  return Parser(text, options).parse();
}

}  // namespace uops
