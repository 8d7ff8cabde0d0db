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
      : text_(text),
        options_(options),
        tokens_(parser_detail::lex(text, kMaxTokens, options.bare_names)) {}

  ParsedIndex parse() {
    ParsedIndex out;
    out.expr = expr().tree;
    if (peek().kind != TokenKind::End) expected("an operator or end of input");
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
    if (!at(punct)) expected_punct(punct);
    ++pos_;
  }
  [[noreturn, gnu::noinline]] void expected_punct(char punct) const {
    expected(std::string("'") + punct + "'");
  }

  // A tree with its node count. Every tree the parser holds ends up in the result (folding
  // aside), so the count of all held nodes is checked as each tree is made: input past the
  // limit is refused before it grows a tree larger than the limit, and so the stack that
  // freeing the tree takes stays that of the largest accepted tree. expr, term and factor
  // recurse; what they call that does not is kept out of line, so that their frames, and the
  // stack that kMaxNesting levels take, stay small.
  struct Sized {
    Index tree;
    size_t nodes;
  };

  [[gnu::noinline]] Sized leaf(Index tree) {
    hold(1);
    return {std::move(tree), 1};
  }

  // `made` is what one constructor made of a (and b): a new node over them, or a fold (see
  // idx::binary) that returns one of them, a part of one, or a node over such a part.
  [[gnu::noinline]] Sized combine(Index made, const Sized& a, const Sized& b = {}) {
    size_t nodes;
    if (made == a.tree) {
      nodes = a.nodes;
    } else if (made == b.tree) {
      nodes = b.nodes;
    } else if (made->a == a.tree && made->b == b.tree) {
      nodes = a.nodes + b.nodes + 1;
    } else if (b.tree && made->a == b.tree && !made->b) {
      nodes = b.nodes + 1;  // 0 - b is -b
    } else if (made->b && is_const(made->b) && a.tree->a == made->a) {
      nodes = a.nodes;  // (e + c1) + c2 is e + (c1 + c2)
    } else {
      nodes = node_count(made);
    }
    held_ -= a.nodes + b.nodes;
    hold(nodes);
    return {std::move(made), nodes};
  }

  void hold(size_t nodes) {
    held_ += nodes;
    if (held_ > kMaxNodes) too_large();
  }
  [[noreturn, gnu::noinline]] void too_deep() const {
    fail(peek().column, "expression nested too deeply");
  }
  [[noreturn, gnu::noinline]] void too_large() const {
    throw LimitError("\"" + std::string(text_.substr(0, 64)) +
                     "...\": an index expression of more than " + std::to_string(kMaxNodes) +
                     " nodes is larger than the limit");
  }

  Sized expr() {
    if (++depth_ > kMaxNesting) too_deep();
    // A leading sign binds to the first factor, as unary minus does in C and Python, so that
    // -7/2 is (-7)/2 = -4 under floor division.
    bool negate = false;
    if (at('+') || at('-')) negate = next().punct == '-';
    Sized e = term(negate);
    while (at('+') || at('-')) {
      char op = next().punct;
      Sized rhs = term();
      e = combine(idx::binary(op == '+' ? IndexKind::Add : IndexKind::Sub, e.tree, rhs.tree), e,
                  rhs);
    }
    --depth_;
    return e;
  }

  Sized term(bool negate_first = false) {
    Sized e = factor();
    if (negate_first) e = combine(idx::neg(e.tree), e);
    while (at('*') || at('/') || at('%')) {
      char op = next().punct;
      Sized rhs = factor();
      e = combine(idx::binary(op == '*'   ? IndexKind::Mul
                              : op == '/' ? IndexKind::Div
                                          : IndexKind::Mod,
                              e.tree, rhs.tree),
                  e, rhs);
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

  // An INT, loop index, axis size or parameter.
  [[gnu::noinline]] Sized operand(const Token& t) {
    switch (t.kind) {
      case TokenKind::Int:
        return leaf(idx::constant(t.number));
      case TokenKind::LoopVar:
        if (!options_.allow_loop_vars)
          fail(t.column, "loop index '" + t.text + "' is not allowed in a shape expression");
        if (options_.rank >= 0 && t.number >= options_.rank)
          fail(t.column, "loop index '" + t.text + "' is out of range: the output has rank " +
                             std::to_string(options_.rank));
        if (t.number > kMaxAxis) fail(t.column, "loop index '" + t.text + "' is out of range");
        return leaf(idx::var(int(t.number)));
      case TokenKind::Dim: {
        Index d = dim(t);
        if (at('[')) {
          ++pos_;
          expect('=');
          if (peek().kind != TokenKind::Dim) expected("an axis size like 'dB0'");
          Index other = dim(next());
          expect(']');
          equalities_.emplace_back(d, other);
        }
        return leaf(std::move(d));
      }
      default: {
        std::string name = t.text.substr(1);
        if (options_.params && std::find(options_.params->begin(), options_.params->end(), name) ==
                                   options_.params->end())
          fail(t.column, "unknown parameter '$" + name + "'");
        if (name.size() > kMaxName)
          fail(t.column, "parameter name longer than " + std::to_string(kMaxName) + " characters");
        return leaf(idx::param(name));
      }
    }
  }

  Sized factor() {
    const Token& t = peek();
    switch (t.kind) {
      case TokenKind::Int:
      case TokenKind::LoopVar:
      case TokenKind::Dim:
      case TokenKind::Param:
        ++pos_;
        return operand(t);
      case TokenKind::Min:
      case TokenKind::Max: {
        ++pos_;
        expect('(');
        Sized a = expr();
        expect(',');
        Sized b = expr();
        expect(')');
        return combine(
            idx::binary(t.kind == TokenKind::Min ? IndexKind::Min : IndexKind::Max, a.tree, b.tree),
            a, b);
      }
      case TokenKind::Punct:
        if (t.punct == '(') {
          ++pos_;
          Sized e = expr();
          expect(')');
          return e;
        }
        break;
      case TokenKind::End:
        break;
    }
    expected_term();
  }
  [[noreturn, gnu::noinline]] void expected_term() const { expected("a term"); }

  std::string_view text_;
  const ParseOptions& options_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  size_t held_ = 0;  // nodes of the trees held: see Sized
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
