// The graph IR parser: types and dimension expressions. Dims are rebuilt with
// Dim arithmetic, so "2 * n + 1" and "n + n + 1" parse to the same canonical dim.
#include <algorithm>
#include <charconv>
#include <functional>

#include "ir/text_parser.h"
#include "ir/text_util.h"

namespace anvil::ir::text {

int64_t TextParser::integer(const Token& token, bool negative) {
  std::string text = (negative ? "-" : "") + token.text;
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    fail(token, "integer " + text + " is out of range");
  return value;
}

// "Tensor[(1, n), float32]", "float32", "(T1, T2)", "(T,)", "fn (T1) -> T2".
Type TextParser::type() {
  DepthGuard guard(*this, peek());
  const Token& t = peek();
  if (t.is_ident("Tensor") && peek(1).is(TokenKind::LBracket)) return tensor_type();
  if (t.is_ident("fn")) {
    next();
    expect(TokenKind::LParen, "'(' after 'fn'");
    std::vector<Type> params;
    while (!peek().is(TokenKind::RParen)) {
      params.push_back(type());
      if (!accept(TokenKind::Comma)) break;
    }
    expect(TokenKind::RParen, "',' or ')' in the parameter types");
    expect(TokenKind::Arrow, "'->' and the return type");
    Type ret = type();
    return FuncTypeNode::make(std::move(params), std::move(ret));
  }
  if (t.is(TokenKind::LParen)) {
    next();
    std::vector<Type> fields;
    bool trailing_comma = false;
    while (!peek().is(TokenKind::RParen)) {
      fields.push_back(type());
      trailing_comma = accept(TokenKind::Comma);
      if (!trailing_comma) break;
    }
    expect(TokenKind::RParen, "',' or ')' in a tuple type");
    // "(T)" is T in parentheses; a tuple of one is written "(T,)".
    if (fields.size() == 1 && !trailing_comma) return fields[0];
    return TupleTypeNode::make(std::move(fields));
  }
  if (!t.is(TokenKind::Ident)) fail_expected(t, "a type");
  return TensorTypeNode::make_scalar(dtype());
}

Type TextParser::tensor_type() {
  next();
  expect(TokenKind::LBracket);
  std::optional<std::vector<Dim>> shape;
  if (accept(TokenKind::Question)) {
    // Tensor[?, float32]: the rank is unknown.
  } else {
    expect(TokenKind::LParen, "'(' to start the shape, or '?'");
    shape.emplace();
    while (!peek().is(TokenKind::RParen)) {
      shape->push_back(dim_sum().dim);
      if (!accept(TokenKind::Comma)) break;
    }
    expect(TokenKind::RParen, "',' or ')' in the shape");
  }
  expect(TokenKind::Comma, "',' and the dtype");
  DataType dt = dtype();
  expect(TokenKind::RBracket, "']' to end the tensor type");
  return shape ? TensorTypeNode::make(std::move(*shape), dt)
               : TensorTypeNode::make_unknown_rank(dt);
}

DataType TextParser::dtype() {
  const Token& t = peek();
  if (!t.is(TokenKind::Ident)) fail_expected(t, "a data type (float32, int64, bool, ...)");
  try {
    DataType dt = DataType::parse(t.text);
    next();
    return dt;
  } catch (const Error&) {
    fail_expected(t, "a type or data type (float32, int64, bool, ...)");
  }
}

// Dim arithmetic works on int64 coefficients. Each parsed dim carries a bound
// on the sum of the magnitudes of its coefficients (sums add bounds, products
// multiply them), checked before each operation, so no text can make the
// canonicalization overflow.
TextParser::BoundedDim TextParser::checked(BoundedDim a, BoundedDim b, double bound,
                                           const Token& at,
                                           const std::function<Dim(const Dim&, const Dim&)>& op) {
  if (bound > kMaxDimMagnitude) fail(at, "dimension expression is too large");
  try {
    return {op(a.dim, b.dim), bound};
  } catch (const Error& e) {
    fail(at, e.what());
  }
}

// dim_sum := dim_product (('+' | '-') dim_product)*
TextParser::BoundedDim TextParser::dim_sum() {
  BoundedDim result = dim_product();
  while (peek().is(TokenKind::Plus) || peek().is(TokenKind::Minus)) {
    Token op = next();
    BoundedDim rhs = dim_product();
    result = checked(result, rhs, result.bound + rhs.bound, op, [&](const Dim& a, const Dim& b) {
      return op.is(TokenKind::Minus) ? a - b : a + b;
    });
  }
  return result;
}

// dim_product := dim_unary ('*' dim_unary)*
TextParser::BoundedDim TextParser::dim_product() {
  BoundedDim result = dim_unary();
  while (peek().is(TokenKind::Star)) {
    Token op = next();
    BoundedDim rhs = dim_unary();
    result = checked(result, rhs, result.bound * rhs.bound, op,
                     [](const Dim& a, const Dim& b) { return a * b; });
  }
  return result;
}

// dim_unary := '-' dim_unary | dim_atom
TextParser::BoundedDim TextParser::dim_unary() {
  DepthGuard guard(*this, peek());
  if (!peek().is(TokenKind::Minus)) return dim_atom();
  Token minus = next();
  BoundedDim inner = dim_unary();
  return checked({Dim(0), 0}, inner, inner.bound, minus,
                 [](const Dim& a, const Dim& b) { return a - b; });
}

// dim_atom := integer | '?' | name | f '(' dim ',' dim ')' | '(' dim ')'
TextParser::BoundedDim TextParser::dim_atom() {
  const Token& t = peek();
  if (t.is(TokenKind::Int)) {
    if (!t.suffix.empty()) fail_expected(t, "a dimension");
    Token number = next();
    int64_t value = integer(number, false);
    if (double(value) > kMaxDimMagnitude)
      fail(number, "dimension " + number.text + " is too large");
    return {Dim(value), double(value)};
  }
  if (accept(TokenKind::Question)) return {Dim::any(), 1};
  if (t.is(TokenKind::LParen)) {
    next();
    BoundedDim inner = dim_sum();
    expect(TokenKind::RParen, "')' in the dimension");
    return inner;
  }
  if (!t.is(TokenKind::Ident)) fail_expected(t, "a dimension (integer, size variable or '?')");
  Token name = next();
  if (!peek().is(TokenKind::LParen)) return {Dim::var(name.text), 1};
  static const char* const functions[] = {"floordiv", "floormod", "min", "max", "broadcast"};
  if (std::find(std::begin(functions), std::end(functions), name.text) == std::end(functions))
    fail_expected(name, "floordiv, floormod, min, max or broadcast before '('");
  next();
  BoundedDim a = dim_sum();
  expect(TokenKind::Comma, "',' between the two operands");
  BoundedDim b = dim_sum();
  expect(TokenKind::RParen, "')' after the two operands");
  return checked(a, b, a.bound + b.bound, name, [&](const Dim& x, const Dim& y) {
    if (name.text == "floordiv") return floordiv(x, y);
    if (name.text == "floormod") return floormod(x, y);
    if (name.text == "broadcast") return broadcast(x, y);
    return name.text == "min" ? min(x, y) : max(x, y);
  });
}

}  // namespace anvil::ir::text
