// The graph IR parser: expressions, calls with their attributes, and constants.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/text_parser.h"
#include "ir/text_util.h"

namespace anvil::ir::text {

namespace {

// Stores the literal text (sign included) as element i of t; false when it does not fit the dtype.
bool store_element(Tensor& t, int64_t i, const std::string& text) {
  DataType dt = t.dtype();
  char* p = static_cast<char*>(t.data()) + i * dt.bytes();
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto store_int = [&]<typename T>(T) {
    T v{};
    auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last) return false;
    std::memcpy(p, &v, sizeof v);
    return true;
  };
  if (dt.is_int()) {
    switch (dt.bits) {
      case 8:
        return store_int(int8_t());
      case 16:
        return store_int(int16_t());
      case 32:
        return store_int(int32_t());
      default:
        return store_int(int64_t());
    }
  }
  if (dt.is_uint()) {
    if (text[0] == '-') return false;
    switch (dt.bits) {
      case 8:
        return store_int(uint8_t());
      case 16:
        return store_int(uint16_t());
      case 32:
        return store_int(uint32_t());
      default:
        return store_int(uint64_t());
    }
  }
  if (dt == DataType::float64()) {
    double v = 0;
    auto [end, ec] = std::from_chars(first, last, v);
    if (end != last || ec != std::errc()) return false;
    std::memcpy(p, &v, sizeof v);
    return true;
  }
  // float32 reads directly as float: a shortest float spelling read as double and
  // rounded again could land on a neighbour.
  float v = 0;
  auto [end, ec] = std::from_chars(first, last, v);
  if (end != last || ec != std::errc()) return false;
  if (dt == DataType::float32()) {
    std::memcpy(p, &v, sizeof v);
  } else {
    t.set_from_double(i, v);
  }
  return true;
}

bool is_number(const Token& t) { return t.is(TokenKind::Int) || t.is(TokenKind::Float); }

bool is_special_float(const Token& t) {
  return t.is_ident("inf") || t.is_ident("nan") || t.is_ident("inff") || t.is_ident("nanf");
}

}  // namespace

Expr TextParser::expr() {
  DepthGuard guard(*this, peek());
  Expr e = primary();
  while (true) {
    if (peek().is(TokenKind::LParen)) {
      e = call(e);
    } else if (peek().is(TokenKind::Dot)) {
      next();
      Token index = expect(TokenKind::Int, "a tuple index after '.'");
      int64_t value = integer(index, false);
      if (value > std::numeric_limits<int>::max())
        fail(index, "tuple index " + index.text + " is too large");
      e = TupleGetItemNode::make(e, int(value));
    } else {
      return e;
    }
  }
}

Expr TextParser::primary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::Local:
      return local_ref();
    case TokenKind::Global: {
      Token name = next();
      global_refs_.push_back(name);
      return GlobalVarNode::make(name.text);
    }
    case TokenKind::String:
      return ExternFuncNode::make(next().text);
    case TokenKind::Int:
    case TokenKind::Float:
    case TokenKind::Minus:
      return scalar_literal();
    case TokenKind::LParen:
      return paren_or_tuple();
    case TokenKind::LBrace:
      return braced_body();
    case TokenKind::Ident:
      break;
    default:
      fail_expected(t, "an expression");
  }
  if (t.is_ident("True") || t.is_ident("False")) return scalar_literal();
  if (t.is_ident("fn")) {
    next();
    return function_rest();
  }
  if (t.is_ident("if")) return if_expr();
  if (t.is_ident("while") && peek(1).is(TokenKind::LParen)) return while_expr();
  if (t.is_ident("seq") && peek(1).is(TokenKind::LBrace)) {
    next();
    return SeqExprNode::make({}, braced_body());
  }
  if (t.is_ident("const") && peek(1).is(TokenKind::LParen)) return const_literal();
  if (t.is_ident("meta") && peek(1).is(TokenKind::LBracket)) return meta_ref();
  static const char* const keywords[] = {"let",      "def",    "else",     "dataflow",
                                         "bindings", "output", "prim_func"};
  if (std::find(std::begin(keywords), std::end(keywords), t.text) != std::end(keywords))
    fail_expected(t, "an expression");
  Token name = next();
  if (!OpTable::global().find(name.text)) fail(name, "unknown operator '" + name.text + "'");
  return OpNode::get(name.text);
}

