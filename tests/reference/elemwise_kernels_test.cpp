// Reference kernels of the elementwise family and cast: the semantics that
// are easy to get wrong (rounding, integer division and remainders, wrap-
// around, NaN, unsigned 64-bit values, casts that must round only once).
// Expected values are worked out by hand in the comments, or were printed by
// numpy where noted.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "anvil/ir/attrs/transform.h"
#include "anvil/support/minifloat.h"
#include "tensor_kernel_test_util.h"

namespace anvil::reference {
namespace {

using testing::ints_of;
using testing::make_ints;
using testing::make_tensor;
using testing::run1;
using testing::values_of;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

Tensor floats(const std::vector<double>& values, DataType dtype = DataType::float32()) {
  return make_tensor({int64_t(values.size())}, values, dtype);
}
Tensor integers(const std::vector<int64_t>& values, DataType dtype = DataType::int64()) {
  return make_ints({int64_t(values.size())}, values, dtype);
}
Tensor cast(const Tensor& x, DataType to) { return run1("cast", {x}, {{"dtype", to}}); }

TEST(ElemwiseKernels, RoundTakesHalvesToEven) {
  Tensor out = run1("round", {floats({0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4, -2.6})});
  EXPECT_EQ(values_of(out), (std::vector<double>{0, 2, 2, -0.0, -2, -2, 2, -3}));
}

TEST(ElemwiseKernels, IntegerDivisionTruncatesTowardZero) {
  Tensor x = integers({7, -7, 7, -7, 5}, DataType::int32());
  Tensor y = integers({2, 2, -2, -2, 0}, DataType::int32());
  Tensor out = run1("divide", {x, y});
  EXPECT_EQ(out.dtype(), DataType::int32());
  // 7/2 = 3.5 -> 3, -7/2 -> -3, 7/-2 -> -3, -7/-2 -> 3; a zero divisor gives 0 as in numpy.
  EXPECT_EQ(ints_of(out), (std::vector<int64_t>{3, -3, -3, 3, 0}));
}

TEST(ElemwiseKernels, MostNegativeDividedByMinusOneWraps) {
  Tensor out = run1("divide", {integers({kInt64Min}), integers({-1})});
  EXPECT_EQ(ints_of(out), (std::vector<int64_t>{kInt64Min}));
}

TEST(ElemwiseKernels, IntegerRemaindersFollowDividendOrDivisor) {
  Tensor x = integers({5, -5, 5, -5});
  Tensor y = integers({3, 3, -3, -3});
  // C fmod takes the dividend's sign: 5 = 1*3 + 2, -5 = -1*3 - 2.
  EXPECT_EQ(ints_of(run1("mod", {x, y})), (std::vector<int64_t>{2, -2, 2, -2}));
  // Python's % takes the divisor's sign: -5 = -2*3 + 1, 5 = -2*-3 - 1.
  EXPECT_EQ(ints_of(run1("floor_mod", {x, y})), (std::vector<int64_t>{2, 1, -1, -2}));
  // floor(-5 / 3) = -2, floor(5 / -3) = -2.
  EXPECT_EQ(ints_of(run1("floor_divide", {x, y})), (std::vector<int64_t>{1, -2, -2, 1}));
}

TEST(ElemwiseKernels, FloatRemainders) {
  Tensor x = floats({5.5, -5.5, 1.0});
  Tensor y = floats({2, 2, 0});
  Tensor fmod = run1("mod", {x, y});
  EXPECT_EQ(values_of(fmod)[0], 1.5);
  EXPECT_EQ(values_of(fmod)[1], -1.5);
  EXPECT_TRUE(std::isnan(values_of(fmod)[2]));
  // -5.5 = -3 * 2 + 0.5.
  Tensor floor_mod = run1("floor_mod", {x, y});
  EXPECT_EQ(values_of(floor_mod)[0], 1.5);
  EXPECT_EQ(values_of(floor_mod)[1], 0.5);
}

TEST(ElemwiseKernels, MaximumAndMinimumPropagateNaN) {
  Tensor x = floats({1, kNaN, 5});
  Tensor y = floats({kNaN, 2, 3});
  std::vector<double> max = values_of(run1("maximum", {x, y}));
  std::vector<double> min = values_of(run1("minimum", {x, y}));
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]));
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], 5);
  EXPECT_EQ(min[2], 3);
}

