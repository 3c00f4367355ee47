// Conversions between float and the 16-bit float formats (IEEE half, bfloat16).
#pragma once

#include <bit>
#include <cstdint>

namespace anvil {

// IEEE 754 binary16 to float, exact for every input including subnormals and NaN.
inline float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalize into a float.
    int shift = std::countl_zero(mantissa) - 21;
    mantissa = (mantissa << shift) & 0x3ff;
    bits = sign | (uint32_t(113 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(bits);
}

// float to IEEE binary16, rounding to nearest even; overflow gives infinity.
inline uint16_t float_to_half(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t abs = bits & 0x7fffffff;
  if (abs >= 0x7f800000u) return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds past the largest half
  if (abs < 0x38800000u) {
    // Result is subnormal or zero: scale so the half's subnormal step is one ulp.
    float scaled = std::bit_cast<float>(abs) * 16777216.0f;  // 2^24
    uint32_t q = uint32_t(scaled);
    float rem = scaled - float(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1))) ++q;
    return sign | uint16_t(q);
  }
  uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return sign | uint16_t((rounded - 0x38000000u) >> 13);
}

// bfloat16 to float: the top half of the float's bits.
inline float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

// float to bfloat16, rounding to nearest even and keeping NaN a NaN.
inline uint16_t float_to_bfloat16(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

}  // namespace anvil