Expr TextParser::local_ref() {
  Token name = next();
  if (Expr found = lookup(name.text)) return found;
  if (allow_free_vars_ && peek().is(TokenKind::Colon)) {
    // "%x: Type" where %x first appears declares a free variable of the expression.
    next();
    Var var = VarNode::make(name.text, type());
    scopes_.front()[name.text] = var;
    return var;
  }
  fail(name, "unknown variable %" + name_text(name.text));
}

Expr TextParser::if_expr() {
  next();
  expect(TokenKind::LParen, "'(' after 'if'");
  Expr cond = expr();
  expect(TokenKind::RParen, "')' after the condition");
  Expr then_branch = braced_body();
  expect_ident("else");
  Expr else_branch = braced_body();
  return IfNode::make(cond, then_branch, else_branch);
}

// "while (%v: Type = init, ...) { cond } do { body }": the vars are visible in cond and body.
Expr TextParser::while_expr() {
  DepthGuard guard(*this, peek());
  next();
  expect(TokenKind::LParen, "'(' after 'while'");
  std::vector<Var> vars;
  std::vector<Expr> init;
  std::vector<std::pair<std::string, Var>> bound;
  while (!peek().is(TokenKind::RParen)) {
    Token name = expect(TokenKind::Local, "a loop variable (%name: Type = value)");
    Type annotation;
    if (accept(TokenKind::Colon)) annotation = type();
    expect(TokenKind::Equal, "'=' and the loop variable's initial value");
    init.push_back(expr());  // read before the vars are bound: init sees the enclosing scope
    vars.push_back(VarNode::make(name.text, annotation));
    bound.emplace_back(name.text, vars.back());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "',' or ')' after a loop variable");
  push_scope();
  for (const auto& [name, var] : bound) bind(name, var);
  Expr cond = braced_body();
  expect_ident("do");
  Expr body = braced_body();
  pop_scope();
  return WhileNode::make(std::move(vars), std::move(init), cond, body);
}

// "()" is the empty tuple, "(x)" is x, "(x,)" and "(x, y)" are tuples.
Expr TextParser::paren_or_tuple() {
  next();
  if (accept(TokenKind::RParen)) return TupleNode::make({});
  std::vector<Expr> fields{expr()};
  if (accept(TokenKind::RParen)) return fields[0];
  expect(TokenKind::Comma, "',' or ')'");
  while (!peek().is(TokenKind::RParen)) {
    fields.push_back(expr());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "',' or ')' in a tuple");
  return TupleNode::make(std::move(fields));
}

// The argument list of call_tir / call_dps_packed: "(a)" is a tuple of one here.
Expr TextParser::argument_tuple() {
  expect(TokenKind::LParen);
  std::vector<Expr> fields;
  while (!peek().is(TokenKind::RParen)) {
    fields.push_back(expr());
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "',' or ')' in the argument tuple");
  return TupleNode::make(std::move(fields));
}

// "callee(args, key=value, out=Type)".
Expr TextParser::call(Expr callee) {
  next();
  const OpNode* op = as<OpNode>(callee);
  Ref<AttrsNode> attrs;
  if (op && op->def->default_attrs) attrs = op->def->default_attrs->make_default();
  std::vector<Expr> args;
  std::vector<Type> type_args;
  bool keywords = false;
  while (!peek().is(TokenKind::RParen)) {
    if (peek().is(TokenKind::Ident) && peek(1).is(TokenKind::Equal)) {
      keywords = true;
      Token key = next();
      next();
      if (key.text == "out") {
        type_args.push_back(type());
      } else {
        if (!op) fail(key, "only operator calls take attributes, got '" + key.text + "'");
        Token value_token = peek();
        AttrValue value = attr_literal();
        set_op_attr(*op->def, attrs.get(), key, value, value_token);
      }
    } else {
      if (keywords)
        fail_expected(peek(), "a keyword argument (name=value) after keyword arguments");
      if (op && is_destination_passing_op(op->name) && args.size() == 1 &&
          peek().is(TokenKind::LParen)) {
        args.push_back(argument_tuple());
      } else {
        args.push_back(expr());
      }
    }
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "',' or ')' in the argument list");
  return CallNode::make(callee, std::move(args), Attrs(attrs), std::move(type_args));
}

