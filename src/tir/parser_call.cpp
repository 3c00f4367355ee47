// The T.* functions of expressions: typed immediates and casts (T.float32(0)),
// T.Cast, T.Select, T.Ramp, T.Broadcast, T.Let, T.min/T.max and the integer
// divisions, intrinsic calls (T.exp(x), T.call_intrin, T.reinterpret) and
// T.call_extern.
#include <charconv>
#include <cmath>
#include <limits>

#include "anvil/support/error.h"
#include "anvil/tir/intrinsics.h"
#include "tir/text_parser.h"
#include "tir/text_printer.h"

namespace anvil::tir::text {

namespace {

bool is_integer(DataType t) { return t.is_int() || t.is_uint(); }
bool is_floating(DataType t) { return t.is_float() || t.is_bfloat(); }

Term typed(PrimExpr e, const Token& at) {
  Term t;
  t.expr = std::move(e);
  t.at = at;
  return t;
}

}  // namespace

int TirParser::need_lanes(const Term& t) {
  int64_t lanes = need_int(t, "the number of lanes");
  if (lanes < 2 || lanes > 65535) fail(t.at, "the number of lanes must be in [2, 65535]");
  return int(lanes);
}

Term TirParser::t_call(const Token& at) {
  if (!lex_.peek().is_op(".")) fail(at, "'T' is the namespace of the language; write T.<name>");
  lex_.next();
  const Token& peeked = lex_.peek();
  if (!peeked.is(TokenKind::Ident)) fail_expected("a name after 'T.'");
  Token name = lex_.next();
  const std::string& fn = name.text;
  if (fn == "axis")
    fail(name, "T.axis.* declares a block iteration variable: write 'vi = T.axis.spatial(...)'");
  if (fn == "Let") return t_let(name);
  if (std::optional<DataType> dtype = dtype_named(fn)) return typed_literal(name, *dtype);
  if (fn == "reduce")
    fail(name, "T.reduce is a TE reduction; it is printed for reading but cannot be parsed");
  CallArgs args = call_args(name);
  std::vector<Term>& ps = args.positional;
  std::string qualified = "T." + fn;
  if (fn == "dtype") {
    check_arity(args, 1, 1, qualified);
    Term t;
    t.kind = Term::Kind::DType;
    t.dtype = parse_dtype(ps[0], "the argument of T.dtype");
    t.at = name;
    return t;
  }
  if (fn != "call_intrin" && fn != "call_extern") no_keywords(args, qualified);
  if (fn == "Cast") {
    check_arity(args, 2, 2, qualified);
    DataType dtype = parse_dtype(ps[0], "the type of T.Cast");
    PrimExpr value = need_expr(ps[1], "the value of T.Cast");
    if (value.dtype().lanes != dtype.lanes)
      fail(name, "T.Cast changes the number of lanes: " + value.dtype().to_string() + " to " +
                     dtype.to_string());
    return typed(CastNode::make(dtype, value), name);
  }
  if (fn == "Select") {
    check_arity(args, 3, 3, qualified);
    PrimExpr cond = need_expr(ps[0], "the condition of T.Select");
    unify(ps[1], ps[2], name, qualified);
    PrimExpr t = ps[1].expr, f = ps[2].expr;
    if (!cond.dtype().is_bool() ||
        (cond.dtype().lanes != 1 && cond.dtype().lanes != t.dtype().lanes))
      fail(ps[0].at, "the condition of T.Select must be a bool (of the values' lanes), got " +
                         cond.dtype().to_string());
    return typed(SelectNode::make(cond, t, f), name);
  }
  if (fn == "Ramp") {
    check_arity(args, 3, 3, qualified);
    unify(ps[0], ps[1], name, qualified);
    PrimExpr base = ps[0].expr, stride = ps[1].expr;
    if (base.dtype().lanes != 1 || !(is_integer(base.dtype()) || is_floating(base.dtype())))
      fail(ps[0].at, "T.Ramp needs a scalar number base, got " + base.dtype().to_string());
    return typed(RampNode::make(base, stride, need_lanes(ps[2])), name);
  }
  if (fn == "Broadcast") {
    check_arity(args, 2, 2, qualified);
    PrimExpr value = need_expr(ps[0], "the value of T.Broadcast");
    if (value.dtype().lanes != 1) fail(ps[0].at, "T.Broadcast of a vector");
    return typed(BroadcastNode::make(value, need_lanes(ps[1])), name);
  }
  if (fn == "min" || fn == "max" || fn == "truncdiv" || fn == "truncmod" || fn == "floordiv" ||
      fn == "floormod") {
    check_arity(args, 2, 2, qualified);
    return binary(name, qualified, ps[0], ps[1]);
  }
  if (fn == "call_intrin" || fn == "call_extern" || fn == "reinterpret") {
    no_keywords(args, qualified);
    size_t fixed = fn == "reinterpret" ? 1 : 2;
    if (ps.size() < fixed)
      fail(name, str_cat(qualified, " takes at least ", fixed, " arguments, got ", ps.size()));
    DataType dtype = parse_dtype(ps[0], "the result type");
    std::string op = fn == "reinterpret" ? "reinterpret" : need_string(ps[1], "the function name");
    std::vector<PrimExpr> operands;
    for (size_t i = fixed; i < ps.size(); ++i) operands.push_back(need_expr(ps[i], "an argument"));
    if (fn == "call_extern")
      return typed(CallNode::make(dtype, op, operands, CallKind::Extern), name);
    const IntrinsicInfo* info = find_intrinsic(op);
    if (!info) fail(ps.size() > 1 ? ps[1].at : name, "unknown intrinsic '" + op + "'");
    if (info->num_args >= 0 && size_t(info->num_args) != operands.size())
      fail(name, str_cat("intrinsic '", op, "' takes ", info->num_args, " arguments, got ",
                         operands.size()));
    return typed(CallNode::make(dtype, op, operands, CallKind::Intrinsic), name);
  }
  if (find_intrinsic(fn) && fn.find('.') == std::string::npos)
    return intrinsic_call(name, fn, args);
  fail(name, "unknown function T." + fn);
}

Term TirParser::intrinsic_call(const Token& at, const std::string& name, CallArgs& args) {
  const IntrinsicInfo* info = find_intrinsic(name);
  std::vector<Term>& ps = args.positional;
  if (info->num_args >= 0 && size_t(info->num_args) != ps.size())
    fail(at, str_cat("T.", name, " takes ", info->num_args, " arguments, got ", ps.size()));
  bool is_math = info->intrinsic_class != IntrinsicClass::Builtin;
  for (Term& p : ps) {
    need_expr(p, "an argument");
    if (is_math && p.untyped) {
      p.expr = adapt(p, DataType::float32(), p.at, "an argument of T." + name);
      p.untyped = false;
    }
  }
  if (is_math) {
    for (size_t i = 1; i < ps.size(); ++i) unify(ps[0], ps[i], at, "T." + name);
    for (const Term& p : ps)
      if (!is_floating(p.expr.dtype().element_of()))
        fail(p.at, "T." + name + " takes floats, got " + p.expr.dtype().to_string());
  }
  if (name == "if_then_else") {
    unify(ps[1], ps[2], at, "T.if_then_else");
    if (ps[0].expr.dtype() != DataType::boolean())
      fail(ps[0].at, "the condition of T.if_then_else must be a bool");
  }
  std::vector<PrimExpr> operands;
  for (const Term& p : ps) operands.push_back(p.expr);
  std::optional<DataType> dtype = natural_intrinsic_dtype(name, operands);
  if (!dtype)
    fail(at, "T." + name + " needs its result type: write T.call_intrin(\"<dtype>\", \"" + name +
                 "\", ...)");
  return typed(CallNode::make(*dtype, name, operands, CallKind::Intrinsic), at);
}

Term TirParser::t_let(const Token& at) {
  expect_op("(");
  enter(at);
  Token target = expect_ident("the name T.Let binds");
  expect_op(",");
  PrimExpr value = need_expr(expr(), "the value of T.Let");
  expect_op(",");
  Var var = VarNode::make(target.text, value.dtype());
  scopes_.emplace_back();
  bind(target.text, {var, nullptr});
  PrimExpr body = need_expr(expr(), "the body of T.Let");
  scopes_.pop_back();
  expect_op(")");
  leave();
  return typed(LetNode::make(var, value, body), at);
}

Term TirParser::typed_literal(const Token& at, DataType dtype) {
  std::string qualified = "T." + at.text;
  expect_op("(");
  if (lex_.peek().is_op(")"))
    fail(at, qualified + "() declares a variable: write 'n = " + qualified + "()'");
  if (dtype.is_handle()) fail(at, "T.handle(...) is not a value");
  if (dtype.lanes != 1) fail(at, qualified + "(...) is not a scalar; use T.Broadcast");
  size_t k = lex_.peek().is_op("-") ? 1 : 0;
  const Token& number = lex_.peek(k);
  bool is_number = number.is(TokenKind::Int) || number.is(TokenKind::Float);
  if (is_number && lex_.peek(k + 1).is_op(")")) {
    bool negative = k == 1;
    if (negative) lex_.next();
    Token num = lex_.next();
    lex_.next();
    const char* first = num.text.data();
    const char* last = first + num.text.size();
    if (is_floating(dtype)) {
      double value = 0;
      auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec != std::errc() || ptr != last)
        fail(num, "float literal " + num.text + " is out of range");
      return typed(FloatImmNode::make(dtype, negative ? -value : value), at);
    }
    if (num.is(TokenKind::Float)) fail(num, qualified + " needs an integer, got " + num.text);
    uint64_t magnitude = 0;
    auto [ptr, ec] = std::from_chars(first, last, magnitude);
    bool fits = ec == std::errc() && ptr == last;
    if (fits) {
      if (dtype.is_bool()) {
        fits = !negative && magnitude <= 1;
      } else if (dtype.is_uint()) {
        fits = !negative && (dtype.bits >= 64 || magnitude < (uint64_t(1) << dtype.bits));
      } else {
        uint64_t limit = dtype.bits >= 64 ? uint64_t(std::numeric_limits<int64_t>::max())
                                          : (uint64_t(1) << (dtype.bits - 1)) - 1;
        fits = magnitude <= limit + (negative ? 1 : 0);
      }
    }
    if (!fits) fail(num, (negative ? "-" : "") + num.text + " does not fit " + dtype.to_string());
    int64_t value = negative ? int64_t(0 - magnitude) : int64_t(magnitude);
    return typed(IntImmNode::make(dtype, value), at);
  }
  if (lex_.peek().is(TokenKind::String) && lex_.peek(1).is_op(")") && is_floating(dtype)) {
    Token special = lex_.next();
    lex_.next();
    double inf = std::numeric_limits<double>::infinity();
    if (special.text == "inf") return typed(FloatImmNode::make(dtype, inf), at);
    if (special.text == "-inf") return typed(FloatImmNode::make(dtype, -inf), at);
    if (special.text == "nan")
      return typed(FloatImmNode::make(dtype, std::numeric_limits<double>::quiet_NaN()), at);
    fail(special, "expected \"inf\", \"-inf\" or \"nan\"");
  }
  // Anything else converts a value: T.float32(i) is a cast.
  enter(at);
  Term value = expr();
  leave();
  expect_op(")");
  PrimExpr e = need_expr(value, "the value to convert");
  if (e.dtype().lanes != 1) fail(value.at, qualified + "(...) of a vector; use T.Cast");
  return typed(CastNode::make(dtype, e), at);
}

}  // namespace anvil::tir::text
