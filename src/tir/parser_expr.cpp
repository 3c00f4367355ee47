// Expressions of the tensor IR text: Python operators with Python precedence,
// literals (plain numbers adapt to the other operand's type), buffer loads,
// and the T.* functions. Types are checked here, before any node is built.
#include <charconv>
#include <limits>

#include "anvil/support/error.h"
#include "anvil/tir/intrinsics.h"
#include "anvil/tir/structural_equal.h"
#include "tir/text_parser.h"
#include "tir/text_printer.h"

namespace anvil::tir::text {

namespace {

constexpr uint64_t kMaxInt64 = uint64_t(std::numeric_limits<int64_t>::max());

bool is_integer(DataType t) { return t.is_int() || t.is_uint(); }
bool is_floating(DataType t) { return t.is_float() || t.is_bfloat(); }

Term expr_term(PrimExpr e, const Token& at, bool untyped = false) {
  Term t;
  t.expr = std::move(e);
  t.at = at;
  t.untyped = untyped;
  return t;
}

// Whether value fits dtype (integer kinds, scalar).
bool fits(DataType dtype, uint64_t magnitude, bool negative) {
  if (dtype.is_bool()) return !negative && magnitude <= 1;
  if (dtype.is_uint())
    return !negative && (dtype.bits >= 64 || magnitude < (uint64_t(1) << dtype.bits));
  uint64_t limit = dtype.bits >= 64 ? kMaxInt64 : (uint64_t(1) << (dtype.bits - 1)) - 1;
  return magnitude <= limit + (negative ? 1 : 0);
}

int64_t signed_value(uint64_t magnitude, bool negative) {
  return negative ? int64_t(0 - magnitude) : int64_t(magnitude);
}

}  // namespace

// ---------------------------------------------------------------- helpers

std::optional<DataType> TirParser::dtype_named(std::string_view name) const {
  if (name == "handle") return DataType::handle();
  if (name.empty() ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789") != std::string_view::npos)
    return std::nullopt;
  try {
    return DataType::parse(name);
  } catch (const Error&) {
    return std::nullopt;
  }
}

DataType TirParser::parse_dtype(const Term& t, const char* what) {
  std::string name = need_string(t, what);
  std::optional<DataType> dtype = dtype_named(name);
  if (!dtype) fail(t.at, "unknown data type '" + name + "'");
  return *dtype;
}

PrimExpr TirParser::need_expr(const Term& t, const char* what) {
  switch (t.kind) {
    case Term::Kind::Expr:
      return t.expr;
    case Term::Kind::Buffer:
      fail(t.at, str_cat("expected ", what, ", got buffer '", t.buffer->name,
                         "' (index it, or use ", t.buffer->name, ".data)"));
    default:
      fail(t.at, str_cat("expected ", what));
  }
}

PrimExpr TirParser::need_index(const Term& t, const char* what, DataType want) {
  PrimExpr e = need_expr(t, what);
  if (t.untyped) e = adapt(t, want, t.at, what);
  if (!is_integer(e.dtype()) || e.dtype().lanes != 1)
    fail(t.at, str_cat(what, " must be a scalar integer, got ", e.dtype().to_string()));
  return e;
}

std::vector<PrimExpr> TirParser::need_shape(const Term& t, const char* what) {
  if (t.kind != Term::Kind::Tuple && t.kind != Term::Kind::List)
    fail(t.at, str_cat(what, " must be a tuple such as (1, n)"));
  std::vector<PrimExpr> dims;
  for (const Term& item : t.items) dims.push_back(need_index(item, what));
  return dims;
}

std::string TirParser::need_string(const Term& t, const char* what) {
  const auto* s = t.kind == Term::Kind::Expr ? as<StringImmNode>(t.expr) : nullptr;
  if (!s) fail(t.at, str_cat(what, " must be a string"));
  return s->value;
}

int64_t TirParser::need_int(const Term& t, const char* what) {
  const auto* imm = t.kind == Term::Kind::Expr ? as<IntImmNode>(t.expr) : nullptr;
  if (!imm || t.expr.dtype().is_bool()) fail(t.at, str_cat(what, " must be an integer constant"));
  return imm->value;
}

bool TirParser::need_bool(const Term& t, const char* what) {
  const auto* imm = t.kind == Term::Kind::Expr ? as<IntImmNode>(t.expr) : nullptr;
  if (!imm || !t.expr.dtype().is_bool()) fail(t.at, str_cat(what, " must be True or False"));
  return imm->value != 0;
}

ir::AttrValue TirParser::need_attr(const Term& t) {
  switch (t.kind) {
    case Term::Kind::None:
      return std::monostate{};
    case Term::Kind::DType:
      return t.dtype;
    case Term::Kind::List:
    case Term::Kind::Tuple: {
      std::vector<ir::AttrValue> items;
      bool all_int = true, all_number = true, all_string = true;
      for (const Term& item : t.items) {
        items.push_back(need_attr(item));
        bool is_int = std::holds_alternative<int64_t>(items.back());
        bool is_double = std::holds_alternative<double>(items.back());
        all_int = all_int && is_int;
        all_number = all_number && (is_int || is_double);
        all_string = all_string && std::holds_alternative<std::string>(items.back());
      }
      if (all_int) {
        std::vector<int64_t> out;
        for (const auto& v : items) out.push_back(std::get<int64_t>(v));
        return out;
      }
      if (all_number) {
        std::vector<double> out;
        for (const auto& v : items)
          out.push_back(std::holds_alternative<double>(v) ? std::get<double>(v)
                                                          : double(std::get<int64_t>(v)));
        return out;
      }
      if (all_string) {
        std::vector<std::string> out;
        for (const auto& v : items) out.push_back(std::get<std::string>(v));
        return out;
      }
      fail(t.at, "a list attribute holds integers, numbers or strings");
    }
    case Term::Kind::Expr:
      if (const auto* imm = as<IntImmNode>(t.expr))
        return t.expr.dtype().is_bool() ? ir::AttrValue(imm->value != 0)
                                        : ir::AttrValue(imm->value);
      if (const auto* imm = as<FloatImmNode>(t.expr)) return imm->value;
      if (const auto* s = as<StringImmNode>(t.expr)) return s->value;
      [[fallthrough]];
    default:
      fail(t.at, "an attribute value is a number, string, True/False, None, list or T.dtype(...)");
  }
}

Annotations TirParser::need_annotations(const Term& t) {
  if (t.kind != Term::Kind::Dict) fail(t.at, "annotations are a dict {\"key\": value}");
  Annotations out;
  for (size_t i = 0; i < t.keys.size(); ++i) {
    const Term& v = t.items[i];
    if (const auto* imm = v.kind == Term::Kind::Expr ? as<IntImmNode>(v.expr) : nullptr)
      out[t.keys[i]] = imm->value;
    else if (const auto* s = v.kind == Term::Kind::Expr ? as<StringImmNode>(v.expr) : nullptr)
      out[t.keys[i]] = s->value;
    else
      fail(v.at, "an annotation value is an integer or a string");
  }
  return out;
}

void TirParser::check_arity(const CallArgs& args, size_t min, size_t max, const std::string& name) {
  size_t n = args.positional.size();
  if (n >= min && n <= max) return;
  std::string expected = min == max ? std::to_string(min) : str_cat(min, " to ", max);
  fail(args.at, str_cat(name, " takes ", expected, " arguments, got ", n));
}

void TirParser::no_keywords(const CallArgs& args, const std::string& name) {
  if (!args.keywords.empty())
    fail(args.keywords[0].second.at,
         "unknown argument '" + args.keywords[0].first + "' of " + name);
}

PrimExpr TirParser::adapt(const Term& t, DataType target, const Token& at,
                          const std::string& what) {
  PrimExpr e = need_expr(t, what.c_str());
  if (e.dtype() == target) return e;
  if (!t.untyped)
    fail(at, str_cat(what, " has type ", e.dtype().to_string(), " but ", target.to_string(),
                     " is expected"));
  DataType element = target.element_of();
  PrimExpr scalar;
  if (const auto* imm = as<IntImmNode>(e)) {
    if (is_integer(element) || element.is_bool()) {
      bool negative = imm->value < 0;
      uint64_t magnitude = negative ? 0 - uint64_t(imm->value) : uint64_t(imm->value);
      if (!fits(element, magnitude, negative))
        fail(at, str_cat("the literal ", imm->value, " does not fit ", element.to_string()));
      scalar = IntImmNode::make(element, imm->value);
    } else if (is_floating(element)) {
      scalar = FloatImmNode::make(element, double(imm->value));
    }
  } else if (const auto* imm = as<FloatImmNode>(e)) {
    if (is_floating(element)) scalar = FloatImmNode::make(element, imm->value);
  }
  if (!scalar)
    fail(at, str_cat(what, " is a ", e.dtype().to_string(), " literal but ", target.to_string(),
                     " is expected"));
  return target.lanes > 1 ? PrimExpr(BroadcastNode::make(scalar, target.lanes)) : scalar;
}

void TirParser::unify(Term& a, Term& b, const Token& at, const std::string& what) {
  PrimExpr x = need_expr(a, ("an operand of " + what).c_str());
  PrimExpr y = need_expr(b, ("an operand of " + what).c_str());
  if (x.dtype() == y.dtype()) return;
  if (a.untyped && b.untyped) {
    // An integer literal meets a float literal: both are floats.
    Term& integer = is_integer(x.dtype()) ? a : b;
    Term& other = is_integer(x.dtype()) ? b : a;
    integer.expr = adapt(integer, other.expr.dtype(), at, what);
  } else if (a.untyped) {
    a.expr = adapt(a, y.dtype(), at, "an operand of " + what);
  } else if (b.untyped) {
    b.expr = adapt(b, x.dtype(), at, "an operand of " + what);
  } else {
    fail(at, str_cat("operands of ", what, " have different types ", x.dtype().to_string(), " and ",
                     y.dtype().to_string()));
  }
  a.untyped = b.untyped = false;
}

// ---------------------------------------------------------------- operators

Term TirParser::binary(const Token& op, const std::string& spelling, Term a, Term b) {
  std::string what = "'" + spelling + "'";
  PrimExpr x = need_expr(a, ("an operand of " + what).c_str());
  PrimExpr y = need_expr(b, ("an operand of " + what).c_str());
  if (spelling == "and" || spelling == "or") {
    if (!x.dtype().is_bool() || !y.dtype().is_bool() || x.dtype() != y.dtype())
      fail(op, str_cat("operands of ", what, " must be bools of one width, got ",
                       x.dtype().to_string(), " and ", y.dtype().to_string()));
    return expr_term(
        spelling == "and" ? PrimExpr(AndNode::make(x, y)) : PrimExpr(OrNode::make(x, y)), a.at);
  }
  unify(a, b, op, what);
  x = a.expr;
  y = b.expr;
  if (x.dtype().is_handle()) fail(op, what + " does not apply to handles or strings");
  PrimExpr e;
  if (spelling == "+")
    e = AddNode::make(x, y);
  else if (spelling == "-")
    e = SubNode::make(x, y);
  else if (spelling == "*")
    e = MulNode::make(x, y);
  else if (spelling == "/" || spelling == "T.truncdiv")
    e = DivNode::make(x, y);
  else if (spelling == "T.truncmod")
    e = ModNode::make(x, y);
  else if (spelling == "//" || spelling == "T.floordiv")
    e = FloorDivNode::make(x, y);
  else if (spelling == "%" || spelling == "T.floormod")
    e = FloorModNode::make(x, y);
  else if (spelling == "T.min")
    e = MinNode::make(x, y);
  else if (spelling == "T.max")
    e = MaxNode::make(x, y);
  else if (spelling == "==")
    e = EQNode::make(x, y);
  else if (spelling == "!=")
    e = NENode::make(x, y);
  else if (spelling == "<")
    e = LTNode::make(x, y);
  else if (spelling == "<=")
    e = LENode::make(x, y);
  else if (spelling == ">")
    e = GTNode::make(x, y);
  else if (spelling == ">=")
    e = GENode::make(x, y);
  else
    fail(op, "unknown operator " + what);
  return expr_term(e, a.at);
}

Term TirParser::expr() {
  Token at = lex_.peek();
  enter(at);
  Term t = or_expr();
  leave();
  return t;
}

Term TirParser::or_expr() {
  Term left = and_expr();
  int chain = 0;
  while (lex_.peek().is_ident("or")) {
    Token op = lex_.next();
    enter(op);
    ++chain;
    left = binary(op, "or", left, and_expr());
  }
  leave(chain);
  return left;
}

Term TirParser::and_expr() {
  Term left = not_expr();
  int chain = 0;
  while (lex_.peek().is_ident("and")) {
    Token op = lex_.next();
    enter(op);
    ++chain;
    left = binary(op, "and", left, not_expr());
  }
  leave(chain);
  return left;
}

Term TirParser::not_expr() {
  if (!lex_.peek().is_ident("not")) return comparison();
  Token op = lex_.next();
  enter(op);
  Term operand = not_expr();
  leave();
  PrimExpr a = need_expr(operand, "the operand of 'not'");
  if (!a.dtype().is_bool())
    fail(op, "the operand of 'not' must be a bool, got " + a.dtype().to_string());
  return expr_term(NotNode::make(a), op);
}

Term TirParser::comparison() {
  static const char* kOps[] = {"==", "!=", "<", "<=", ">", ">="};
  auto compare_op = [&]() -> const char* {
    for (const char* op : kOps)
      if (lex_.peek().is_op(op)) return op;
    return nullptr;
  };
  Term left = arith();
  const char* op = compare_op();
  if (!op) return left;
  Token at = lex_.next();
  Term result = binary(at, op, left, arith());
  if (compare_op())
    fail(lex_.peek(), "chained comparisons are not supported; join them with 'and'");
  return result;
}

Term TirParser::arith() {
  Term left = term();
  int chain = 0;
  while (lex_.peek().is_op("+") || lex_.peek().is_op("-")) {
    Token op = lex_.next();
    enter(op);
    ++chain;
    left = binary(op, op.text, left, term());
  }
  leave(chain);
  return left;
}

Term TirParser::term() {
  Term left = unary();
  int chain = 0;
  while (lex_.peek().is_op("*") || lex_.peek().is_op("/") || lex_.peek().is_op("//") ||
         lex_.peek().is_op("%")) {
    Token op = lex_.next();
    enter(op);
    ++chain;
    left = binary(op, op.text, left, unary());
  }
  leave(chain);
  return left;
}

Term TirParser::unary() {
  if (!lex_.peek().is_op("-")) return postfix();
  Token op = lex_.next();
  if (lex_.peek().is(TokenKind::Int)) return int_literal(lex_.next(), true);
  if (lex_.peek().is(TokenKind::Float)) return float_literal(lex_.next(), true);
  enter(op);
  Term operand = unary();
  leave();
  PrimExpr a = need_expr(operand, "the operand of '-'");
  DataType t = a.dtype();
  if (!is_integer(t.element_of()) && !is_floating(t.element_of()))
    fail(op, "'-' does not apply to " + t.to_string());
  return expr_term(SubNode::make(make_int(0, t), a), op);
}

Term TirParser::postfix() {
  Term t = atom();
  while (true) {
    if (lex_.peek().is_op("[")) {
      Token at = lex_.peek();
      if (t.kind != Term::Kind::Buffer) fail(at, "only a buffer can be indexed");
      Term loaded = expr_term(load(t, at), t.at);
      t = loaded;
    } else if (lex_.peek().is_op(".") && t.kind == Term::Kind::Buffer) {
      lex_.next();
      Token field = lex_.next();
      if (!field.is_ident("data")) fail(field, "a buffer has one field here: .data");
      t = expr_term(t.buffer->data, t.at);
    } else {
      return t;
    }
  }
}

std::vector<std::pair<Term, std::optional<Term>>> TirParser::subscripts(bool allow_slices) {
  expect_op("[");
  std::vector<std::pair<Term, std::optional<Term>>> out;
  if (lex_.peek().is_op("(") && lex_.peek(1).is_op(")") && lex_.peek(2).is_op("]")) {
    lex_.next();
    lex_.next();
    lex_.next();
    return out;
  }
  while (true) {
    Term start = expr();
    std::optional<Term> stop;
    if (allow_slices && accept_op(":")) stop = expr();
    out.emplace_back(std::move(start), std::move(stop));
    if (!accept_op(",")) break;
  }
  expect_op("]", "']'");
  return out;
}

PrimExpr TirParser::load(const Term& buffer_term, const Token& at) {
  const Buffer& buffer = buffer_term.buffer;
  std::vector<PrimExpr> indices;
  int lanes = 1;
  for (auto& [start, stop] : subscripts(false)) {
    PrimExpr index = need_expr(start, "an index");
    if (start.untyped) index = adapt(start, kIndexType, start.at, "an index");
    if (!is_integer(index.dtype().element_of()))
      fail(start.at,
           "an index of buffer '" + buffer->name + "' has type " + index.dtype().to_string());
    int index_lanes = index.dtype().lanes;
    if (index_lanes > 1) {
      if (lanes > 1 && lanes != index_lanes)
        fail(start.at, "vector indices of buffer '" + buffer->name + "' differ in lanes");
      lanes = index_lanes;
    }
    indices.push_back(index);
  }
  if (indices.size() != buffer->shape.size())
    fail(at, str_cat("buffer '", buffer->name, "' has ", buffer->shape.size(),
                     " dimensions but is indexed with ", indices.size()));
  if (int64_t(buffer->dtype.lanes) * lanes > 65535)
    fail(at, "a load of buffer '" + buffer->name + "' has too many lanes");
  return BufferLoadNode::make(buffer, indices);
}

// ---------------------------------------------------------------- atoms

Term TirParser::int_literal(const Token& tok, bool negative) {
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), magnitude);
  if (ec != std::errc() || ptr != tok.text.data() + tok.text.size() ||
      magnitude > kMaxInt64 + (negative ? 1 : 0))
    fail(tok, "integer literal " + tok.text + " is out of the range of int64");
  return expr_term(IntImmNode::make(kIndexType, signed_value(magnitude, negative)), tok, true);
}

