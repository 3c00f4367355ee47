// The lexer of the tensor IR text: Python's line structure (NEWLINE, INDENT,
// DEDENT; newlines inside brackets join lines; '#' comments), numbers,
// strings with escapes, and the operators the language uses.
#include <algorithm>
#include <array>
#include <cctype>

#include "anvil/support/error.h"
#include "tir/text_lexer.h"

namespace anvil::tir::text {

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string describe_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

}  // namespace

bool is_reserved_name(std::string_view name) {
  static constexpr std::array<std::string_view, 40> kReserved = {
      "False",   "None",     "True",     "and",    "as",    "assert", "async",  "await",
      "break",   "class",    "continue", "def",    "del",   "elif",   "else",   "except",
      "finally", "for",      "from",     "global", "if",    "import", "in",     "is",
      "lambda",  "nonlocal", "not",      "or",     "pass",  "raise",  "return", "try",
      "while",   "with",     "yield",    "T",      "range", "I",      "R",      "print"};
  return std::find(kReserved.begin(), kReserved.end(), name) != kReserved.end();
}

std::string sanitize_name(std::string_view name) {
  std::string out;
  for (char c : name) out += is_ident_char(c) ? c : '_';
  if (out.empty()) out = "v";
  if (is_digit(out[0])) out = "v" + out;
  if (is_reserved_name(out)) out += "_";
  return out;
}

Lexer::Lexer(std::string_view text, size_t start, std::string source_name)
    : text_(text), source_name_(std::move(source_name)), pos_(std::min(start, text.size())) {
  line_start_ = pos_;
  while (line_start_ > 0 && text_[line_start_ - 1] != '\n') --line_start_;
  line_ = 1 + int(std::count(text_.begin(), text_.begin() + ptrdiff_t(pos_), '\n'));
}

void Lexer::fail_at(int line, int col, const std::string& message) const {
  throw Error(str_cat(source_name_, ":", line, ":", col, ": ", message));
}

size_t Lexer::next_offset() const { return queue_.empty() ? pos_ : queue_.front().offset; }

const Token& Lexer::peek(size_t k) {
  while (queue_.size() <= k) lex_more();
  return queue_[k];
}

Token Lexer::next() {
  peek(0);
  Token t = std::move(queue_.front());
  queue_.pop_front();
  return t;
}

Token Lexer::make(TokenKind kind, std::string text, size_t offset) const {
  Token t;
  t.kind = kind;
  t.text = std::move(text);
  t.offset = offset;
  t.line = line_;
  t.col = col_of(offset);
  return t;
}

void Lexer::skip_blanks_and_comments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\f') {
      ++pos_;
    } else if (c == '\\' && (at(pos_ + 1) == '\n' || at(pos_ + 1) == '\r')) {
      fail_at(line_, col_of(pos_), "line continuations with '\\' are not supported");
    } else if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
    } else {
      break;
    }
  }
}

// At the start of a physical line outside brackets: measures indentation and
// queues INDENT/DEDENT tokens; blank and comment-only lines are skipped whole.
void Lexer::lex_line_start() {
  at_line_start_ = false;
  size_t p = pos_;
  while (p < text_.size() && text_[p] == ' ') ++p;
  char c = at(p);
  if (c == '\t' || c == '\f')
    fail_at(line_, col_of(p), "tabs are not allowed in indentation; indent with spaces");
  if (p >= text_.size() || c == '\n' || c == '\r' || c == '#') return;  // blank line
  int width = int(p - pos_);
  pos_ = p;
  if (width > indents_.back()) {
    indents_.push_back(width);
    queue_.push_back(make(TokenKind::Indent, "", p));
    return;
  }
  while (width < indents_.back()) {
    indents_.pop_back();
    queue_.push_back(make(TokenKind::Dedent, "", p));
  }
  if (width != indents_.back())
    fail_at(line_, col_of(p), "unindent does not match any outer indentation level");
}

