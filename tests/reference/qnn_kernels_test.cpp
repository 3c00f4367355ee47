// Reference kernels of qnn.quantize and qnn.dequantize on hand-computed values:
// rounding half to even, saturation at both ends of each integer type, and
// per-tensor, per-axis and blocked parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tensor_kernel_test_util.h"

namespace anvil::reference {
namespace {

using testing::ints_of;
using testing::make_ints;
using testing::make_tensor;
using testing::run1;
using testing::values_of;

const DataType f32 = DataType::float32();

Tensor scalar(double v, DataType dtype = f32) { return make_tensor({}, {v}, dtype); }
Tensor scalar_int(int64_t v, DataType dtype) { return make_ints({}, {v}, dtype); }

TEST(QuantizeKernel, RoundsHalfToEvenThenAddsTheZeroPoint) {
  // x / 0.5: 1, 2.5 -> 2, 3.5 -> 4, -2.5 -> -2, 0.75 -> 0.5... halves of 0.5 steps.
  Tensor x = make_tensor({6}, {0.5, 1.25, 1.75, -1.25, 0.25, 0.75});
  Tensor q = run1("qnn.quantize", {x, scalar(0.5), scalar_int(10, DataType::uint8())});
  EXPECT_EQ(ints_of(q), (std::vector<int64_t>{11, 12, 14, 8, 10, 12}));
  EXPECT_EQ(q.dtype(), DataType::uint8());
}

TEST(QuantizeKernel, SaturatesIntoEachIntegerType) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = make_tensor({5}, {-1e9, -129, 200, 1e9, nan});
  EXPECT_EQ(ints_of(run1("qnn.quantize", {x, scalar(1), scalar_int(0, DataType::int8())})),
            (std::vector<int64_t>{-128, -128, 127, 127, 0}));
  EXPECT_EQ(ints_of(run1("qnn.quantize", {x, scalar(1), scalar_int(0, DataType::uint8())})),
            (std::vector<int64_t>{0, 0, 200, 255, 0}));
  EXPECT_EQ(ints_of(run1("qnn.quantize", {x, scalar(1), scalar_int(5, DataType::int16())})),
            (std::vector<int64_t>{-32768, -124, 205, 32767, 0}));
  EXPECT_EQ(ints_of(run1("qnn.quantize", {x, scalar(1), scalar_int(0, DataType::uint16())})),
            (std::vector<int64_t>{0, 0, 200, 65535, 0}));
}

TEST(QuantizeKernel, DividesInFloat32AsOnnxDoes) {
  // 0.3 / 0.1 is 3.0000000000000004 in double but 2.9999998f / 0.1f rounds to 3 in float:
  // either way 3; 0.35 / 0.1 is 3.4999999999999996 in double (rounds to 3) and exactly 3.5f in
  // float32 (rounds half to even: 4).
  Tensor x = make_tensor({1}, {0.35});
  EXPECT_EQ(ints_of(run1("qnn.quantize", {x, scalar(0.1), scalar_int(0, DataType::int8())})),
            (std::vector<int64_t>{float(0.35) / float(0.1) == 3.5f ? 4 : 3}));
}

TEST(QuantizeKernel, PerAxisAndBlockedParameters) {
  Tensor x = make_tensor({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Per axis 0: row scales 1 and 2, zero points 0 and 100.
  Tensor per_row = run1("qnn.quantize",
                        {x, make_tensor({2}, {1, 2}), make_ints({2}, {0, 100}, DataType::uint8())},
                        {{"axis", int64_t(0)}});
  EXPECT_EQ(ints_of(per_row), (std::vector<int64_t>{1, 2, 3, 4, 102, 103, 104, 104}));
  // Blocks of 2 along axis 1: scale (2, 2).
  Tensor blocked = run1(
      "qnn.quantize",
      {x, make_tensor({2, 2}, {1, 2, 4, 8}), make_ints({2, 2}, {0, 0, 0, 1}, DataType::int8())},
      {{"axis", int64_t(1)}, {"block_size", int64_t(2)}});
  EXPECT_EQ(ints_of(blocked), (std::vector<int64_t>{1, 2, 2, 2, 1, 2, 2, 2}));
}

TEST(DequantizeKernel, SubtractsTheZeroPointThenScales) {
  Tensor q = make_ints({4}, {0, 128, 255, 3}, DataType::uint8());
  EXPECT_EQ(values_of(run1("qnn.dequantize", {q, scalar(0.5), scalar_int(128, DataType::uint8())})),
            (std::vector<double>{-64, 0, 63.5, -62.5}));
  Tensor s = make_ints({2, 2}, {-128, 127, 5, -5}, DataType::int8());
  Tensor per_column = run1(
      "qnn.dequantize", {s, make_tensor({2}, {0.25, 2}), make_ints({2}, {0, -1}, DataType::int8())},
      {{"axis", int64_t(1)}});
  EXPECT_EQ(values_of(per_column), (std::vector<double>{-32, 256, 1.25, -8}));
  Tensor acc = make_ints({2}, {-1000000, 7}, DataType::int32());
  EXPECT_EQ(values_of(run1("qnn.dequantize", {acc, scalar(0.5), scalar_int(0, DataType::int32())})),
            (std::vector<double>{-500000, 3.5}));
}

TEST(DequantizeKernel, BlockedAndHalfPrecisionScale) {
  Tensor q = make_ints({1, 3}, {2, 4, 6}, DataType::int16());
  Tensor y = run1("qnn.dequantize",
                  {q, make_tensor({1, 2}, {0.5, 3}, DataType::float16()),
                   make_ints({1, 2}, {0, 1}, DataType::int16())},
                  {{"axis", int64_t(1)}, {"block_size", int64_t(2)}});
  EXPECT_EQ(y.dtype(), DataType::float16());
  EXPECT_EQ(values_of(y), (std::vector<double>{1, 2, 15}));
}

TEST(QnnAddKernel, RescalesEachInputIntoTheOutputsUnits) {
  // (a - 10) * 0.5 + (b - 20) * 0.25 in units of 0.5 around 5: a = 12, b = 24 gives
  // (1 + 1) / 0.5 + 5 = 9; a = 0, b = 0 gives (-5 - 5) / 0.5 + 5 = -15, saturating to 0.
  Tensor a = make_ints({3}, {12, 0, 255}, DataType::uint8());
  Tensor b = make_ints({3}, {24, 0, 255}, DataType::uint8());
  Tensor y = run1("qnn.add", {a, b},
                  {{"lhs_scale", 0.5},
                   {"lhs_zero_point", int64_t(10)},
                   {"rhs_scale", 0.25},
                   {"rhs_zero_point", int64_t(20)},
                   {"out_scale", 0.5},
                   {"out_zero_point", int64_t(5)}});
  EXPECT_EQ(ints_of(y), (std::vector<int64_t>{9, 0, 255}));
}

TEST(QnnAddKernel, RejectsZeroPointsOutsideTheType) {
  Tensor a = make_ints({1}, {1}, DataType::int8());
  EXPECT_TRUE(testing::fails_with("qnn.add", {a, a}, {{"out_zero_point", int64_t(200)}},
                                  "outside int8's range"));
  EXPECT_TRUE(testing::fails_with("qnn.add", {a, a}, {{"out_scale", 0.0}}, "positive"));
}

}  // namespace
}  // namespace anvil::reference