TEST(ElemwiseKernels, IntegerArithmeticWrapsAtTheDtypeWidth) {
  EXPECT_EQ(ints_of(run1("add", {integers({kInt64Max}), integers({1})})),
            (std::vector<int64_t>{kInt64Min}));
  EXPECT_EQ(
      ints_of(run1("add", {integers({127}, DataType::int8()), integers({1}, DataType::int8())})),
      (std::vector<int64_t>{-128}));
  // 200 * 2 = 400 = 256 + 144.
  EXPECT_EQ(ints_of(run1("multiply",
                         {integers({200}, DataType::uint8()), integers({2}, DataType::uint8())})),
            (std::vector<int64_t>{144}));
  // abs and negation of the most negative int8 wrap back to it, as numpy's do.
  EXPECT_EQ(ints_of(run1("abs", {integers({-128, -3}, DataType::int8())})),
            (std::vector<int64_t>{-128, 3}));
}

TEST(ElemwiseKernels, Uint64ValuesAboveInt64AreUnsigned) {
  // 2^63 + 5 and 2^64 - 1 as bit patterns.
  Tensor x = integers({kInt64Min + 5, -1}, DataType::uint64());
  Tensor one = integers({1, 1}, DataType::uint64());
  Tensor two = integers({2, 2}, DataType::uint64());
  EXPECT_EQ(ints_of(run1("greater", {x, one})), (std::vector<int64_t>{1, 1}));
  // (2^63 + 5) / 2 = 2^62 + 2; (2^64 - 1) / 2 = 2^63 - 1.
  EXPECT_EQ(ints_of(run1("divide", {x, two})),
            (std::vector<int64_t>{(int64_t(1) << 62) + 2, kInt64Max}));
  // A logical shift brings the top bit down to bit 0.
  Tensor sixty_three = integers({63, 63}, DataType::uint64());
  EXPECT_EQ(ints_of(run1("right_shift", {x, sixty_three})), (std::vector<int64_t>{1, 1}));
}

TEST(ElemwiseKernels, IntegerPower) {
  Tensor base = integers({3, 2, -1, -1, 2});
  Tensor exponent = integers({4, -1, -3, 2, 62});
  // 3^4 = 81; 2^-1 = 0.5 truncates to 0; (-1)^-3 = -1; (-1)^2 = 1; 2^62 exactly.
  EXPECT_EQ(ints_of(run1("power", {base, exponent})),
            (std::vector<int64_t>{81, 0, -1, 1, int64_t(1) << 62}));
  // 2^31 wraps to the most negative int32.
  EXPECT_EQ(
      ints_of(run1("power", {integers({2}, DataType::int32()), integers({31}, DataType::int32())})),
      (std::vector<int64_t>{std::numeric_limits<int32_t>::min()}));
}

TEST(ElemwiseKernels, ShiftsAtTheDtypeWidth) {
  Tensor one = integers({1, 1, 1}, DataType::uint8());
  Tensor amounts = integers({7, 8, 70}, DataType::uint8());
  // 1 << 7 = 128; 1 << 8 loses its bit in uint8; a shift past 64 clears everything.
  EXPECT_EQ(ints_of(run1("left_shift", {one, amounts})), (std::vector<int64_t>{128, 0, 0}));
  // Signed right shifts are arithmetic: -16 >> 2 = -4, and past the width only the sign is left.
  Tensor negative = integers({-16, -16}, DataType::int8());
  EXPECT_EQ(ints_of(run1("right_shift", {negative, integers({2, 100}, DataType::int8())})),
            (std::vector<int64_t>{-4, -1}));
}

TEST(ElemwiseKernels, BinaryOpsBroadcastNumpyStyle) {
  Tensor x = make_tensor({2, 1}, {10, 20});
  Tensor y = make_tensor({3}, {1, 2, 3});
  Tensor out = run1("subtract", {x, y});
  EXPECT_EQ(out.shape_vector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of(out), (std::vector<double>{9, 8, 7, 19, 18, 17}));
}

