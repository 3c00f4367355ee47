// Floating-point formats narrower than half precision, as ONNX defines them: float8 E4M3FN,
// E4M3FNUZ, E5M2, E5M2FNUZ, E8M0 and float4 E2M1. Each value is a sign, an exponent field with a
// bias, and a mantissa, with a subnormal range at exponent field 0; the formats differ in what
// they spend on infinities and NaN:
//   IEEE  (E5M2): exponent all ones is infinity (mantissa 0) or NaN;
//   FN    (E4M3FN): no infinities, only S.1111.111 is NaN;
//   FNUZ  (E4M3FNUZ, E5M2FNUZ): no infinities, no negative zero, 1000 0000 is the one NaN;
//   none  (E2M1): every pattern is a number; NaN converts to -0 (as ml_dtypes, which
//                 ONNX's reference uses, converts it).
//   exponent only (E8M0, the scale type of microscaling formats): no sign, no mantissa, no
//                 zero: code c is 2^(c - 127) and 1111 1111 is NaN. Encoding follows ONNX's
//                 Cast: the float32 exponent of the magnitude, rounded up (round_mode "up",
//                 Cast's default), down or to nearest; see e8m0_encode.
// Encoding rounds to nearest, ties to even; out of range it saturates to the largest finite
// value, or gives infinity (IEEE) or NaN (the others) when not saturating, as ONNX's Cast.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace anvil {

struct MiniFloatFormat {
  enum class Specials : uint8_t { Ieee, Fn, Fnuz, None, ExponentOnly };
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;

  static constexpr MiniFloatFormat e4m3fn() { return {4, 3, 7, Specials::Fn}; }
  static constexpr MiniFloatFormat e4m3fnuz() { return {4, 3, 8, Specials::Fnuz}; }
  static constexpr MiniFloatFormat e5m2() { return {5, 2, 15, Specials::Ieee}; }
  static constexpr MiniFloatFormat e5m2fnuz() { return {5, 2, 16, Specials::Fnuz}; }
  static constexpr MiniFloatFormat e2m1() { return {2, 1, 1, Specials::None}; }
  static constexpr MiniFloatFormat e8m0() { return {8, 0, 127, Specials::ExponentOnly}; }

  int total_bits() const {
    return (specials == Specials::ExponentOnly ? 0 : 1) + exponent_bits + mantissa_bits;
  }
  // The code of the largest finite magnitude (sign bit clear).
  uint32_t max_finite_code() const;
  // The code NaN converts to: the format's NaN (sign bit clear), or -0 where there is none.
  uint32_t nan_code() const;
};

inline uint32_t MiniFloatFormat::max_finite_code() const {
  const uint32_t exponent_ones = (1u << exponent_bits) - 1,
                 mantissa_ones = (1u << mantissa_bits) - 1;
  switch (specials) {
    case Specials::Ieee:
      return ((exponent_ones - 1) << mantissa_bits) | mantissa_ones;
    case Specials::Fn:
      return (exponent_ones << mantissa_bits) | (mantissa_ones - 1);
    case Specials::ExponentOnly:
      return exponent_ones - 1;
    case Specials::Fnuz:
    case Specials::None:
      break;
  }
  return (exponent_ones << mantissa_bits) | mantissa_ones;
}

inline uint32_t MiniFloatFormat::nan_code() const {
  const uint32_t exponent_ones = (1u << exponent_bits) - 1,
                 mantissa_ones = (1u << mantissa_bits) - 1;
  switch (specials) {
    case Specials::Ieee:
    case Specials::Fn:
    case Specials::ExponentOnly:
      return (exponent_ones << mantissa_bits) | mantissa_ones;
    case Specials::Fnuz:
    case Specials::None:
      break;
  }
  return 1u << (exponent_bits + mantissa_bits);
}

// The value of an E8M0 code: 2^(code - 127), or NaN for 255.
inline double e8m0_decode(uint32_t code) {
  code &= 0xFF;
  return code == 0xFF ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, int(code) - 127);
}

// How a value's exponent is rounded into E8M0 (ONNX Cast's round_mode).
enum class E8M0Rounding { Up, Down, Nearest };

// The E8M0 code of a value, as ONNX's Cast computes it: from the value rounded to float32,
// its sign ignored, the exponent field kept when the mantissa is 0 (zero and float32
// subnormals have field 0), otherwise rounded: Up adds one, Down keeps it, Nearest adds one
// when the mantissa is at least one half (and, for a subnormal, more than one half).
// Infinity and NaN give 255 (NaN); so does rounding up past 2^127 unless saturating.
inline uint32_t e8m0_encode(double value, bool saturate, E8M0Rounding rounding) {
  const float narrowed = static_cast<float>(value);
  uint32_t bits;
  static_assert(sizeof bits == sizeof narrowed);
  std::memcpy(&bits, &narrowed, sizeof bits);
  const uint32_t field = (bits >> 23) & 0xFF, mantissa = bits & 0x7FFFFF;
  if (field == 0xFF) return 0xFF;
  bool round_up = false;
  switch (rounding) {
    case E8M0Rounding::Up:
      round_up = mantissa != 0;
      break;
    case E8M0Rounding::Down:
      break;
    case E8M0Rounding::Nearest:
      round_up = (mantissa & 0x400000) != 0 && (field > 0 || (mantissa & 0x3FFFFF) != 0);
      break;
  }
  if (round_up && field == 0xFE && saturate) round_up = false;
  return field + (round_up ? 1 : 0);
}