void TextParser::set_op_attr(const OpDef& def, AttrsNode* attrs, const Token& key,
                             const AttrValue& value, const Token& value_token) {
  if (!attrs) fail(key, "operator " + def.name + " takes no attributes, got '" + key.text + "'");
  bool known = false;
  std::string names;
  for (const AttrField& field : attrs->fields()) {
    known |= key.text == field.name;
    names += (names.empty() ? "" : ", ") + std::string(field.name);
  }
  if (!known)
    fail(key,
         "operator " + def.name + " has no attribute '" + key.text + "' (it has: " + names + ")");
  try {
    attrs->set_field(key.text, value);
  } catch (const Error& e) {
    fail(value_token, "operator " + def.name + ": " + e.what());
  }
}

// ---------------------------------------------------------------- literals

AttrValue TextParser::attr_literal() {
  DepthGuard guard(*this, peek());
  bool negative = accept(TokenKind::Minus);
  const Token& t = peek();
  if (t.is(TokenKind::Int) && t.suffix.find('f') == std::string::npos) {
    return integer(next(), negative);
  }
  if (t.is(TokenKind::Float) || is_special_float(t)) {
    Token number = next();
    std::string text =
        (negative ? "-" : "") + (is_special_float(number) ? number.text.substr(0, 3) : number.text);
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (end != text.data() + text.size() || ec != std::errc())
      fail(number, "number " + text + " is out of range for a float attribute");
    return v;
  }
  if (negative) fail_expected(t, "a number after '-'");
  if (t.is_ident("True") || t.is_ident("False")) return next().text == "True";
  if (t.is_ident("None")) {
    next();
    return std::monostate();
  }
  if (t.is(TokenKind::String)) return next().text;
  if (!t.is(TokenKind::LBracket))
    fail_expected(t, "an attribute value (number, string, True, False, None or [...])");
  next();
  std::vector<AttrValue> items;
  bool strings = false, numbers = false;
  while (!peek().is(TokenKind::RBracket)) {
    Token at = peek();
    items.push_back(attr_literal());
    const AttrValue& item = items.back();
    bool is_string = std::holds_alternative<std::string>(item);
    bool is_number = std::holds_alternative<int64_t>(item) || std::holds_alternative<double>(item);
    if (!is_string && !is_number) fail_expected(at, "a number or a string in a list");
    strings |= is_string;
    numbers |= is_number;
    if (strings && numbers) fail(at, "a list holds numbers or strings, not both");
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBracket, "',' or ']' in a list");
  if (strings) {
    std::vector<std::string> out;
    for (const AttrValue& item : items) out.push_back(std::get<std::string>(item));
    return out;
  }
  bool all_ints = true;
  for (const AttrValue& item : items) all_ints &= std::holds_alternative<int64_t>(item);
  if (all_ints) {
    std::vector<int64_t> out;
    for (const AttrValue& item : items) out.push_back(std::get<int64_t>(item));
    return out;
  }
  std::vector<double> out;
  for (const AttrValue& item : items)
    out.push_back(std::holds_alternative<int64_t>(item) ? double(std::get<int64_t>(item))
                                                        : std::get<double>(item));
  return out;
}

// "1f", "-2", "3i64", "0.5f64", "True".
Expr TextParser::scalar_literal() {
  if (peek().is_ident("True") || peek().is_ident("False")) {
    Tensor t = Tensor::empty({}, DataType::boolean());
    t.set_from_double(0, next().text == "True" ? 1 : 0);
    return ConstantNode::make(t);
  }
  bool negative = accept(TokenKind::Minus);
  if (!is_number(peek())) fail_expected(peek(), negative ? "a number after '-'" : "an expression");
  Token number = next();
  std::optional<DataType> dtype = dtype_of_suffix(number.suffix, number.is(TokenKind::Float));
  ANVIL_ICHECK(dtype, "the lexer accepted suffix ", number.suffix);
  Tensor t = Tensor::empty({}, *dtype);
  if (!store_element(t, 0, (negative ? "-" : "") + number.text))
    fail(number, str_cat("number ", negative ? "-" : "", number.text, number.suffix,
                         " does not fit ", dtype->to_string()));
  return ConstantNode::make(t);
}