void Lexer::lex_more() {
  size_t before = queue_.size();
  while (queue_.size() == before) {
    if (ended_) {
      queue_.push_back(make(TokenKind::End, "", text_.size()));
      return;
    }
    if (at_line_start_ && bracket_depth_ == 0) {
      lex_line_start();
      if (queue_.size() > before) return;
    }
    skip_blanks_and_comments();
    if (pos_ >= text_.size()) {
      if (!last_was_newline_) queue_.push_back(make(TokenKind::Newline, "", pos_));
      last_was_newline_ = true;
      while (indents_.size() > 1) {
        indents_.pop_back();
        queue_.push_back(make(TokenKind::Dedent, "", pos_));
      }
      queue_.push_back(make(TokenKind::End, "", pos_));
      ended_ = true;
      return;
    }
    char c = text_[pos_];
    if (c == '\n' || c == '\r') {
      size_t newline_at = pos_;
      Token newline = make(TokenKind::Newline, "", newline_at);
      pos_ += (c == '\r' && at(pos_ + 1) == '\n') ? 2 : 1;
      ++line_;
      line_start_ = pos_;
      if (bracket_depth_ > 0) continue;
      at_line_start_ = true;
      if (!last_was_newline_) {
        queue_.push_back(std::move(newline));
        last_was_newline_ = true;
      }
      continue;
    }
    lex_token();
    last_was_newline_ = false;
  }
}

void Lexer::lex_token() {
  size_t start = pos_;
  char c = text_[pos_];
  if (is_ident_start(c)) {
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    queue_.push_back(make(TokenKind::Ident, std::string(text_.substr(start, pos_ - start)), start));
    return;
  }
  if (is_digit(c) || (c == '.' && is_digit(at(pos_ + 1)))) {
    bool is_float = false;
    while (is_digit(at(pos_))) ++pos_;
    if (at(pos_) == '.') {
      is_float = true;
      ++pos_;
      while (is_digit(at(pos_))) ++pos_;
    }
    if (at(pos_) == 'e' || at(pos_) == 'E') {
      size_t p = pos_ + 1;
      if (at(p) == '+' || at(p) == '-') ++p;
      if (!is_digit(at(p))) fail_at(line_, col_of(start), "malformed number: missing exponent");
      while (is_digit(at(p))) ++p;
      pos_ = p;
      is_float = true;
    }
    if (is_ident_char(at(pos_)) || at(pos_) == '.')
      fail_at(line_, col_of(start), "malformed number");
    queue_.push_back(make(is_float ? TokenKind::Float : TokenKind::Int,
                          std::string(text_.substr(start, pos_ - start)), start));
    return;
  }
  if (c == '"' || c == '\'') {
    char quote = c;
    std::string value;
    ++pos_;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n' || text_[pos_] == '\r')
        fail_at(line_, col_of(start), "unterminated string");
      char d = text_[pos_++];
      if (d == quote) break;
      if (d != '\\') {
        value += d;
        continue;
      }
      char e = at(pos_);
      ++pos_;
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '0':
          value += '\0';
          break;
        case '\\':
        case '\'':
        case '"':
          value += e;
          break;
        case 'x': {
          int v = 0;
          for (int i = 0; i < 2; ++i) {
            char h = at(pos_);
            int digit = std::isxdigit(static_cast<unsigned char>(h))
                            ? (is_digit(h) ? h - '0' : std::tolower(h) - 'a' + 10)
                            : -1;
            if (digit < 0) fail_at(line_, col_of(pos_), "malformed \\x escape in string");
            v = v * 16 + digit;
            ++pos_;
          }
          value += char(v);
          break;
        }
        default:
          fail_at(line_, col_of(pos_ - 2), "unknown escape in string");
      }
    }
    queue_.push_back(make(TokenKind::String, std::move(value), start));
    return;
  }
  static constexpr std::array<std::string_view, 7> kTwoChar = {
      "//", "==", "!=", "<=", ">=", "->", "**"};
  for (std::string_view op : kTwoChar) {
    if (text_.substr(pos_, 2) == op) {
      pos_ += 2;
      queue_.push_back(make(TokenKind::Op, std::string(op), start));
      return;
    }
  }
  static constexpr std::string_view kOneChar = "+-*/%<>=()[]{},:.@";
  if (kOneChar.find(c) == std::string_view::npos)
    fail_at(line_, col_of(start), "unexpected character " + describe_char(c));
  if (c == '(' || c == '[' || c == '{') ++bracket_depth_;
  if ((c == ')' || c == ']' || c == '}') && bracket_depth_ > 0) --bracket_depth_;
  ++pos_;
  queue_.push_back(make(TokenKind::Op, std::string(1, c), start));
}

}  // namespace anvil::tir::text
