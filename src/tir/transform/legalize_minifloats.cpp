// legalize_minifloats: conversions to and from the float8 and float4 types
// (anvil/support/minifloat.h) become integer and float32 arithmetic, so no code
// generator needs to know the formats. A minifloat value is its code in one byte;
// loads, stores and selects of it move that byte unchanged, and only casts look
// inside:
//
//   cast(f32, c) -> sign * (2^m + M) * 2^(E - bias - m)  (E > 0)
//                   sign * M * 2^(1 - bias - m)            (E = 0), and the format's
//                   infinities and NaN, where c = S.E.M is reinterpret(uint8, c)
//   cast(f8, x)  -> the code of x rounded to nearest, ties to even, saturating:
//                   beyond the largest finite value (infinity included) gives it, NaN
//                   gives the format's NaN (E2M1, which has none: -0), as ONNX's Cast with
//                   saturate=1
//   cast(e8m0, x) -> the float32 exponent field of |x|, rounded up (ONNX's default round_mode)
//                   and saturating: 255 (NaN) only for infinity and NaN
//   a minifloat immediate -> reinterpret(f8, its code)
//
// Other types are converted through float32 (float64 sources through float64,
// so they are rounded once); every float8 and float4 value is exact in float16.
// Powers of two are built from their IEEE exponent field, so the arithmetic is
// exact and needs no math library. Runs first in the lowering pipeline, on
// scalar expressions, so the vectorizer sees plain arithmetic.
#include <cmath>

#include "anvil/support/minifloat.h"
#include "anvil/tir/functor.h"
#include "anvil/tir/transform.h"

