// The graph IR parser: modules, functions, scopes and binding blocks. Names
// resolve to the innermost definition: parameters, lets, block bindings, and
// the printer's numbered steps ("%3 = ...;"), which are plain aliases for the
// expression on their right.
#include "anvil/ir/parser.h"

#include "anvil/ir/prim_func_hooks.h"
#include "anvil/runtime/params.h"
#include "ir/text_parser.h"
#include "ir/text_util.h"

namespace anvil::ir {
namespace text {

namespace {

// Deeper nesting than any real module; beyond it the parser reports an error
// instead of exhausting the stack.
constexpr int kMaxNestingDepth = 256;

// Offset of the metadata marker at the start of a line, or the text's size.
size_t find_metadata_marker(std::string_view text) {
  for (size_t pos = text.find(kMetadataMarker); pos != std::string_view::npos;
       pos = text.find(kMetadataMarker, pos + 1))
    if (pos == 0 || text[pos - 1] == '\n') return pos;
  return text.size();
}

}  // namespace

TextParser::TextParser(std::string_view text, const std::string& source_name, bool allow_free_vars)
    : lex_(text, source_name, find_metadata_marker(text)),
      allow_free_vars_(allow_free_vars),
      metadata_marker_(find_metadata_marker(text)) {
  push_scope();
}

TextParser::DepthGuard::DepthGuard(TextParser& p, const Token& at) : parser(p) {
  if (++parser.depth_ > kMaxNestingDepth) {
    --parser.depth_;
    parser.fail(at, str_cat("nesting deeper than ", kMaxNestingDepth, " levels"));
  }
}

Token TextParser::expect(TokenKind kind, std::string_view what) {
  if (!peek().is(kind)) fail_expected(peek(), what.empty() ? describe(kind) : std::string(what));
  return next();
}

Token TextParser::expect_ident(std::string_view word) {
  if (!peek().is_ident(word)) fail_expected(peek(), str_cat("'", word, "'"));
  return next();
}

bool TextParser::accept(TokenKind kind) {
  if (!peek().is(kind)) return false;
  next();
  return true;
}

Expr TextParser::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->find(name); found != it->end()) return found->second;
  return nullptr;
}

// ---------------------------------------------------------------- module

IRModule TextParser::module() {
  if (peek().is(TokenKind::Hash)) {
    next();
    expect(TokenKind::LBracket);
    expect_ident("version");
    expect(TokenKind::Equal);
    Token version = expect(TokenKind::String, "a version string");
    if (version.text != kTextFormatVersion)
      fail(version,
           str_cat("expected version \"", kTextFormatVersion, "\", got \"", version.text, "\""));
    expect(TokenKind::RBracket);
  }
  IRModule mod;
  while (!peek().is(TokenKind::End)) {
    if (peek().is_ident("prim_func")) {
      prim_func(mod);
      continue;
    }
    if (!peek().is_ident("def")) fail_expected(peek(), "'def', 'prim_func' or end of input");
    Token at = peek(1);
    std::string name;
    Function fn = global_def(name);
    if (mod.contains(name)) fail(at, "@" + name_text(name) + " is defined twice");
    mod.add(name, fn);
  }
  if (!metadata_) load_metadata(metadata_marker_);  // a broken section is an error even if unused
  for (const Token& ref : global_refs_)
    if (!mod.contains(ref.text))
      fail(ref,
           "unknown global function @" + name_text(ref.text) + ": the module does not define it");
  return mod;
}

Expr TextParser::standalone_expr() {
  Expr e = body();
  expect(TokenKind::End, "end of input");
  if (!metadata_) load_metadata(metadata_marker_);
  return e;
}

Type TextParser::standalone_type() {
  Type t = type();
  expect(TokenKind::End, "end of input");
  return t;
}

Function TextParser::global_def(std::string& name) {
  expect_ident("def");
  name = expect(TokenKind::Global, "a function name (@name)").text;
  return function_rest();
}