// The value of a code (its low total_bits() bits).
inline double minifloat_decode(uint32_t code, MiniFloatFormat f) {
  if (f.specials == MiniFloatFormat::Specials::ExponentOnly) return e8m0_decode(code);
  const int m = f.mantissa_bits, e = f.exponent_bits;
  const uint32_t sign_bit = 1u << (e + m);
  code &= (sign_bit << 1) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.specials == MiniFloatFormat::Specials::Fnuz && code == sign_bit) return nan;
  const bool negative = (code & sign_bit) != 0;
  const uint32_t exponent = (code >> m) & ((1u << e) - 1), mantissa = code & ((1u << m) - 1);
  const uint32_t exponent_ones = (1u << e) - 1;
  double magnitude;
  if (f.specials == MiniFloatFormat::Specials::Ieee && exponent == exponent_ones) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : nan;
  } else if (f.specials == MiniFloatFormat::Specials::Fn && exponent == exponent_ones &&
             mantissa == (1u << m) - 1) {
    magnitude = nan;
  } else if (exponent == 0) {
    magnitude = std::ldexp(double(mantissa), 1 - f.bias - m);
  } else {
    magnitude = std::ldexp(double((1u << m) | mantissa), int(exponent) - f.bias - m);
  }
  return negative ? -magnitude : magnitude;
}

// Where rounding leaves the finite range: magnitudes above `threshold` (halfway from the
// largest finite value to the next step), and `threshold` itself when `inclusive` (that tie
// rounds to even away from the largest value, whose mantissa is odd).
struct MiniFloatOverflow {
  double threshold;
  bool inclusive;
};
inline MiniFloatOverflow minifloat_overflow(MiniFloatFormat f) {
  // E8M0 rounds up: everything above its largest value leaves the range.
  if (f.specials == MiniFloatFormat::Specials::ExponentOnly)
    return {minifloat_decode(f.max_finite_code(), f), false};
  const uint32_t max_code = f.max_finite_code();
  const double max_value = minifloat_decode(max_code, f);
  int exponent = 0;
  std::frexp(max_value, &exponent);  // max_value in [2^(exponent - 1), 2^exponent)
  const double half_step = std::ldexp(1.0, exponent - 1 - f.mantissa_bits - 1);
  return {max_value + half_step, (max_code & 1) != 0};
}

// The code nearest to a value (ties to even; E8M0 rounds up); see the file comment for
// out-of-range values.
inline uint32_t minifloat_encode(double value, MiniFloatFormat f, bool saturate) {
  if (f.specials == MiniFloatFormat::Specials::ExponentOnly)
    return e8m0_encode(value, saturate, E8M0Rounding::Up);
  const int m = f.mantissa_bits;
  const uint32_t sign_bit = 1u << (f.exponent_bits + m);
  if (std::isnan(value)) return f.nan_code();
  const uint32_t sign = std::signbit(value) ? sign_bit : 0;
  // FNUZ has no negative zero; a result that rounds to zero is +0.
  auto with_sign = [&](uint32_t magnitude_code) {
    if (magnitude_code == 0 && f.specials == MiniFloatFormat::Specials::Fnuz) return 0u;
    return sign | magnitude_code;
  };
  auto overflow = [&]() {
    if (saturate || f.specials == MiniFloatFormat::Specials::None)
      return with_sign(f.max_finite_code());
    if (f.specials == MiniFloatFormat::Specials::Ieee)
      return sign | (((1u << f.exponent_bits) - 1) << m);  // infinity
    return f.nan_code();
  };
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return overflow();
  if (magnitude == 0) return with_sign(0);
  int exponent;
  std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
  // The exponent of the value's leading bit, no lower than the smallest normal's (below it the
  // spacing of subnormals is that of the smallest binade).
  const int lead = std::max(exponent - 1, 1 - f.bias);
  // Steps of the grid at that binade; exact, since scaling by a power of two is.
  const double steps = std::ldexp(magnitude, m - lead);
  double rounded = std::nearbyint(steps);  // the default rounding mode: ties to even
  uint32_t code;
  if (lead == 1 - f.bias) {
    // Subnormals and the smallest binade: the step count is the code itself (a count of 2^m
    // is exponent field 1, mantissa 0).
    code = uint32_t(rounded);
  } else {
    int field = lead + f.bias;
    if (rounded >= std::ldexp(1.0, m + 1)) {  // rounded up into the next binade
      rounded /= 2;
      ++field;
    }
    if (field >= (1 << f.exponent_bits)) return overflow();
    code = (uint32_t(field) << m) | (uint32_t(rounded) - (1u << m));
  }
  if (code > f.max_finite_code()) return overflow();
  return with_sign(code);
}

}  // namespace anvil
