// Tokens of the graph IR text format. The lexer works on demand, so a parser
// can hand a region of the text to another layer's parser (PrimFuncs) and go on
// after it, and every token knows its line and column for error messages.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace anvil::ir::text {

enum class TokenKind : uint8_t {
  End,
  Ident,   // nn.conv2d, float32, fn, True (dotted names are one token)
  Local,   // %x, %0, %"input.1"
  Global,  // @main, @"x.y"
  Int,     // 42, 42i64 (sign is a separate Minus token)
  Float,   // 1.5, 2e-05f, 1f (an integer with a float suffix is a Float)
  String,  // "env.linear"
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Equal,
  Arrow,
  Dot,
  Question,
  Hash,
  Plus,
  Minus,
  Star,
};

struct Token {
  TokenKind kind = TokenKind::End;
  // Identifier or name (unquoted), string contents (unescaped), or the digits of a number.
  std::string text;
  // Suffix of a number: "f", "f64", "i64", ...
  std::string suffix;
  int line = 1;
  int col = 1;
  size_t offset = 0;  // byte offset of the first character
  size_t end = 0;     // byte offset just past the token

  bool is(TokenKind k) const { return kind == k; }
  bool is_ident(std::string_view word) const { return kind == TokenKind::Ident && text == word; }
};

// How a token reads in a message: "'('", "identifier 'foo'", "end of input".
std::string describe(const Token& token);

// Spelling of a token kind in "expected ..." messages: "'('", "a string".
std::string describe(TokenKind kind);

class Lexer {
 public:
  // Lexes text[0, end); positions and messages name source_name.
  Lexer(std::string_view text, std::string source_name, size_t end);

  // The token k places ahead, without consuming it.
  const Token& peek(size_t k = 0);
  // Consumes and returns the next token.
  Token next();

  // Throws Error "<source>:<line>:<col>: <message>".
  [[noreturn]] void fail_at(int line, int col, const std::string& message) const;
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    fail_at(at.line, at.col, message);
  }
  // Throws Error "<source>:<line>:<col>: expected <what>, got <token>".
  [[noreturn]] void fail_expected(const Token& got, std::string_view what) const;

  // Where the lexer stands, for a look-ahead scan that returns.
  struct State {
    size_t pos;
    int line, col;
    TokenKind last_kind;
  };
  // Drops buffered tokens and returns the position of the first unconsumed one.
  State save();
  void restore(const State& state);
  // Continues lexing at byte offset pos (after another parser consumed a region).
  void seek(size_t pos);

  std::string_view text() const { return text_; }
  const std::string& source_name() const { return source_name_; }

 private:
  Token lex_one();
  void lex_number(Token& token);
  void lex_string(Token& token);
  void skip_space_and_comments();
  char at(size_t i) const { return i < end_ ? text_[i] : '\0'; }
  void advance(size_t n = 1);

  std::string_view text_;
  std::string source_name_;
  size_t end_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  // After a '.', digits are a tuple index, so "%t.0.1" is two indexes, not a float.
  TokenKind last_kind_ = TokenKind::End;
  TokenKind consumed_kind_ = TokenKind::End;  // kind of the last token next() returned
  std::deque<Token> buffer_;
};

}  // namespace anvil::ir::text