void TextParser::prim_func(IRModule& mod) {
  Token keyword = next();
  Token name = expect(TokenKind::Global, "a function name (@name)");
  const PrimFuncHooks& hooks = prim_func_hooks();
  if (!hooks.parse)
    fail(keyword, "cannot parse prim_func @" + name_text(name.text) +
                      ": the tensor IR's parser is not installed (set_prim_func_hooks)");
  if (mod.contains(name.text)) fail(name, "@" + name_text(name.text) + " is defined twice");
  size_t pos = name.end;
  BaseFunc func = hooks.parse(lex_.text().substr(0, metadata_marker_), pos, lex_.source_name());
  ANVIL_ICHECK(func && pos > name.end && pos <= metadata_marker_,
               "the PrimFunc parser consumed no text or ran past the end");
  mod.add(name.text, func);
  lex_.seek(pos);
}

// "(params) -> ret { body }" after "def @name" or "fn".
Function TextParser::function_rest() {
  DepthGuard guard(*this, peek());
  expect(TokenKind::LParen);
  push_scope();
  std::vector<Var> params;
  DictAttrs attrs;
  if (!peek().is(TokenKind::RParen)) {
    while (true) {
      if (peek().is(TokenKind::Ident) && peek(1).is(TokenKind::Equal)) {
        std::string key = next().text;
        next();
        attrs = attrs.with(key, attr_literal());
      } else {
        if (!attrs.empty())
          fail_expected(peek(), "a function attribute (key=value) after attributes");
        Token name =
            expect(TokenKind::Local, "a parameter (%name: Type) or an attribute (key=value)");
        Type annotation;
        if (accept(TokenKind::Colon)) annotation = type();
        Var var = VarNode::make(name.text, annotation);
        bind(name.text, var);
        params.push_back(var);
      }
      if (!accept(TokenKind::Comma)) break;
    }
  }
  expect(TokenKind::RParen, "',' or ')' after a parameter");
  Type ret;
  if (accept(TokenKind::Arrow)) ret = type();
  Expr body = braced_body();
  pop_scope();
  return FunctionNode::make(std::move(params), std::move(body), std::move(ret), std::move(attrs));
}

// ---------------------------------------------------------------- scopes

Expr TextParser::braced_body() {
  expect(TokenKind::LBrace);
  push_scope();
  Expr e = body();
  pop_scope();
  expect(TokenKind::RBrace, "'}' after the result expression");
  return e;
}

// Statements, then the result: "%0 = ...;" steps, "let %x = ...;" and binding
// blocks. Lets and blocks wrap everything after them, built from the inside
// out once the result is known, so long let chains need no recursion.
Expr TextParser::body() {
  struct Pending {
    Var let_var;  // null for a run of blocks
    Expr let_value;
    std::vector<BindingBlock> blocks;
  };
  std::vector<Pending> pending;
  std::vector<BindingBlock> blocks;
  size_t scopes_opened = 0;
  while (true) {
    const Token& t = peek();
    if (t.is(TokenKind::Local) && peek(1).is(TokenKind::Equal)) {
      std::string name = next().text;
      next();
      Expr value = expr();
      expect(TokenKind::Semicolon, "';' after the step");
      bind(name, value);
    } else if (t.is_ident("let")) {
      next();
      if (!blocks.empty()) pending.push_back({nullptr, nullptr, std::move(blocks)});
      blocks.clear();
      Token name = expect(TokenKind::Local, "a variable (%name) after 'let'");
      Type annotation;
      if (accept(TokenKind::Colon)) annotation = type();
      expect(TokenKind::Equal, "'=' after the let variable");
      // Bound before its value is read, so a recursive function can call itself.
      Var var = VarNode::make(name.text, annotation);
      push_scope();
      ++scopes_opened;
      bind(name.text, var);
      Expr value = expr();
      expect(TokenKind::Semicolon, "';' after the let value");
      pending.push_back({var, value, {}});
    } else if ((t.is_ident("dataflow") || t.is_ident("bindings")) &&
               peek(1).is(TokenKind::LBrace)) {
      blocks.push_back(block());
    } else {
      break;
    }
  }
  Expr result = expr();
  if (!blocks.empty()) result = SeqExprNode::make(std::move(blocks), result);
  for (auto it = pending.rbegin(); it != pending.rend(); ++it)
    result = it->let_var ? Expr(LetNode::make(it->let_var, it->let_value, result))
                         : Expr(SeqExprNode::make(std::move(it->blocks), result));
  for (size_t i = 0; i < scopes_opened; ++i) pop_scope();
  return result;
}