Term TirParser::float_literal(const Token& tok, bool negative) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(tok.text.data(), tok.text.data() + tok.text.size(), value);
  if (ec != std::errc() || ptr != tok.text.data() + tok.text.size())
    fail(tok, "float literal " + tok.text + " is out of range");
  return expr_term(FloatImmNode::make(DataType::float32(), negative ? -value : value), tok, true);
}

Term TirParser::atom() {
  const Token& t = lex_.peek();
  switch (t.kind) {
    case TokenKind::Int:
      return int_literal(lex_.next(), false);
    case TokenKind::Float:
      return float_literal(lex_.next(), false);
    case TokenKind::String: {
      Token s = lex_.next();
      return expr_term(StringImmNode::make(s.text), s);
    }
    case TokenKind::Ident: {
      Token name = lex_.next();
      if (name.text == "True" || name.text == "False")
        return expr_term(IntImmNode::make(DataType::boolean(), name.text == "True"), name);
      if (name.text == "None") {
        Term none;
        none.kind = Term::Kind::None;
        none.at = name;
        return none;
      }
      if (name.text == "T") return t_call(name);
      if (is_reserved_name(name.text))
        fail(name, "expected an expression, got '" + name.text + "'");
      const Symbol* symbol = lookup(name.text);
      if (!symbol) fail(name, "undefined name '" + name.text + "'");
      if (symbol->var) return expr_term(symbol->var, name);
      Term buffer;
      buffer.kind = Term::Kind::Buffer;
      buffer.buffer = symbol->buffer;
      buffer.at = name;
      return buffer;
    }
    case TokenKind::Op:
      if (t.text == "(" || t.text == "[" || t.text == "{") {
        Token open = lex_.next();
        std::string close = open.text == "(" ? ")" : open.text == "[" ? "]" : "}";
        Term group;
        group.kind = open.text == "("   ? Term::Kind::Tuple
                     : open.text == "[" ? Term::Kind::List
                                        : Term::Kind::Dict;
        group.at = open;
        enter(open);
        bool trailing_comma = false;
        while (!lex_.peek().is_op(close)) {
          if (group.kind == Term::Kind::Dict) {
            if (!lex_.peek().is(TokenKind::String)) fail_expected("a string key");
            group.keys.push_back(lex_.next().text);
            expect_op(":");
          }
          group.items.push_back(expr());
          trailing_comma = accept_op(",");
          if (!trailing_comma) break;
        }
        expect_op(close, close == ")" ? "')'" : close == "]" ? "']'" : "'}'");
        leave();
        // (x) groups; (x,) and () are tuples.
        if (group.kind == Term::Kind::Tuple && group.items.size() == 1 && !trailing_comma)
          return group.items[0];
        return group;
      }
      [[fallthrough]];
    default:
      fail_expected("an expression");
  }
}

CallArgs TirParser::call_args(const Token& at) {
  CallArgs args;
  args.at = at;
  Token open = expect_op("(", "'('");
  enter(open);
  while (!lex_.peek().is_op(")")) {
    if (lex_.peek().is(TokenKind::Ident) && lex_.peek(1).is_op("=")) {
      std::string key = lex_.next().text;
      lex_.next();
      args.keywords.emplace_back(key, expr());
    } else {
      if (!args.keywords.empty()) fail(lex_.peek(), "positional argument after keyword arguments");
      args.positional.push_back(expr());
    }
    if (!accept_op(",")) break;
  }
  expect_op(")", "')'");
  leave();
  return args;
}

}  // namespace anvil::tir::text