namespace anvil::tir::transform {
namespace {

// The IEEE binary format a value is encoded from: float32 or float64.
struct SourceFormat {
  DataType float_type, int_type;
  int mantissa_bits, bias;
};
constexpr SourceFormat kFloat32{DataType::float32(), DataType::int32(), 23, 127};
constexpr SourceFormat kFloat64{DataType::float64(), DataType::int64(), 52, 1023};

PrimExpr int_of(const SourceFormat& s, int64_t v) { return make_int(v, s.int_type); }

// 2^k as a float of the source format, for k (an integer of its int type) within the
// normal exponent range: the exponent field k + bias and a zero mantissa.
PrimExpr power_of_two(const SourceFormat& s, const PrimExpr& k) {
  PrimExpr field = (k + int_of(s, s.bias)) * int_of(s, int64_t(1) << s.mantissa_bits);
  return call_intrin(s.float_type, "reinterpret", {field});
}

// E8M0 (no sign, no mantissa): code c is the float32 whose exponent field is c (c in
// [1, 254]), 2^-127 (a float32 subnormal) for 0 and NaN for 255.
PrimExpr decode_exponent_only(const PrimExpr& code) {
  auto i32 = [](int64_t v) { return make_int(v, DataType::int32()); };
  auto f32 = [](double v) { return make_const(DataType::float32(), v); };
  PrimExpr normal = power_of_two(kFloat32, code - i32(kFloat32.bias));
  return select(eq(code, i32(0)), f32(std::ldexp(1.0, -127)),
                select(eq(code, i32(255)), f32(std::nan("")), normal));
}

// The E8M0 code of x (float32) as ONNX's Cast computes it with round_mode "up", saturating:
// the exponent field of |x|, plus one when the mantissa is not 0 (not past 254); 255 for
// infinity and NaN.
PrimExpr encode_exponent_only(const PrimExpr& x) {
  auto i32 = [](int64_t v) { return make_int(v, DataType::int32()); };
  PrimExpr bits = call_intrin(DataType::int32(), "reinterpret",
                              {call_intrin(DataType::float32(), "fabs", {x})});
  PrimExpr field = floordiv(bits, i32(1 << 23));
  PrimExpr has_fraction = ne(floormod(bits, i32(1 << 23)), i32(0));
  PrimExpr round_up = logical_and(has_fraction, field < i32(254));
  return select(round_up, field + i32(1), field);
}

// The float32 value of a minifloat code (an int32 in [0, 2^total_bits)).
PrimExpr decode(const MiniFloatFormat& f, const PrimExpr& code) {
  if (f.specials == MiniFloatFormat::Specials::ExponentOnly) return decode_exponent_only(code);
  const SourceFormat& s = kFloat32;
  const int m = f.mantissa_bits, e = f.exponent_bits;
  auto i32 = [](int64_t v) { return make_int(v, DataType::int32()); };
  auto f32 = [](double v) { return make_const(DataType::float32(), v); };
  PrimExpr sign_bit = i32(int64_t(1) << (e + m));
  PrimExpr negative = code >= sign_bit;
  PrimExpr magnitude = floormod(code, sign_bit);
  PrimExpr exponent = floordiv(magnitude, i32(int64_t(1) << m));
  PrimExpr mantissa = floormod(magnitude, i32(int64_t(1) << m));
  PrimExpr normal = cast(DataType::float32(), mantissa + i32(int64_t(1) << m)) *
                    power_of_two(s, max(exponent, i32(1)) - i32(f.bias + m));
  PrimExpr subnormal = cast(DataType::float32(), mantissa) * f32(std::ldexp(1.0, 1 - f.bias - m));
  PrimExpr value = select(eq(exponent, i32(0)), subnormal, normal);
  const double nan = std::nan("");
  const int64_t exponent_ones = (int64_t(1) << e) - 1, mantissa_ones = (int64_t(1) << m) - 1;
  switch (f.specials) {
    case MiniFloatFormat::Specials::Ieee:
      value = select(eq(exponent, i32(exponent_ones)),
                     select(eq(mantissa, i32(0)), f32(INFINITY), f32(nan)), value);
      break;
    case MiniFloatFormat::Specials::Fn:
      value = select(eq(magnitude, i32((exponent_ones << m) | mantissa_ones)), f32(nan), value);
      break;
    case MiniFloatFormat::Specials::Fnuz:
      // 1000...0 is NaN; there is no negative zero.
      return select(eq(code, sign_bit), f32(nan), select(negative, value * f32(-1), value));
    case MiniFloatFormat::Specials::None:
    case MiniFloatFormat::Specials::ExponentOnly:
      break;
  }
  return select(negative, value * f32(-1), value);
}

// The code (an int32) of x, a float32 or float64, rounded to nearest even and saturating.
PrimExpr encode(const MiniFloatFormat& f, const PrimExpr& x, const SourceFormat& s) {
  const int m = f.mantissa_bits, e = f.exponent_bits;
  auto i32 = [](int64_t v) { return make_int(v, DataType::int32()); };
  auto flt = [&](double v) { return make_const(s.float_type, v); };
  const uint32_t max_code = f.max_finite_code();
  const MiniFloatOverflow overflow = minifloat_overflow(f);
  PrimExpr a = call_intrin(s.float_type, "fabs", {x});
  PrimExpr in_range =
      overflow.inclusive ? a < flt(overflow.threshold) : a <= flt(overflow.threshold);
  // Out of range (or NaN) the arithmetic below runs on 0, so it stays defined.
  PrimExpr safe = select(in_range, a, flt(0));
  PrimExpr bits = call_intrin(s.int_type, "reinterpret", {safe});
  PrimExpr exponent = floordiv(bits, int_of(s, int64_t(1) << s.mantissa_bits)) - int_of(s, s.bias);
  // The binade's exponent, no lower than the smallest normal's (subnormals share its step).
  PrimExpr lead = max(exponent, int_of(s, 1 - f.bias));
  PrimExpr steps =
      call_intrin(s.float_type, "round", {safe * power_of_two(s, int_of(s, m) - lead)});
  // (field - 1) * 2^m + steps: a step count of 2^(m + 1), rounded up out of the binade,
  // carries into the exponent field by itself.
  PrimExpr magnitude =
      cast(DataType::int32(), (lead + int_of(s, f.bias - 1)) * int_of(s, int64_t(1) << m)) +
      cast(DataType::int32(), steps);
  magnitude = select(in_range, magnitude, i32(max_code));
  PrimExpr sign_bit = i32(int64_t(1) << (e + m));
  PrimExpr negative = call_intrin(s.int_type, "reinterpret", {x}) < int_of(s, 0);
  if (f.specials == MiniFloatFormat::Specials::Fnuz)
    negative = logical_and(negative, ne(magnitude, i32(0)));  // no negative zero
  PrimExpr code = select(negative, magnitude + sign_bit, magnitude);
  return select(call_intrin(DataType::boolean(), "isnan", {x}), i32(f.nan_code()), code);
}

PrimExpr as_code(DataType minifloat, const PrimExpr& code) {
  return call_intrin(minifloat, "reinterpret", {cast(DataType::uint8(), code)});
}

PrimExpr code_of(const PrimExpr& value) {
  return cast(DataType::int32(), call_intrin(DataType::uint8(), "reinterpret", {value}));
}

class MiniFloatLegalizer : public Mutator {
 public:
  PrimExpr mutate_Cast(const CastNode* node, const PrimExpr& self) override {
    PrimExpr value = mutate(node->value);
    DataType from = value.dtype(), to = node->dtype;
    if (!from.is_minifloat() && !to.is_minifloat())
      return value.get() == node->value.get() ? self : cast(to, value);
    if (from.lanes != 1 || to.lanes != 1)
      throw_error("legalize_minifloats: a vector cast from ", from.to_string(), " to ",
                  to.to_string(), " (the pass runs before vectorization)");
    if (from.is_minifloat()) value = decode(from.minifloat_format(), code_of(value));
    if (!to.is_minifloat()) return cast(to, value);
    if (to.minifloat_format().specials == MiniFloatFormat::Specials::ExponentOnly)
      return as_code(to, encode_exponent_only(cast(DataType::float32(), value)));
    const SourceFormat& s = value.dtype() == DataType::float64() ? kFloat64 : kFloat32;
    return as_code(to, encode(to.minifloat_format(), cast(s.float_type, value), s));
  }

  PrimExpr mutate_FloatImm(const FloatImmNode* node, const PrimExpr& self) override {
    if (!node->dtype.is_minifloat()) return self;
    MiniFloatFormat f = node->dtype.minifloat_format();
    return as_code(node->dtype,
                   make_int(int64_t(minifloat_encode(node->value, f, false)), DataType::int32()));
  }
};

}  // namespace

PrimFunc legalize_minifloats(const PrimFunc& func) {
  Stmt body = MiniFloatLegalizer().mutate(func->body);
  return body.get() == func->body.get() ? func : func->with_body(body);
}

}  // namespace anvil::tir::transform