// "dataflow { %lv = ...; %gv = ...; output(%gv); }" or "bindings { %x = ...; }".
BindingBlock TextParser::block() {
  BindingBlock result;
  result.is_dataflow = next().text == "dataflow";
  expect(TokenKind::LBrace);
  std::unordered_set<std::string> outputs;
  if (result.is_dataflow) {
    outputs = scan_outputs();
    push_scope();  // dataflow vars end with the block; outputs go to the enclosing scope
  }
  std::unordered_set<std::string> bound_outputs;
  while (!peek().is(TokenKind::RBrace) && !peek().is_ident("output")) {
    Token name = expect(TokenKind::Local, result.is_dataflow
                                              ? "a binding (%name = value;), output(...) or '}'"
                                              : "a binding (%name = value;) or '}'");
    Type annotation;
    if (accept(TokenKind::Colon)) annotation = type();
    expect(TokenKind::Equal, "'=' after the bound variable");
    Expr value = expr();
    expect(TokenKind::Semicolon, "';' after the binding");
    bool is_output = !result.is_dataflow || outputs.count(name.text);
    Var var = VarNode::make(name.text, annotation, !is_output);
    if (result.is_dataflow && is_output) {
      scopes_[scopes_.size() - 2][name.text] = var;
      bound_outputs.insert(name.text);
    } else {
      bind(name.text, var);
    }
    result.bindings.push_back({var, value});
  }
  if (peek().is_ident("output")) {
    Token keyword = next();
    if (!result.is_dataflow) fail(keyword, "output(...) belongs in a dataflow block only");
    expect(TokenKind::LParen);
    while (!peek().is(TokenKind::RParen)) {
      Token name = expect(TokenKind::Local, "an output variable (%name) or ')'");
      if (!bound_outputs.count(name.text))
        fail(name, "output %" + name_text(name.text) + " is not bound in this dataflow block");
      if (!accept(TokenKind::Comma)) break;
    }
    expect(TokenKind::RParen, "',' or ')' in output(...)");
    expect(TokenKind::Semicolon, "';' after output(...)");
  }
  expect(TokenKind::RBrace, "'}' to end the block");
  if (result.is_dataflow) pop_scope();
  return result;
}

// The names in the block's output(...), read ahead: whether a binding var is a
// dataflow var must be known when it is created, before its uses are parsed.
std::unordered_set<std::string> TextParser::scan_outputs() {
  std::unordered_set<std::string> names;
  Lexer::State start = lex_.save();
  try {
    int depth = 0;
    while (true) {
      Token t = next();
      if (t.is(TokenKind::End)) break;
      if (t.is(TokenKind::LBrace)) ++depth;
      if (t.is(TokenKind::RBrace) && depth-- == 0) break;
      if (depth == 0 && t.is_ident("output") && peek().is(TokenKind::LParen)) {
        next();
        while (peek().is(TokenKind::Local) || peek().is(TokenKind::Comma))
          if (Token n = next(); n.is(TokenKind::Local)) names.insert(n.text);
        break;
      }
    }
  } catch (const Error&) {
    // A malformed rest is reported when the parser reaches it.
  }
  lex_.restore(start);
  return names;
}

// ---------------------------------------------------------------- metadata

void TextParser::load_metadata(size_t marker) {
  metadata_.emplace();
  if (marker >= lex_.text().size()) return;
  std::string_view section = lex_.text().substr(marker + kMetadataMarker.size());
  int line = 1;
  for (size_t i = 0; i < marker; ++i) line += lex_.text()[i] == '\n';
  std::optional<std::string> bytes = base64_decode(section);
  if (!bytes) lex_.fail_at(line, 1, "expected base64 text after #[metadata]");
  NamedTensors tensors;
  try {
    tensors = load_params(*bytes, "the #[metadata] section");
  } catch (const Error& e) {
    lex_.fail_at(line, 1, e.what());
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].first != std::to_string(i))
      lex_.fail_at(line, 1,
                   str_cat("expected metadata entry \"", i, "\", got \"", tensors[i].first, "\""));
    metadata_->push_back(ConstantNode::make(tensors[i].second));
  }
}

}  // namespace text

IRModule parse_module(std::string_view text, const std::string& source_name) {
  return text::TextParser(text, source_name, false).module();
}

Expr parse_expr(std::string_view text, const std::string& source_name) {
  return text::TextParser(text, source_name, true).standalone_expr();
}

Type parse_type(std::string_view text, const std::string& source_name) {
  return text::TextParser(text, source_name, false).standalone_type();
}

}  // namespace anvil::ir
