// Expression builders: operator overloads that match operand types and fold
// constants, so code that builds index arithmetic stays readable and small.
#include <cmath>
#include <limits>

#include "anvil/support/error.h"
#include "anvil/support/minifloat.h"
#include "anvil/tir/tir.h"

namespace anvil::tir {

PrimExpr make_const(DataType dtype, double value) {
  if (dtype.lanes > 1) return broadcast(make_const(dtype.element_of(), value), dtype.lanes);
  if (dtype.is_float() || dtype.is_bfloat()) return FloatImmNode::make(dtype, value);
  // A float8 or float4 immediate holds the value its code stands for (infinity and NaN where
  // the format has them: an immediate is a value, not a saturating conversion).
  if (dtype.is_minifloat()) {
    MiniFloatFormat f = dtype.minifloat_format();
    return FloatImmNode::make(dtype, minifloat_decode(minifloat_encode(value, f, false), f));
  }
  return IntImmNode::make(dtype, int64_t(value));
}

PrimExpr make_int(int64_t value, DataType dtype) {
  if (dtype.lanes > 1) return broadcast(make_int(value, dtype.element_of()), dtype.lanes);
  if (dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat())
    return make_const(dtype, double(value));
  return IntImmNode::make(dtype, value);
}

PrimExpr const_true(int lanes) { return make_int(1, DataType::boolean().with_lanes(lanes)); }
PrimExpr const_false(int lanes) { return make_int(0, DataType::boolean().with_lanes(lanes)); }

std::optional<int64_t> as_const_int(const PrimExpr& e) {
  if (const auto* imm = as<IntImmNode>(e)) return imm->value;
  if (const auto* b = as<BroadcastNode>(e)) return as_const_int(b->value);
  return std::nullopt;
}

bool is_const_int(const PrimExpr& e, int64_t value) {
  auto v = as_const_int(e);
  return v && *v == value;
}
bool is_zero(const PrimExpr& e) { return is_const_int(e, 0); }
bool is_one(const PrimExpr& e) { return is_const_int(e, 1); }

namespace {

std::optional<double> as_const_float(const PrimExpr& e) {
  if (const auto* imm = as<FloatImmNode>(e)) return imm->value;
  if (const auto* b = as<BroadcastNode>(e)) return as_const_float(b->value);
  return std::nullopt;
}

// An immediate literal (a plain int64 or a float) adapts to the other side.
PrimExpr adapt_literal(const PrimExpr& lit, DataType target) {
  if (lit.dtype() == target) return lit;
  if (const auto* imm = as<IntImmNode>(lit); imm && imm->dtype == kIndexType) {
    if (target.is_float() || target.is_bfloat()) return make_const(target, double(imm->value));
    if (target.is_int() || target.is_uint()) return make_int(imm->value, target);
  }
  if (const auto* imm = as<FloatImmNode>(lit); imm && (target.is_float() || target.is_bfloat()))
    return make_const(target, imm->value);
  return lit;
}

// Brings a and b to one dtype: literals adapt, a scalar meets a vector by
// broadcast. Anything else is a bug in the caller.
void match_types(PrimExpr& a, PrimExpr& b, const char* op) {
  ANVIL_ICHECK(a && b, "operand of ", op, " is null");
  if (a.dtype() == b.dtype()) return;
  a = adapt_literal(a, b.dtype().element_of());
  b = adapt_literal(b, a.dtype().element_of());
  if (a.dtype().element_of() == b.dtype().element_of()) {
    if (a.dtype().lanes == 1 && b.dtype().lanes > 1) a = broadcast(a, b.dtype().lanes);
    if (b.dtype().lanes == 1 && a.dtype().lanes > 1) b = broadcast(b, a.dtype().lanes);
  }
  ANVIL_ICHECK(a.dtype() == b.dtype(), op, " of mismatched types ", a.dtype().to_string(), " and ",
               b.dtype().to_string());
}

int64_t floor_div_int(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod_int(int64_t a, int64_t b) { return a - floor_div_int(a, b) * b; }

bool both_scalar_ints(const PrimExpr& a, const PrimExpr& b) {
  return as<IntImmNode>(a) && as<IntImmNode>(b);
}

bool both_scalar_floats(const PrimExpr& a, const PrimExpr& b) {
  return as<FloatImmNode>(a) && as<FloatImmNode>(b);
}

int64_t int_of(const PrimExpr& e) { return as<IntImmNode>(e)->value; }
double float_of(const PrimExpr& e) { return as<FloatImmNode>(e)->value; }

bool is_integer(DataType t) { return t.is_int() || t.is_uint(); }

}  // namespace

PrimExpr operator+(PrimExpr a, PrimExpr b) {
  match_types(a, b, "+");
  if (both_scalar_ints(a, b)) return make_int(int_of(a) + int_of(b), a.dtype());
  if (both_scalar_floats(a, b)) return make_const(a.dtype(), float_of(a) + float_of(b));
  if (is_zero(b)) return a;
  if (is_zero(a)) return b;
  return AddNode::make(a, b);
}

PrimExpr operator-(PrimExpr a, PrimExpr b) {
  match_types(a, b, "-");
  if (both_scalar_ints(a, b)) return make_int(int_of(a) - int_of(b), a.dtype());
  if (both_scalar_floats(a, b)) return make_const(a.dtype(), float_of(a) - float_of(b));
  if (is_zero(b)) return a;
  return SubNode::make(a, b);
}

PrimExpr operator-(PrimExpr a) {
  if (const auto* imm = as<IntImmNode>(a)) return make_int(-imm->value, a.dtype());
  if (const auto* imm = as<FloatImmNode>(a)) return make_const(a.dtype(), -imm->value);
  return make_int(0, a.dtype()) - a;
}

PrimExpr operator*(PrimExpr a, PrimExpr b) {
  match_types(a, b, "*");
  if (both_scalar_ints(a, b)) return make_int(int_of(a) * int_of(b), a.dtype());
  if (both_scalar_floats(a, b)) return make_const(a.dtype(), float_of(a) * float_of(b));
  if (is_integer(a.dtype().element_of())) {
    if (is_one(b)) return a;
    if (is_one(a)) return b;
    if (is_zero(a)) return a;
    if (is_zero(b)) return b;
  } else {
    if (auto v = as_const_float(b); v && *v == 1.0) return a;
    if (auto v = as_const_float(a); v && *v == 1.0) return b;
  }
  return MulNode::make(a, b);
}

PrimExpr operator/(PrimExpr a, PrimExpr b) {
  match_types(a, b, "/");
  if (is_integer(a.dtype().element_of())) return floordiv(a, b);
  if (both_scalar_floats(a, b) && float_of(b) != 0)
    return make_const(a.dtype(), float_of(a) / float_of(b));
  return DivNode::make(a, b);
}

PrimExpr operator%(PrimExpr a, PrimExpr b) { return floormod(std::move(a), std::move(b)); }

PrimExpr floordiv(PrimExpr a, PrimExpr b) {
  match_types(a, b, "floordiv");
  if (both_scalar_ints(a, b) && int_of(b) != 0)
    return make_int(floor_div_int(int_of(a), int_of(b)), a.dtype());
  if (is_one(b)) return a;
  return FloorDivNode::make(a, b);
}

PrimExpr floormod(PrimExpr a, PrimExpr b) {
  match_types(a, b, "floormod");
  if (both_scalar_ints(a, b) && int_of(b) != 0)
    return make_int(floor_mod_int(int_of(a), int_of(b)), a.dtype());
  if (is_one(b)) return make_int(0, a.dtype());
  return FloorModNode::make(a, b);
}

PrimExpr truncdiv(PrimExpr a, PrimExpr b) {
  match_types(a, b, "truncdiv");
  if (both_scalar_ints(a, b) && int_of(b) != 0) return make_int(int_of(a) / int_of(b), a.dtype());
  if (is_one(b)) return a;
  return DivNode::make(a, b);
}

PrimExpr truncmod(PrimExpr a, PrimExpr b) {
  match_types(a, b, "truncmod");
  if (both_scalar_ints(a, b) && int_of(b) != 0) return make_int(int_of(a) % int_of(b), a.dtype());
  return ModNode::make(a, b);
}

PrimExpr min(PrimExpr a, PrimExpr b) {
  match_types(a, b, "min");
  if (both_scalar_ints(a, b)) return make_int(std::min(int_of(a), int_of(b)), a.dtype());
  if (both_scalar_floats(a, b)) return make_const(a.dtype(), std::fmin(float_of(a), float_of(b)));
  if (a.get() == b.get()) return a;
  return MinNode::make(a, b);
}

PrimExpr max(PrimExpr a, PrimExpr b) {
  match_types(a, b, "max");
  if (both_scalar_ints(a, b)) return make_int(std::max(int_of(a), int_of(b)), a.dtype());
  if (both_scalar_floats(a, b)) return make_const(a.dtype(), std::fmax(float_of(a), float_of(b)));
  if (a.get() == b.get()) return a;
  return MaxNode::make(a, b);
}

#define ANVIL_COMPARE(func, Node, op)                                                         \
  PrimExpr func(PrimExpr a, PrimExpr b) {                                                     \
    match_types(a, b, #op);                                                                   \
    if (both_scalar_ints(a, b)) return make_int(int_of(a) op int_of(b), DataType::boolean()); \
    if (both_scalar_floats(a, b))                                                             \
      return make_int(float_of(a) op float_of(b), DataType::boolean());                       \
    return Node::make(a, b);                                                                  \
  }
ANVIL_COMPARE(eq, EQNode, ==)
ANVIL_COMPARE(ne, NENode, !=)
ANVIL_COMPARE(operator<, LTNode, <)
ANVIL_COMPARE(operator<=, LENode, <=)
ANVIL_COMPARE(operator>, GTNode, >)
ANVIL_COMPARE(operator>=, GENode, >=)
#undef ANVIL_COMPARE

PrimExpr logical_and(PrimExpr a, PrimExpr b) {
  match_types(a, b, "and");
  if (is_one(a)) return b;
  if (is_one(b)) return a;
  if (is_zero(a)) return a;
  if (is_zero(b)) return b;
  return AndNode::make(a, b);
}

PrimExpr logical_or(PrimExpr a, PrimExpr b) {
  match_types(a, b, "or");
  if (is_zero(a)) return b;
  if (is_zero(b)) return a;
  if (is_one(a)) return a;
  if (is_one(b)) return b;
  return OrNode::make(a, b);
}

PrimExpr logical_not(PrimExpr a) {
  if (auto v = as_const_int(a); v && a.dtype().lanes == 1)
    return make_int(*v == 0, DataType::boolean());
  if (const auto* n = as<NotNode>(a)) return n->a;
  return NotNode::make(a);
}

PrimExpr select(PrimExpr condition, PrimExpr true_value, PrimExpr false_value) {
  match_types(true_value, false_value, "select");
  if (auto v = as_const_int(condition); v && condition.dtype().lanes == 1)
    return *v ? true_value : false_value;
  return SelectNode::make(condition, true_value, false_value);
}

PrimExpr cast(DataType dtype, PrimExpr value) {
  ANVIL_ICHECK(value, "cast of a null expression");
  if (value.dtype() == dtype) return value;
  if (dtype.lanes > 1 && value.dtype().lanes == 1)
    return broadcast(cast(dtype.element_of(), value), dtype.lanes);
  if (dtype.lanes == 1) {
    if (const auto* imm = as<IntImmNode>(value)) return make_const(dtype, double(imm->value));
    if (const auto* imm = as<FloatImmNode>(value)) {
      if (dtype.is_float() || dtype.is_bfloat() || dtype.is_minifloat())
        return make_const(dtype, imm->value);
      if (std::isfinite(imm->value) && std::fabs(imm->value) < 9.2e18)
        return make_int(int64_t(imm->value), dtype);
    }
  }
  return CastNode::make(dtype, value);
}

PrimExpr ramp(PrimExpr base, PrimExpr stride, int lanes) {
  if (lanes == 1) return base;
  stride = adapt_literal(stride, base.dtype());
  return RampNode::make(std::move(base), std::move(stride), lanes);
}

PrimExpr broadcast(PrimExpr value, int lanes) {
  if (lanes == 1) return value;
  return BroadcastNode::make(std::move(value), lanes);
}

PrimExpr let(Var var, PrimExpr value, PrimExpr body) {
  return LetNode::make(std::move(var), std::move(value), std::move(body));
}

PrimExpr load(Buffer buffer, std::vector<PrimExpr> indices) {
  return BufferLoadNode::make(std::move(buffer), std::move(indices));
}

PrimExpr call_intrin(DataType dtype, std::string op, std::vector<PrimExpr> args) {
  return CallNode::make(dtype, std::move(op), std::move(args), CallKind::Intrinsic);
}

PrimExpr call_extern(DataType dtype, std::string name, std::vector<PrimExpr> args) {
  return CallNode::make(dtype, std::move(name), std::move(args), CallKind::Extern);
}

PrimExpr sum(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition) {
  return ReduceNode::make(ReduceKind::Sum, std::move(source), std::move(axis),
                          std::move(condition));
}
PrimExpr max_reduce(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition) {
  return ReduceNode::make(ReduceKind::Max, std::move(source), std::move(axis),
                          std::move(condition));
}
PrimExpr min_reduce(PrimExpr source, std::vector<IterVar> axis, PrimExpr condition) {
  return ReduceNode::make(ReduceKind::Min, std::move(source), std::move(axis),
                          std::move(condition));
}

PrimExpr reduce_identity(ReduceKind combiner, DataType dtype) {
  bool is_float = dtype.is_float() || dtype.is_bfloat();
  switch (combiner) {
    case ReduceKind::Sum:
      return make_const(dtype, 0);
    case ReduceKind::Prod:
      return make_const(dtype, 1);
    case ReduceKind::Min:
    case ReduceKind::Max: {
      bool is_min = combiner == ReduceKind::Min;
      if (is_float)
        return make_const(dtype, is_min ? std::numeric_limits<double>::infinity()
                                        : -std::numeric_limits<double>::infinity());
      DataType e = dtype.element_of();
      int64_t hi, lo;
      if (e.is_bool()) {
        hi = 1, lo = 0;
      } else if (e.is_uint()) {
        lo = 0;
        hi = e.bits >= 64 ? -1 : int64_t((uint64_t(1) << e.bits) - 1);
      } else {
        hi = e.bits >= 64 ? std::numeric_limits<int64_t>::max()
                          : int64_t((uint64_t(1) << (e.bits - 1)) - 1);
        lo = -hi - 1;
      }
      return make_int(is_min ? hi : lo, dtype);
    }
  }
  return nullptr;
}

PrimExpr reduce_combine(ReduceKind combiner, PrimExpr a, PrimExpr b) {
  switch (combiner) {
    case ReduceKind::Sum:
      return a + b;
    case ReduceKind::Prod:
      return a * b;
    case ReduceKind::Min:
      return min(a, b);
    case ReduceKind::Max:
      return max(a, b);
  }
  return nullptr;
}

}  // namespace anvil::tir
