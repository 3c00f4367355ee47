// Tokens of the tensor IR's TVMScript-like text (docs/tir-text-format.md):
// a Python-shaped lexer with INDENT/DEDENT tokens. It lexes lazily, one
// token ahead of the parser, so a caller embedding a PrimFunc in another
// text (the graph IR's "prim_func @name ...") never lexes past its end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/ir/printer.h"

namespace anvil::tir::text {

enum class TokenKind : uint8_t {
  Ident,    // names and keywords (for, in, if, and, True, ...)
  Int,      // decimal digits; text holds them
  Float,    // a literal with '.' or an exponent; text holds it
  String,   // text holds the unescaped value
  Op,       // punctuation and operators; text holds the spelling
  Newline,  // end of a logical line
  Indent,
  Dedent,
  End,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  size_t offset = 0;  // byte offset of the token's first character
  int line = 1;       // 1-based
  int col = 1;        // 1-based, in bytes

  bool is(TokenKind k) const { return kind == k; }
  bool is_op(std::string_view op) const { return kind == TokenKind::Op && text == op; }
  bool is_ident(std::string_view name) const { return kind == TokenKind::Ident && text == name; }
};

// Python keywords and the names the text gives a meaning; printed names avoid them.
bool is_reserved_name(std::string_view name);

// A printable name: valid identifier characters, not reserved.
std::string sanitize_name(std::string_view name);

// String literals are spelled as in the graph IR's text.
using ir::quote_string;

class Lexer {
 public:
  // Lexes text from byte offset start; the first line is not checked for indentation.
  Lexer(std::string_view text, size_t start, std::string source_name);

  // The token k places ahead (0: the next one).
  const Token& peek(size_t k = 0);
  Token next();
  // The offset of the next token, without lexing further.
  size_t next_offset() const;

  const std::string& source_name() const { return source_name_; }
  std::string_view text() const { return text_; }

  // Throws anvil::Error "<source>:<line>:<col>: message".
  [[noreturn]] void fail_at(int line, int col, const std::string& message) const;
  [[noreturn]] void fail(const Token& at, const std::string& message) const {
    fail_at(at.line, at.col, message);
  }

 private:
  void lex_more();
  void lex_line_start();
  void lex_token();
  void skip_blanks_and_comments();
  Token make(TokenKind kind, std::string text, size_t offset) const;
  int col_of(size_t offset) const { return int(offset - line_start_) + 1; }
  char at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  std::string_view text_;
  std::string source_name_;
  size_t pos_;
  size_t line_start_;
  int line_ = 1;
  bool at_line_start_ = false;
  bool ended_ = false;
  bool last_was_newline_ = true;  // no Newline token owed for an empty logical line
  int bracket_depth_ = 0;
  std::vector<int> indents_{0};
  std::deque<Token> queue_;
};

}  // namespace anvil::tir::text
