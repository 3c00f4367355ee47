// The narrow float formats against the values ONNX's specification lists for them, and every
// encoding against a brute-force search of the nearest code.
#include "anvil/support/minifloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace anvil {
namespace {

using F = MiniFloatFormat;

TEST(MiniFloat, LandmarksOfEachFormat) {
  // (format, 1.0's code, largest finite, its code, smallest subnormal)
  struct Case {
    F format;
    uint32_t one;
    double max;
    uint32_t max_code;
    double tiny;
  };
  for (const Case& c : {Case{F::e4m3fn(), 0x38, 448, 0x7E, std::ldexp(1.0, -9)},
                        Case{F::e4m3fnuz(), 0x40, 240, 0x7F, std::ldexp(1.0, -10)},
                        Case{F::e5m2(), 0x3C, 57344, 0x7B, std::ldexp(1.0, -16)},
                        Case{F::e5m2fnuz(), 0x40, 57344, 0x7F, std::ldexp(1.0, -17)},
                        Case{F::e2m1(), 0x2, 6, 0x7, 0.5}}) {
    EXPECT_EQ(minifloat_encode(1.0, c.format, false), c.one);
    EXPECT_EQ(minifloat_decode(c.one, c.format), 1.0);
    EXPECT_EQ(c.format.max_finite_code(), c.max_code);
    EXPECT_EQ(minifloat_decode(c.max_code, c.format), c.max);
    EXPECT_EQ(minifloat_decode(1, c.format), c.tiny);
    uint32_t sign = 1u << (c.format.total_bits() - 1);
    EXPECT_EQ(minifloat_encode(-c.max, c.format, false), sign | c.max_code);
  }
  // E2M1's eight magnitudes.
  const double e2m1[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t code = 0; code < 8; ++code)
    EXPECT_EQ(minifloat_decode(code, F::e2m1()), e2m1[code]);
}

TEST(MiniFloat, SpecialsAndSaturation) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(std::isnan(minifloat_decode(0x7F, F::e4m3fn())));
  EXPECT_TRUE(std::isnan(minifloat_decode(0xFF, F::e4m3fn())));
  EXPECT_TRUE(std::isnan(minifloat_decode(0x80, F::e4m3fnuz())));
  EXPECT_EQ(minifloat_decode(0x7C, F::e5m2()), inf);
  EXPECT_EQ(minifloat_decode(0xFC, F::e5m2()), -inf);
  EXPECT_TRUE(std::isnan(minifloat_decode(0x7D, F::e5m2())));
  // E2M1 has no NaN: NaN converts to -0, as ml_dtypes converts it.
  EXPECT_EQ(minifloat_encode(std::nan(""), F::e2m1(), true), 0x8u);
  EXPECT_EQ(minifloat_decode(0x8, F::e2m1()), 0.0);
  EXPECT_TRUE(std::signbit(minifloat_decode(0x8, F::e2m1())));
  // FNUZ has no negative zero.
  EXPECT_EQ(minifloat_encode(-0.0, F::e4m3fnuz(), false), 0u);
  EXPECT_EQ(minifloat_encode(-0.0, F::e4m3fn(), false), 0x80u);
  // Out of range: the largest finite when saturating; else infinity (E5M2) or NaN.
  EXPECT_EQ(minifloat_encode(1e6, F::e4m3fn(), true), 0x7Eu);
  EXPECT_EQ(minifloat_encode(1e6, F::e4m3fn(), false), 0x7Fu);
  EXPECT_EQ(minifloat_encode(-inf, F::e4m3fn(), true), 0xFEu);
  EXPECT_EQ(minifloat_encode(1e6, F::e5m2(), false), 0x7Cu);
  EXPECT_EQ(minifloat_encode(1e6, F::e5m2(), true), 0x7Bu);
  EXPECT_EQ(minifloat_encode(1e6, F::e5m2fnuz(), false), 0x80u);
  // 464 is halfway between 448 (mantissa 110) and 480 (beyond the range): ties to even, 448.
  EXPECT_EQ(minifloat_encode(464, F::e4m3fn(), false), 0x7Eu);
  EXPECT_EQ(minifloat_encode(465, F::e4m3fn(), false), 0x7Fu);
  EXPECT_EQ(minifloat_encode(465, F::e4m3fn(), true), 0x7Eu);
}

// Every non-NaN code round-trips, and a value encodes to the code of the nearest decoded
// value, ties to the even code (found by searching every code).
TEST(MiniFloat, EncodingIsNearestTiesToEven) {
  std::mt19937 rng(7);
  for (F f : {F::e4m3fn(), F::e4m3fnuz(), F::e5m2(), F::e5m2fnuz(), F::e2m1()}) {
    const uint32_t codes = 1u << f.total_bits();
    for (uint32_t code = 0; code < codes; ++code) {
      double v = minifloat_decode(code, f);
      if (!std::isnan(v) && !std::isinf(v)) {
        EXPECT_EQ(minifloat_encode(v, f, false), code);
      }
    }
    const double max = minifloat_decode(f.max_finite_code(), f);
    std::uniform_real_distribution<double> log_scale(-20, std::log2(max));
    for (int i = 0; i < 4000; ++i) {
      double v = std::exp2(log_scale(rng)) * (i % 2 ? -1 : 1);
      uint32_t best = 0;
      double best_distance = std::numeric_limits<double>::infinity();
      for (uint32_t code = 0; code < codes; ++code) {
        double d = minifloat_decode(code, f);
        if (std::isnan(d) || std::isinf(d) || (std::signbit(d) != std::signbit(v) && d != 0))
          continue;
        double distance = std::fabs(d - v);
        bool tie_to_even = distance == best_distance && (code & 1) == 0;
        if (distance < best_distance || tie_to_even) {
          best = code;
          best_distance = distance;
        }
      }
      double got = minifloat_decode(minifloat_encode(v, f, false), f);
      EXPECT_EQ(got, minifloat_decode(best, f)) << v;
    }
  }
}

}  // namespace
}  // namespace anvil
