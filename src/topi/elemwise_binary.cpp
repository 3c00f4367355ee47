// Computes of the broadcasting binary ops and where. Integer division and remainder guard the
// cases that trap or are undefined in machine code (a zero divisor, the most negative value
// divided by -1) and give the reference's results for them; floats follow numpy.
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "anvil/topi/topi.h"
#include "topi/topi_util.h"

namespace anvil::topi {
namespace {

using BinaryFn = std::function<PrimExpr(PrimExpr, PrimExpr)>;

// Registers op as out = f(lhs, rhs) over the broadcast shape.
void register_binary(const std::string& op, BinaryFn f) {
  register_compute(op, [op, f](const ComputeArgs& args) {
    const te::Tensor& a = args.inputs[0];
    const te::Tensor& b = args.inputs[1];
    const std::vector<PrimExpr> shape = args.out_shape();
    return std::vector<te::Tensor>{te::compute(
        shape,
        [&](const std::vector<Var>& i) {
          return f(broadcast_load(a, i, shape), broadcast_load(b, i, shape));
        },
        tensor_name(op))};
  });
}

bool is_signed_int(const PrimExpr& x) { return x.dtype().is_int(); }

// A divisor that never traps: 1 where b is 0 (or -1 for signed types, whose quotient the
// callers take as -a instead).
PrimExpr safe_divisor(const PrimExpr& b) {
  PrimExpr bad = tir::eq(b, 0);
  if (is_signed_int(b)) bad = tir::logical_or(bad, tir::eq(b, -1));
  return tir::select(bad, int_const(b.dtype(), 1), b);
}

// Integer a / b rounded by `div` (truncdiv or floordiv); a / 0 is 0 and a / -1 is -a (wrapping).
PrimExpr int_quotient(PrimExpr a, PrimExpr b, PrimExpr (*div)(PrimExpr, PrimExpr)) {
  PrimExpr q = div(a, safe_divisor(b));
  if (is_signed_int(b)) q = tir::select(tir::eq(b, -1), 0 - a, q);
  return tir::select(tir::eq(b, 0), int_const(a.dtype(), 0), q);
}

// Integer remainder by `mod` (truncmod or floormod); the remainder by 0 or -1 is 0.
PrimExpr int_remainder(PrimExpr a, PrimExpr b, PrimExpr (*mod)(PrimExpr, PrimExpr)) {
  PrimExpr r = mod(a, safe_divisor(b));
  PrimExpr zero_result = tir::eq(b, 0);
  if (is_signed_int(b)) zero_result = tir::logical_or(zero_result, tir::eq(b, -1));
  return tir::select(zero_result, int_const(a.dtype(), 0), r);
}

// numpy's float remainder: the sign of the divisor, NaN for a zero divisor.
PrimExpr float_floor_mod(PrimExpr a, PrimExpr b) {
  PrimExpr r = tir::call_intrin(a.dtype(), "fmod", {a, b});
  PrimExpr signs_differ = tir::ne(r < 0, b < 0);
  PrimExpr adjusted = tir::select(tir::logical_and(tir::ne(r, 0), signs_differ), r + b, r);
  PrimExpr signed_zero =
      tir::call_intrin(a.dtype(), "copysign", {tir::make_const(a.dtype(), 0), b});
  return tir::select(tir::eq(adjusted, 0), signed_zero, adjusted);
}

// Integer power by repeated squaring over the bits of the exponent, with wrap-around. The
// running square and product are let-bound so the expression stays linear in the bit count.
// Negative exponents give 1 / x^-y truncated: 0 unless |x| is 1.
PrimExpr int_power(PrimExpr x, PrimExpr y) {
  DataType t = x.dtype();
  DataType u = DataType(DataType::UInt, t.bits, t.lanes);
  std::vector<std::pair<Var, PrimExpr>> bindings;
  auto bind = [&](const std::string& name, PrimExpr value) {
    Var v = tir::VarNode::make(name, value.dtype());
    bindings.emplace_back(v, value);
    return PrimExpr(v);
  };
  PrimExpr square = bind("base", tir::cast(u, x));
  PrimExpr rest = bind("exp", tir::cast(u, y));
  PrimExpr product = int_const(u, 1);
  int bits = t.is_int() ? t.bits - 1 : t.bits;  // signed exponents reach here only when >= 0
  for (int k = 0; k < bits; ++k) {
    PrimExpr bit_set = tir::ne(tir::floormod(rest, int_const(u, 2)), int_const(u, 0));
    product = bind("prod", product * tir::select(bit_set, square, int_const(u, 1)));
    if (k + 1 < bits) {
      square = bind("sq", square * square);
      rest = bind("exp", tir::floordiv(rest, int_const(u, 2)));
    }
  }
  PrimExpr result = tir::cast(t, product);
  for (size_t i = bindings.size(); i-- > 0;)
    result = tir::let(bindings[i].first, bindings[i].second, result);
  if (!t.is_int()) return result;
  PrimExpr one = int_const(t, 1);
  PrimExpr odd = tir::ne(tir::floormod(y, int_const(t, 2)), int_const(t, 0));
  PrimExpr negative_exponent = tir::select(
      tir::eq(x, 1), one,
      tir::select(tir::eq(x, -1), tir::select(odd, int_const(t, -1), one), int_const(t, 0)));
  return tir::select(y < 0, negative_exponent, result);
}

void register_arithmetic() {
  register_binary("add", [](PrimExpr a, PrimExpr b) { return a + b; });
  register_binary("subtract", [](PrimExpr a, PrimExpr b) { return a - b; });
  register_binary("multiply", [](PrimExpr a, PrimExpr b) { return a * b; });
  register_binary("divide", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (is_float_like(a.dtype())) return a / b;
    return int_quotient(a, b, tir::truncdiv);
  });
  register_binary("floor_divide", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (is_float_like(a.dtype())) return tir::call_intrin(a.dtype(), "floor", {a / b});
    return int_quotient(a, b, tir::floordiv);
  });
  register_binary("mod", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (is_float_like(a.dtype())) return tir::call_intrin(a.dtype(), "fmod", {a, b});
    return int_remainder(a, b, tir::truncmod);
  });
  register_binary("floor_mod", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (is_float_like(a.dtype())) return float_floor_mod(a, b);
    return int_remainder(a, b, tir::floormod);
  });
  register_binary("power", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (is_float_like(a.dtype())) return tir::call_intrin(a.dtype(), "pow", {a, b});
    return int_power(a, b);
  });
  register_binary("maximum", nan_maximum);
  register_binary("minimum", nan_minimum);
}

