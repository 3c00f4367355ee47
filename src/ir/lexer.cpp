#include "ir/lexer.h"

#include <cstdio>

#include "anvil/support/error.h"
#include "ir/text_util.h"

namespace anvil::ir::text {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_start(char c) { return is_alpha(c) || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string char_text(char c) {
  if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
    return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

std::string describe(TokenKind kind) {
  switch (kind) {
    case TokenKind::End:
      return "end of input";
    case TokenKind::Ident:
      return "an identifier";
    case TokenKind::Local:
      return "a local variable (%name)";
    case TokenKind::Global:
      return "a global function (@name)";
    case TokenKind::Int:
      return "an integer";
    case TokenKind::Float:
      return "a number";
    case TokenKind::String:
      return "a string";
    case TokenKind::LParen:
      return "'('";
    case TokenKind::RParen:
      return "')'";
    case TokenKind::LBracket:
      return "'['";
    case TokenKind::RBracket:
      return "']'";
    case TokenKind::LBrace:
      return "'{'";
    case TokenKind::RBrace:
      return "'}'";
    case TokenKind::Comma:
      return "','";
    case TokenKind::Colon:
      return "':'";
    case TokenKind::Semicolon:
      return "';'";
    case TokenKind::Equal:
      return "'='";
    case TokenKind::Arrow:
      return "'->'";
    case TokenKind::Dot:
      return "'.'";
    case TokenKind::Question:
      return "'?'";
    case TokenKind::Hash:
      return "'#'";
    case TokenKind::Plus:
      return "'+'";
    case TokenKind::Minus:
      return "'-'";
    case TokenKind::Star:
      return "'*'";
  }
  return "a token";
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::Ident:
      return "identifier '" + token.text + "'";
    case TokenKind::Local: {
      // Numbered steps (%0) are not names, but read the same way.
      bool digits =
          !token.text.empty() && token.text.find_first_not_of("0123456789") == std::string::npos;
      return "'%" + (digits ? token.text : name_text(token.text)) + "'";
    }
    case TokenKind::Global:
      return "'@" + name_text(token.text) + "'";
    case TokenKind::Int:
    case TokenKind::Float:
      return "number " + token.text + token.suffix;
    case TokenKind::String:
      return "string " + quote_string(token.text);
    default:
      return describe(token.kind);
  }
}

Lexer::Lexer(std::string_view text, std::string source_name, size_t end)
    : text_(text), source_name_(std::move(source_name)), end_(std::min(end, text.size())) {}

void Lexer::fail_at(int line, int col, const std::string& message) const {
  throw_error(source_name_, ":", line, ":", col, ": ", message);
}

void Lexer::fail_expected(const Token& got, std::string_view what) const {
  fail(got, str_cat("expected ", what, ", got ", describe(got)));
}

const Token& Lexer::peek(size_t k) {
  while (buffer_.size() <= k) buffer_.push_back(lex_one());
  return buffer_[k];
}

Token Lexer::next() {
  peek(0);
  Token token = std::move(buffer_.front());
  buffer_.pop_front();
  consumed_kind_ = token.kind;
  return token;
}

Lexer::State Lexer::save() {
  if (!buffer_.empty()) {
    // Rewind to the first buffered token; the token before it decides how digits lex.
    const Token& front = buffer_.front();
    State state{front.offset, front.line, front.col, consumed_kind_};
    restore(state);
    return state;
  }
  return {pos_, line_, col_, last_kind_};
}

void Lexer::restore(const State& state) {
  buffer_.clear();
  pos_ = state.pos;
  line_ = state.line;
  col_ = state.col;
  last_kind_ = consumed_kind_ = state.last_kind;
}

void Lexer::seek(size_t pos) {
  buffer_.clear();
  pos_ = 0;
  line_ = 1;
  col_ = 1;
  advance(std::min(pos, end_));
  last_kind_ = consumed_kind_ = TokenKind::End;
}

void Lexer::advance(size_t n) {
  for (size_t i = 0; i < n && pos_ < end_; ++i, ++pos_) {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
  }
}

void Lexer::skip_space_and_comments() {
  while (pos_ < end_) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else if (c == '/' && at(pos_ + 1) == '/') {
      while (pos_ < end_ && text_[pos_] != '\n') advance();
    } else if (c == '/' && at(pos_ + 1) == '*') {
      int line = line_, col = col_;
      advance(2);
      while (pos_ < end_ && !(text_[pos_] == '*' && at(pos_ + 1) == '/')) advance();
      if (pos_ >= end_) fail_at(line, col, "expected '*/' to close this comment, got end of input");
      advance(2);
    } else {
      return;
    }
  }
}

Token Lexer::lex_one() {
  skip_space_and_comments();
  Token token;
  token.line = line_;
  token.col = col_;
  token.offset = pos_;
  bool after_dot = last_kind_ == TokenKind::Dot;
  if (pos_ >= end_) {
    token.kind = TokenKind::End;
  } else {
    char c = text_[pos_];
    auto single = [&](TokenKind kind) {
      token.kind = kind;
      advance();
    };
    switch (c) {
      case '(':
        single(TokenKind::LParen);
        break;
      case ')':
        single(TokenKind::RParen);
        break;
      case '[':
        single(TokenKind::LBracket);
        break;
      case ']':
        single(TokenKind::RBracket);
        break;
      case '{':
        single(TokenKind::LBrace);
        break;
      case '}':
        single(TokenKind::RBrace);
        break;
      case ',':
        single(TokenKind::Comma);
        break;
      case ':':
        single(TokenKind::Colon);
        break;
      case ';':
        single(TokenKind::Semicolon);
        break;
      case '=':
        single(TokenKind::Equal);
        break;
      case '.':
        single(TokenKind::Dot);
        break;
      case '?':
        single(TokenKind::Question);
        break;
      case '#':
        single(TokenKind::Hash);
        break;
      case '+':
        single(TokenKind::Plus);
        break;
      case '*':
        single(TokenKind::Star);
        break;
      case '-':
        if (at(pos_ + 1) == '>') {
          token.kind = TokenKind::Arrow;
          advance(2);
        } else {
          single(TokenKind::Minus);
        }
        break;
      case '"':
        lex_string(token);
        break;
      case '%':
      case '@': {
        token.kind = c == '%' ? TokenKind::Local : TokenKind::Global;
        advance();
        if (at(pos_) == '"') {
          Token quoted;
          lex_string(quoted);
          token.text = std::move(quoted.text);
        } else {
          size_t start = pos_;
          while (pos_ < end_ && is_name_char(text_[pos_])) advance();
          if (pos_ == start) {
            fail_at(token.line, token.col,
                    str_cat("expected a name after '", c, "', got ",
                            pos_ < end_ ? char_text(text_[pos_]) : "end of input"));
          }
          token.text = std::string(text_.substr(start, pos_ - start));
        }
        break;
      }
      default:
        if (is_digit(c)) {
          if (after_dot) {
            // A tuple index: digits only, so "%t.0.1" reads as two indexes.
            size_t start = pos_;
            while (pos_ < end_ && is_digit(text_[pos_])) advance();
            token.kind = TokenKind::Int;
            token.text = std::string(text_.substr(start, pos_ - start));
          } else {
            lex_number(token);
          }
        } else if (is_name_start(c)) {
          size_t start = pos_;
          while (true) {
            while (pos_ < end_ && is_name_char(text_[pos_])) advance();
            if (at(pos_) == '.' && is_name_start(at(pos_ + 1))) {
              advance();
              continue;
            }
            break;
          }
          token.kind = TokenKind::Ident;
          token.text = std::string(text_.substr(start, pos_ - start));
        } else {
          fail_at(line_, col_, "unexpected character " + char_text(c));
        }
    }
  }
  token.end = pos_;
  last_kind_ = token.kind;
  return token;
}

void Lexer::lex_number(Token& token) {
  size_t start = pos_;
  bool has_fraction = false;
  while (pos_ < end_ && is_digit(text_[pos_])) advance();
  if (at(pos_) == '.' && is_digit(at(pos_ + 1))) {
    has_fraction = true;
    advance();
    while (pos_ < end_ && is_digit(text_[pos_])) advance();
  }
  if (at(pos_) == 'e' || at(pos_) == 'E') {
    size_t digits = pos_ + 1;
    if (at(digits) == '+' || at(digits) == '-') ++digits;
    if (is_digit(at(digits))) {
      has_fraction = true;
      advance(digits - pos_);
      while (pos_ < end_ && is_digit(text_[pos_])) advance();
    }
  }
  token.text = std::string(text_.substr(start, pos_ - start));
  size_t suffix_start = pos_;
  if (is_alpha(at(pos_))) {
    while (pos_ < end_ && is_name_char(text_[pos_])) advance();
  }
  token.suffix = std::string(text_.substr(suffix_start, pos_ - suffix_start));
  if (!token.suffix.empty() && !dtype_of_suffix(token.suffix, has_fraction))
    fail_at(
        token.line, token.col,
        str_cat("expected a number suffix (f, f16, f64, i8, i16, i64, u8, u16, u32, u64), got '",
                token.suffix, "' in ", token.text, token.suffix));
  bool float_suffix = !token.suffix.empty() && token.suffix[0] == 'f';
  token.kind = has_fraction || float_suffix ? TokenKind::Float : TokenKind::Int;
}

void Lexer::lex_string(Token& token) {
  int line = line_, col = col_;
  token.kind = TokenKind::String;
  advance();  // opening quote
  std::string out;
  while (true) {
    if (pos_ >= end_ || text_[pos_] == '\n')
      fail_at(line, col,
              str_cat("expected '\"' to end the string, got ",
                      pos_ >= end_ ? "end of input" : "end of line"));
    char c = text_[pos_];
    if (c == '"') {
      advance();
      break;
    }
    if (c != '\\') {
      out += c;
      advance();
      continue;
    }
    char e = at(pos_ + 1);
    int esc_line = line_, esc_col = col_;
    advance(2);
    switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'x': {
        int hi = hex_value(at(pos_)), lo = hex_value(at(pos_ + 1));
        if (hi < 0 || lo < 0)
          fail_at(esc_line, esc_col, "expected two hex digits after \\x in a string");
        out += char(hi * 16 + lo);
        advance(2);
        break;
      }
      default:
        fail_at(esc_line, esc_col,
                str_cat("expected an escape (\\\" \\\\ \\n \\t \\r \\xHH), got ",
                        e == '\0' ? "end of input" : "\\" + std::string(1, e)));
    }
  }
  token.text = std::move(out);
}

}  // namespace anvil::ir::text
