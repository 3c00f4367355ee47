// qnn.quantize and qnn.dequantize compiled and run against their reference
// kernels, bit-exact, over a grid of shapes, integer types, granularities and
// scales (including values that land exactly halfway between two integers).
#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "anvil/topi/topi.h"
#include "topi/topi_test_util.h"

namespace anvil {
namespace {

using topi_test::attrs;
using topi_test::check_op;
using topi_test::random_tensor;

const topi_test::Tolerance kExact{0, 0};

// A scale tensor of the shape with values in [0.01, 0.1], or halves so that x / scale hits .5.
Tensor scale_of(std::vector<int64_t> shape, uint64_t seed, DataType dtype = DataType::float32()) {
  return random_tensor(std::move(shape), dtype, seed, 0.01, 0.1);
}

struct Granularity {
  const char* name;
  std::vector<int64_t> scale_shape;
  int64_t axis, block_size;
};

TEST(QnnCompute, QuantizeMatchesTheReferenceBitExact) {
  const std::vector<int64_t> shape = {2, 6, 5};
  const Granularity grains[] = {{"per tensor", {}, 1, 0},
                                {"one-element vector", {1}, 1, 0},
                                {"per axis 1", {6}, 1, 0},
                                {"per axis -1", {5}, -1, 0},
                                {"blocks of 4 on axis 1", {2, 2, 5}, 1, 4},
                                {"blocks of 2 on axis 2", {2, 6, 3}, 2, 2}};
  const DataType types[] = {DataType::uint8(), DataType::int8(), DataType::uint16(),
                            DataType::int16()};
  uint64_t seed = 1;
  for (const Granularity& g : grains) {
    for (DataType t : types) {
      SCOPED_TRACE(std::string(g.name) + " to " + t.to_string());
      // Values up to 30 over scales down to 0.01 saturate the 8-bit types at both ends.
      Tensor x = random_tensor(shape, DataType::float32(), ++seed, -30, 30);
      Tensor zp = random_tensor(g.scale_shape, t, ++seed, t.is_int() ? -20 : 0, 40);
      check_op("qnn.quantize", {x, scale_of(g.scale_shape, ++seed), zp},
               attrs("qnn.quantize", {{"axis", g.axis}, {"block_size", g.block_size}}), kExact);
    }
  }
}

TEST(QnnCompute, QuantizeSaturatesSpecialValuesAsTheReference) {
  // NaN (to 0, not to the zero point or the lowest value), infinities, values whose rounding
  // past 2^24 is inexact, and values exactly at and just past each type's bounds once
  // shifted by the zero point.
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, 3e9,     -3e9,  16777217.0,
                             -16777219.0,  1e30,     -1e30,     127.5,   128.5, -128.5,
                             -129.5,       255.5,    256.5,     -0.5,    -0.0,  65535.5,
                             32767.5,      -32768.5, 65536.5,   -1.4e-45};
  const int64_t n = int64_t(std::size(specials));
  Tensor x = Tensor::zeros({4, n}, DataType::float32());
  for (int64_t row = 0; row < 4; ++row)
    for (int64_t k = 0; k < n; ++k) x.set_from_double(row * n + k, specials[k] * (row + 1) / 2);
  for (DataType t : {DataType::uint8(), DataType::int8(), DataType::uint16(), DataType::int16()}) {
    for (int64_t zp : {int64_t(0), int64_t(3), int64_t(t.is_int() ? -7 : 200)}) {
      SCOPED_TRACE(t.to_string() + " zero point " + std::to_string(zp));
      Tensor scale = Tensor::zeros({}, DataType::float32()), zero = Tensor::zeros({}, t);
      scale.set_from_double(0, 0.5);
      zero.set_from_double(0, double(zp));
      check_op("qnn.quantize", {x, scale, zero}, nullptr, kExact);
      // Per row: a zero point and scale per slice of axis 0.
      Tensor zeros = random_tensor({4}, t, uint64_t(zp + 50), t.is_int() ? -20 : 0, 40);
      check_op("qnn.quantize", {x, scale_of({4}, uint64_t(zp + 60)), zeros},
               attrs("qnn.quantize", {{"axis", int64_t(0)}}), kExact);
    }
  }
}

TEST(QnnCompute, QuantizeRoundsHalvesToEven) {
  // x = k / 4 over a scale of 0.5: every other value is exactly halfway.
  Tensor x = Tensor::zeros({41}, DataType::float32());
  for (int64_t k = 0; k < 41; ++k) x.set_from_double(k, double(k - 20) / 4);
  Tensor scale = Tensor::zeros({}, DataType::float32());
  scale.set_from_double(0, 0.5);
  check_op("qnn.quantize", {x, scale, Tensor::zeros({}, DataType::int8())}, nullptr, kExact);
  Tensor x64 = random_tensor({3, 7}, DataType::float64(), 9, -5, 5);
  check_op("qnn.quantize",
           {x64, scale_of({7}, 10), random_tensor({7}, DataType::uint8(), 11, 0, 9)},
           attrs("qnn.quantize", {{"axis", int64_t(1)}}), kExact);
}

TEST(QnnCompute, DequantizeMatchesTheReferenceBitExact) {
  const DataType types[] = {DataType::uint8(), DataType::int8(), DataType::uint16(),
                            DataType::int16(), DataType::int32()};
  uint64_t seed = 100;
  for (DataType t : types) {
    SCOPED_TRACE(t.to_string());
    double lo = t.is_int() ? -100 : 0, hi = 200;
    Tensor x = random_tensor({3, 4, 5}, t, ++seed, lo, hi);
    Tensor zero =
        t == DataType::int32() ? Tensor::zeros({4}, t) : random_tensor({4}, t, ++seed, lo, 50);
    check_op("qnn.dequantize", {x, scale_of({4}, ++seed), zero},
             attrs("qnn.dequantize", {{"axis", int64_t(1)}}), kExact);
    check_op("qnn.dequantize", {x, scale_of({}, ++seed, DataType::float16()), Tensor::zeros({}, t)},
             nullptr, kExact);
    check_op("qnn.dequantize", {x, scale_of({3, 4, 3}, ++seed), Tensor::zeros({3, 4, 3}, t)},
             attrs("qnn.dequantize", {{"axis", int64_t(2)}, {"block_size", int64_t(2)}}), kExact);
  }
}

TEST(QnnCompute, AddAndMulMatchTheReferenceBitExact) {
  struct Params {
    double ls, rs, os;
    int64_t lz, rz, oz;
  } params[] = {{0.05, 0.03, 0.07, 128, 100, 90},
                {0.04627375, 0.04824121, 0.03351506, 135, 121, 0},
                {0.5, 0.001, 0.02, 0, 255, 255}};
  uint64_t seed = 200;
  for (const char* op : {"qnn.add", "qnn.mul"}) {
    for (DataType t : {DataType::uint8(), DataType::int8()}) {
      for (const Params& p : params) {
        auto zp = [&](int64_t z) { return t.is_int() ? z - 128 : z; };
        ir::Attrs a = attrs(op, {{"lhs_scale", p.ls},
                                 {"lhs_zero_point", zp(p.lz)},
                                 {"rhs_scale", p.rs},
                                 {"rhs_zero_point", zp(p.rz)},
                                 {"out_scale", p.os},
                                 {"out_zero_point", zp(p.oz)}});
        double lo = t.is_int() ? -128 : 0, hi = t.is_int() ? 127 : 255;
        check_op(op,
                 {random_tensor({2, 3, 7, 5}, t, ++seed, lo, hi),
                  random_tensor({2, 3, 7, 5}, t, ++seed, lo, hi)},
                 a, kExact);
        // Broadcasting: one value per channel against the whole tensor.
        check_op(op,
                 {random_tensor({1, 3, 1, 1}, t, ++seed, lo, hi),
                  random_tensor({2, 3, 4, 4}, t, ++seed, lo, hi)},
                 a, kExact);
      }
    }
  }
}

// Dequantize -> float op -> quantize, the form a QDQ model's unrewritten ops take, as one
// fused group.
TEST(QnnCompute, FusedDequantizeAddQuantizeMatchesTheReference) {
  topi_test::check_group(R"(fn (%a: Tensor[(1, 8, 5, 5), uint8], %b: Tensor[(1, 8, 5, 5), uint8]) {
    %0 = qnn.dequantize(%a, 0.05f, 128u8);
    %1 = qnn.dequantize(%b, 0.02f, 120u8);
    %2 = add(%0, %1);
    %3 = nn.relu(%2);
    qnn.quantize(%3, 0.04f, 0u8)
  })",
                         {}, kExact);
}

}  // namespace
}  // namespace anvil