void register_comparisons() {
  register_binary("equal", [](PrimExpr a, PrimExpr b) { return tir::eq(a, b); });
  register_binary("not_equal", [](PrimExpr a, PrimExpr b) { return tir::ne(a, b); });
  register_binary("less", [](PrimExpr a, PrimExpr b) { return a < b; });
  register_binary("less_equal", [](PrimExpr a, PrimExpr b) { return a <= b; });
  register_binary("greater", [](PrimExpr a, PrimExpr b) { return a > b; });
  register_binary("greater_equal", [](PrimExpr a, PrimExpr b) { return a >= b; });
}

void register_logic() {
  register_binary("logical_and", [](PrimExpr a, PrimExpr b) { return tir::logical_and(a, b); });
  register_binary("logical_or", [](PrimExpr a, PrimExpr b) { return tir::logical_or(a, b); });
  register_binary("logical_xor", [](PrimExpr a, PrimExpr b) { return tir::ne(a, b); });
  register_binary("bitwise_and", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (a.dtype().is_bool()) return tir::logical_and(a, b);
    return bitwise(BitwiseOp::And, a, b);
  });
  register_binary("bitwise_or", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (a.dtype().is_bool()) return tir::logical_or(a, b);
    return bitwise(BitwiseOp::Or, a, b);
  });
  register_binary("bitwise_xor", [](PrimExpr a, PrimExpr b) -> PrimExpr {
    if (a.dtype().is_bool()) return tir::ne(a, b);
    return bitwise(BitwiseOp::Xor, a, b);
  });
  register_binary("left_shift", shift_left);
  register_binary("right_shift", shift_right);
}

}  // namespace