TEST(ElemwiseKernels, ComparisonsWithNaNAreFalseExceptNotEqual) {
  Tensor x = floats({kNaN, 1});
  Tensor y = floats({kNaN, 1});
  EXPECT_EQ(ints_of(run1("equal", {x, y})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ints_of(run1("not_equal", {x, y})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints_of(run1("less_equal", {x, y})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(run1("equal", {x, y}).dtype(), DataType::boolean());
}

TEST(ElemwiseKernels, LogicAndBitwiseOps) {
  Tensor t = integers({1, 1, 0, 0}, DataType::boolean());
  Tensor f = integers({1, 0, 1, 0}, DataType::boolean());
  EXPECT_EQ(ints_of(run1("logical_xor", {t, f})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run1("logical_not", {t})), (std::vector<int64_t>{0, 0, 1, 1}));
  // ~5 = -6 in two's complement; in uint8 that is 250.
  EXPECT_EQ(ints_of(run1("bitwise_not", {integers({5}, DataType::int8())})),
            (std::vector<int64_t>{-6}));
  EXPECT_EQ(ints_of(run1("bitwise_not", {integers({5}, DataType::uint8())})),
            (std::vector<int64_t>{250}));
  EXPECT_EQ(ints_of(run1("bitwise_not", {t})), (std::vector<int64_t>{0, 0, 1, 1}));
  // 0b1100 & 0b1010 = 0b1000, | = 0b1110, ^ = 0b0110.
  Tensor a = integers({12}, DataType::int16());
  Tensor b = integers({10}, DataType::int16());
  EXPECT_EQ(ints_of(run1("bitwise_and", {a, b}))[0], 8);
  EXPECT_EQ(ints_of(run1("bitwise_or", {a, b}))[0], 14);
  EXPECT_EQ(ints_of(run1("bitwise_xor", {a, b}))[0], 6);
}

TEST(ElemwiseKernels, WhereBroadcastsAndKeepsInt64Exact) {
  int64_t big = (int64_t(1) << 62) + 1;  // not representable as a double
  Tensor cond = make_ints({2, 1}, {1, 0}, DataType::boolean());
  Tensor x = integers({big, big + 1});
  Tensor y = make_ints({}, {-7});
  Tensor out = run1("where", {cond, x, y});
  EXPECT_EQ(out.shape_vector(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ints_of(out), (std::vector<int64_t>{big, big + 1, -7, -7}));
}

TEST(ElemwiseKernels, ClipOfIntegersUsesTheIntegersInsideTheBounds) {
  // The integers in [-1.5, 2.5] are -1 .. 2.
  Tensor out =
      run1("clip", {integers({-3, 0, 3}, DataType::int32())}, {{"a_min", -1.5}, {"a_max", 2.5}});
  EXPECT_EQ(ints_of(out), (std::vector<int64_t>{-1, 0, 2}));
  // Open bounds leave the extremes of int64 untouched.
  EXPECT_EQ(ints_of(run1("clip", {integers({kInt64Min, kInt64Max})})),
            (std::vector<int64_t>{kInt64Min, kInt64Max}));
}

TEST(ElemwiseKernels, ClipOfFloatsKeepsNaN) {
  std::vector<double> out =
      values_of(run1("clip", {floats({-5, 0.25, 5, kNaN})}, {{"a_min", 0.0}, {"a_max", 1.0}}));
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 0.25);
  EXPECT_EQ(out[2], 1);
  EXPECT_TRUE(std::isnan(out[3]));
}

TEST(ElemwiseKernels, FloatPredicates) {
  Tensor x = floats({kNaN, kInf, -kInf, 1});
  EXPECT_EQ(ints_of(run1("isnan", {x})), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(ints_of(run1("isinf", {x})), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(ints_of(run1("isfinite", {x})), (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST(ElemwiseKernels, SigmoidSaturatesWithoutNaN) {
  EXPECT_EQ(values_of(run1("sigmoid", {floats({-1000, 0, 1000})})),
            (std::vector<double>{0, 0.5, 1}));
}

TEST(ElemwiseKernels, FloatSignKeepsNaN) {
  std::vector<double> out = values_of(run1("sign", {floats({-2, 0, 3, kNaN})}));
  EXPECT_EQ(out[0], -1);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 1);
  EXPECT_TRUE(std::isnan(out[3]));
}

// ---------------------------------------------------------------- cast

TEST(CastKernel, FloatToIntegerTruncatesTowardZeroAndSaturates) {
  Tensor x = floats({2.7, -2.7, 0.5, 3e9, -3e9, kNaN}, DataType::float64());
  EXPECT_EQ(ints_of(cast(x, DataType::int32())),
            (std::vector<int64_t>{2, -2, 0, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::min(), 0}));
  EXPECT_EQ(ints_of(cast(floats({-1, 300, 255.9}), DataType::uint8())),
            (std::vector<int64_t>{0, 255, 255}));
}

TEST(CastKernel, IntegerToIntegerKeepsTheLowBits) {
  // The ONNX spec's example: 200 (int16) -> -56 (int8), since 200 - 256 = -56.
  EXPECT_EQ(ints_of(cast(integers({200}, DataType::int16()), DataType::int8())),
            (std::vector<int64_t>{-56}));
  // -1 as uint32 is 2^32 - 1.
  EXPECT_EQ(ints_of(cast(integers({-1}, DataType::int64()), DataType::uint32())),
            (std::vector<int64_t>{4294967295}));
}

TEST(CastKernel, ToAndFromBool) {
  Tensor x = floats({0, -0.0, 0.1, kNaN});
  EXPECT_EQ(ints_of(cast(x, DataType::boolean())), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(ints_of(cast(integers({0, 7, -1}), DataType::boolean())),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(values_of(cast(integers({1, 0}, DataType::boolean()), DataType::float32())),
            (std::vector<double>{1, 0}));
}

TEST(CastKernel, ToFloat8RoundsToNearestEvenAndSaturates) {
  // E4M3FN near 1 has a spacing of 2^-3: 1 + 2^-4 is a tie -> even (1); 1 + 3 * 2^-4 -> 1.25.
  // Past 448 (the largest) it saturates, infinity included; NaN stays NaN.
  Tensor x = floats({1 + 0x1p-4, 1 + 3 * 0x1p-4, 500, -kInf, kNaN, 0x1p-9});
  Tensor y = cast(x, DataType::float8_e4m3fn());
  EXPECT_EQ(y.dtype(), DataType::float8_e4m3fn());
  const auto* codes = static_cast<const uint8_t*>(y.data());
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_EQ(int(codes[i]),
              int(minifloat_encode(x.get_as_double(i), MiniFloatFormat::e4m3fn(), true)))
        << "element " << i;
  std::vector<double> back = values_of(cast(y, DataType::float32()));
  EXPECT_EQ(back[0], 1.0);
  EXPECT_EQ(back[1], 1.25);
  EXPECT_EQ(back[2], 448.0);
  EXPECT_EQ(back[3], -448.0);
  EXPECT_TRUE(std::isnan(back[4]));
  EXPECT_EQ(back[5], 0x1p-9);  // the smallest subnormal
  // Integers go through their exact value; E5M2 keeps infinity as a value of its own.
  EXPECT_EQ(
      values_of(cast(cast(integers({3, -100000}), DataType::float8_e5m2()), DataType::float32())),
      (std::vector<double>{3, -57344}));
}

TEST(CastKernel, FloatToSubByteIntegersTruncatesAndWraps) {
  // As ml_dtypes converts (and ONNX's node tests expect): truncate, keep the low bits.
  EXPECT_EQ(ints_of(cast(floats({-9, 7.9, 8, 15, -1.5}), DataType::int4())),
            (std::vector<int64_t>{7, 7, -8, -1, -1}));
  EXPECT_EQ(ints_of(cast(floats({-1, 16, 3.7}), DataType::uint4())),
            (std::vector<int64_t>{15, 0, 3}));
  EXPECT_EQ(ints_of(cast(floats({-3, 2, 1}), DataType::int2())), (std::vector<int64_t>{1, -2, 1}));
  EXPECT_EQ(ints_of(cast(integers({-8, 7}, DataType::int4()), DataType::int8())),
            (std::vector<int64_t>{-8, 7}));
}

TEST(ReinterpretKernel, KeepsTheBits) {
  auto reinterpret = [](const Tensor& x, DataType to) {
    return run1("reinterpret", {x}, {{"dtype", to}});
  };
  // IEEE 754: 1.0f is 0x3f800000, -2.0f is 0xc0000000.
  EXPECT_EQ(ints_of(reinterpret(floats({1.0, -2.0}), DataType::int32())),
            (std::vector<int64_t>{0x3f800000, int32_t(0xc0000000u)}));
  EXPECT_EQ(values_of(reinterpret(integers({0x3f800000}, DataType::int32()), DataType::float32())),
            (std::vector<double>{1.0}));
  EXPECT_EQ(ints_of(reinterpret(integers({-1, 5}, DataType::int8()), DataType::uint8())),
            (std::vector<int64_t>{255, 5}));
}

TEST(CastKernel, DoubleToFloat16RoundsOnce) {
  // 1 + 2^-11 is halfway between the float16 neighbours 1 and 1 + 2^-10; a
  // hair above it must round up. Through float32 the hair is lost and the
  // tie goes to even (1.0). numpy: np.float16(1 + 2**-11 + 2**-40) == 1.001.
  Tensor x = floats({1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}, DataType::float64());
  EXPECT_EQ(values_of(cast(x, DataType::float16())),
            (std::vector<double>{1 + std::ldexp(1.0, -10)}));
}

TEST(CastKernel, Float16OverflowsToInfinityPastTheRoundingPoint) {
  // The largest float16 is 65504 with a spacing of 32, so 65520 is the
  // halfway point to 65536, which rounds (to even) into overflow.
  Tensor out = cast(floats({65519, 65520, -70000}), DataType::float16());
  EXPECT_EQ(values_of(out), (std::vector<double>{65504, kInf, -kInf}));
}

TEST(CastKernel, FloatToBfloat16RoundsToNearestEven) {
  // bfloat16 keeps 8 significant bits: spacing 2^-7 just above 1.
  // 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> even (1); 1 + 3 * 2^-8 is a
  // tie between 1 + 2^-7 and 1 + 2^-6 -> even (1 + 2^-6). NaN stays NaN.
  Tensor x = floats({1 + std::ldexp(1.0, -8), 1 + 3 * std::ldexp(1.0, -8), kNaN});
  std::vector<double> out = values_of(cast(x, DataType::bfloat16()));
  EXPECT_EQ(out[0], 1.0);
  EXPECT_EQ(out[1], 1 + std::ldexp(1.0, -6));
  EXPECT_TRUE(std::isnan(out[2]));
}

TEST(CastKernel, Int64ToFloat32RoundsOnce) {
  // 2^60 + 2^36 + 1 lies just above the midpoint of the float32 neighbours
  // 2^60 and 2^60 + 2^37, so it rounds up. Through double it first becomes
  // the midpoint 2^60 + 2^36 exactly and then rounds to even (2^60).
  // numpy: int(np.float32(np.int64(2**60 + 2**36 + 1))) == 2**60 + 2**37.
  int64_t x = (int64_t(1) << 60) + (int64_t(1) << 36) + 1;
  Tensor out = cast(integers({x}), DataType::float32());
  EXPECT_EQ(values_of(out), (std::vector<double>{std::ldexp(1.0, 60) + std::ldexp(1.0, 37)}));
}

TEST(CastKernel, Uint64ToFloat64IsUnsigned) {
  // 2^64 - 1 rounds to 2^64 in double (53 bits).
  Tensor out = cast(integers({-1}, DataType::uint64()), DataType::float64());
  EXPECT_EQ(values_of(out), (std::vector<double>{std::ldexp(1.0, 64)}));
}

}  // namespace
}  // namespace anvil::reference