// "const([1, 2, 3, 4], shape=(2, 2), dtype=int64)".
Expr TextParser::const_literal() {
  Token keyword = next();
  expect(TokenKind::LParen);
  expect(TokenKind::LBracket, "'[' to start the elements");
  std::vector<std::pair<Token, std::string>> elements;
  while (!peek().is(TokenKind::RBracket)) {
    bool negative = accept(TokenKind::Minus);
    Token e = next();
    bool is_bool = e.is_ident("True") || e.is_ident("False");
    if (!is_number(e) && !is_special_float(e) && !(is_bool && !negative))
      fail_expected(e, "a number, inf, nan, True or False");
    if (!e.suffix.empty()) fail(e, "elements of const(...) take no suffix; dtype= gives the type");
    elements.emplace_back(e, (negative ? "-" : "") + e.text);
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RBracket, "',' or ']' in the elements");
  expect(TokenKind::Comma, "', shape=(...)'");
  expect_ident("shape");
  expect(TokenKind::Equal);
  expect(TokenKind::LParen, "'(' to start the shape");
  std::vector<int64_t> shape;
  while (!peek().is(TokenKind::RParen)) {
    Token d = expect(TokenKind::Int, "a dimension");
    shape.push_back(integer(d, false));
    if (!accept(TokenKind::Comma)) break;
  }
  expect(TokenKind::RParen, "',' or ')' in the shape");
  expect(TokenKind::Comma, "', dtype=...'");
  expect_ident("dtype");
  expect(TokenKind::Equal);
  DataType dt = dtype();
  expect(TokenKind::RParen, "')' to end const(...)");
  // The element count, saturated: only counts up to kMaxInlineElements can match.
  int64_t count = 1;
  std::string shape_text;
  for (int64_t d : shape) {
    count = d > kMaxInlineElements ? kMaxInlineElements + 1
                                   : std::min(count * d, kMaxInlineElements + 1);
    shape_text += (shape_text.empty() ? "" : ", ") + std::to_string(d);
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) count = 0;
  // A zero-size tensor may have large dims, but their product must stay countable.
  int64_t nonzero_product = 1;
  for (int64_t d : shape)
    if (d != 0 && __builtin_mul_overflow(nonzero_product, d, &nonzero_product))
      fail(keyword, "const(...) shape (" + shape_text + ") is too large");
  if (count != int64_t(elements.size()))
    fail(keyword, str_cat("const(...) has ", elements.size(), " elements but shape (", shape_text,
                          ") needs ", count > kMaxInlineElements ? "more" : std::to_string(count)));
  if (dt.lanes != 1) fail(keyword, "const(...) takes a scalar dtype, got " + dt.to_string());
  Tensor t = Tensor::empty(shape, dt);
  for (size_t i = 0; i < elements.size(); ++i) {
    const auto& [token, text] = elements[i];
    bool ok;
    if (dt.is_bool()) {
      ok = token.is_ident("True") || token.is_ident("False");
      if (ok) t.set_from_double(int64_t(i), token.text == "True");
    } else {
      ok = !token.is(TokenKind::Ident) || (dt.is_float() || dt.is_bfloat());
      ok = ok && !token.is_ident("True") && !token.is_ident("False");
      ok = ok && store_element(t, int64_t(i), text);
    }
    if (!ok) fail(token, "element " + text + " does not fit " + dt.to_string());
  }
  return ConstantNode::make(t);
}

// "meta[relay.Constant][i]": constant i of the metadata section.
Expr TextParser::meta_ref() {
  Token keyword = next();
  expect(TokenKind::LBracket);
  Token kind = expect(TokenKind::Ident, "'relay.Constant'");
  if (kind.text != "relay.Constant" && kind.text != "Constant")
    fail_expected(kind, "'relay.Constant'");
  expect(TokenKind::RBracket);
  expect(TokenKind::LBracket);
  Token index_token = expect(TokenKind::Int, "a constant index");
  int64_t index = integer(index_token, false);
  expect(TokenKind::RBracket);
  std::string what = "meta[relay.Constant][" + index_token.text + "]";
  if (metadata_marker_ >= lex_.text().size())
    fail(keyword, what + " refers to the #[metadata] section, which this text does not have");
  if (!metadata_) load_metadata(metadata_marker_);
  if (index < 0 || size_t(index) >= metadata_->size())
    fail(index_token, str_cat(what, " is out of range: the #[metadata] section holds ",
                              metadata_->size(), " constants"));
  return (*metadata_)[size_t(index)];
}

}  // namespace anvil::ir::text