// Bit k of x is floormod(floordiv(x, 2^k), 2): on two's complement, floor division by a power
// of two is an arithmetic shift, so this holds for negative x too, and the code generator
// emits a shift and a mask. The top bit of a signed value is its sign.
PrimExpr bitwise(BitwiseOp op, PrimExpr a, PrimExpr b) {
  DataType t = a.dtype();
  auto bit = [t](const PrimExpr& x, int k) -> PrimExpr {
    if (t.is_int() && k == t.bits - 1) return x < 0;
    if (k == t.bits - 1) return tir::floordiv(x, int_const(t, int64_t(1) << (k - 1))) >= 2;
    if (t.is_int() && k == t.bits - 2) {
      // x / 2^k is in [-2, 2) and odd exactly when the bit is set. (Written without floormod:
      // the simplifier would rewrite floormod(floordiv(x, 2^k), 2) through 2^(k+1), which
      // overflows the dtype.)
      PrimExpr q = tir::floordiv(x, int_const(t, int64_t(1) << k));
      return tir::logical_or(tir::eq(q, 1), tir::eq(q, -1));
    }
    return tir::ne(tir::floormod(tir::floordiv(x, int_const(t, int64_t(1) << k)), 2), 0);
  };
  PrimExpr result = int_const(t, 0);
  for (int k = 0; k < t.bits; ++k) {
    PrimExpr x = bit(a, k), y = bit(b, k);
    PrimExpr set = op == BitwiseOp::And  ? tir::logical_and(x, y)
                   : op == BitwiseOp::Or ? tir::logical_or(x, y)
                                         : tir::ne(x, y);
    // 2^(bits-1) wraps to the most negative value in a signed type, the sign bit's weight.
    int64_t weight = k == 63 ? std::numeric_limits<int64_t>::min() : int64_t(1) << k;
    if (t.is_int() && k == t.bits - 1) weight = lowest_value(t);
    result = result + tir::select(set, int_const(t, weight), int_const(t, 0));
  }
  return result;
}

namespace {

// 2^y in dtype for y in [0, max_count], 0 for other y. A sum of one-hot terms rather than a
// chain of selects: the vectorizer revisits nested scalar selects once per path.
PrimExpr power_of_two(const PrimExpr& y, int max_count, DataType dtype) {
  PrimExpr power = int_const(dtype, 0);
  for (int k = 0; k <= max_count; ++k) {
    int64_t weight = k == 63 ? std::numeric_limits<int64_t>::min() : int64_t(1) << k;
    power = power + tir::select(tir::eq(y, int_const(y.dtype(), k)), int_const(dtype, weight),
                                int_const(dtype, 0));
  }
  return power;
}

}  // namespace

// x * 2^y, computed unsigned so the wrap-around is defined; counts outside [0, bits) shift
// every bit out.
PrimExpr shift_left(PrimExpr x, PrimExpr y) {
  DataType t = x.dtype();
  DataType u = DataType(DataType::UInt, t.bits, t.lanes);
  return tir::cast(t, tir::cast(u, x) * power_of_two(y, t.bits - 1, u));
}

// floor(x / 2^y): an arithmetic shift for signed types. A count past the width leaves only
// the sign: -1 for negative x, else 0.
PrimExpr shift_right(PrimExpr x, PrimExpr y) {
  DataType t = x.dtype();
  // The largest count whose divisor 2^y is representable in t.
  int max_count = t.is_int() ? t.bits - 2 : t.bits - 1;
  PrimExpr in_range = tir::logical_and(y >= 0, y <= max_count);
  // 1 out of range, so the division (whose result is then not taken) cannot trap.
  PrimExpr divisor =
      power_of_two(y, max_count, t) + tir::select(in_range, int_const(t, 0), int_const(t, 1));
  PrimExpr shifted = tir::floordiv(x, divisor);
  PrimExpr out_of_range =
      t.is_int() ? tir::select(x < 0, int_const(t, -1), int_const(t, 0)) : int_const(t, 0);
  return tir::select(in_range, shifted, out_of_range);
}

void register_binary_computes() {
  register_arithmetic();
  register_comparisons();
  register_logic();
  register_compute("where", [](const ComputeArgs& args) {
    const te::Tensor& cond = args.inputs[0];
    const te::Tensor& x = args.inputs[1];
    const te::Tensor& y = args.inputs[2];
    const std::vector<PrimExpr> shape = args.out_shape();
    return std::vector<te::Tensor>{te::compute(
        shape,
        [&](const std::vector<Var>& i) {
          return tir::select(broadcast_load(cond, i, shape), broadcast_load(x, i, shape),
                             broadcast_load(y, i, shape));
        },
        tensor_name("where"))};
  });
}

}  // namespace anvil::topi
