// Casts to and from float8 / float4 and the sub-byte integers in compiled code (LLVM), scalar
// and vectorized: every code decoded, and encoding checked against the codec of
// anvil/support/minifloat.h (itself checked against the formats' landmarks) on the values where
// rounding is decided: each representable value, each halfway point and its float32
// neighbours, the overflow boundary, infinities, NaN, zeros, subnormals and random bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/support/minifloat.h"
#include "anvil/te/te.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"

namespace anvil {
namespace {

using tir::Var;

constexpr int64_t kLength = 1031;  // odd, so a vectorized loop has a remainder

tir::PrimFunc cast_kernel(const std::string& name, DataType from, DataType to, int lanes) {
  te::Tensor in = te::placeholder({tir::make_int(kLength)}, from, "in");
  te::Tensor out = te::compute(
      {tir::make_int(kLength)}, [&](const std::vector<Var>& i) { return tir::cast(to, in(i[0])); },
      "out");
  tir::Schedule sch(te::create_prim_func({in, out}, name));
  if (lanes > 1) {
    std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block("out"));
    std::vector<tir::LoopRV> parts = sch.split(loops[0], {nullptr, tir::make_int(lanes)});
    sch.vectorize(parts[1]);
  }
  return tir::transform::lower(sch.func());
}

struct Format {
  const char* name;
  DataType dtype;
};
const std::vector<Format> kFormats = {
    {"e4m3fn", DataType::float8_e4m3fn()}, {"e4m3fnuz", DataType::float8_e4m3fnuz()},
    {"e5m2", DataType::float8_e5m2()},     {"e5m2fnuz", DataType::float8_e5m2fnuz()},
    {"e2m1", DataType::float4_e2m1fn()},
};
const std::vector<DataType> kSubByteInts = {DataType::int4(), DataType::uint4(), DataType::int2(),
                                            DataType::uint2()};

const Module& kernels() {
  static Module module = [] {
    std::vector<tir::PrimFunc> funcs;
    DataType f32 = DataType::float32(), f64 = DataType::float64(), f16 = DataType::float16();
    for (const Format& f : kFormats) {
      std::string n = f.name;
      funcs.push_back(cast_kernel("to_" + n, f32, f.dtype, 1));
      funcs.push_back(cast_kernel("to_" + n + "_x8", f32, f.dtype, 8));
      funcs.push_back(cast_kernel("to_" + n + "_from_f64", f64, f.dtype, 1));
      funcs.push_back(cast_kernel("to_" + n + "_from_f16", f16, f.dtype, 1));
      funcs.push_back(cast_kernel("from_" + n, f.dtype, f32, 1));
      funcs.push_back(cast_kernel("from_" + n + "_x16", f.dtype, f32, 16));
      funcs.push_back(cast_kernel("from_" + n + "_to_i32", f.dtype, DataType::int32(), 1));
    }
    const DataType e8m0 = DataType::float8_e8m0fnu();
    funcs.push_back(cast_kernel("to_e8m0", f32, e8m0, 1));
    funcs.push_back(cast_kernel("to_e8m0_x8", f32, e8m0, 8));
    funcs.push_back(cast_kernel("to_e8m0_from_f64", f64, e8m0, 1));
    funcs.push_back(cast_kernel("from_e8m0", e8m0, f32, 1));
    funcs.push_back(cast_kernel("from_e8m0_x16", e8m0, f32, 16));
    for (DataType t : kSubByteInts) {
      std::string n = t.to_string();
      funcs.push_back(cast_kernel("to_" + n, f32, t, 1));
      funcs.push_back(cast_kernel("to_" + n + "_x8", f32, t, 8));
      funcs.push_back(cast_kernel("from_" + n, t, f32, 1));
      funcs.push_back(cast_kernel(n + "_to_i8", t, DataType::int8(), 1));
      funcs.push_back(cast_kernel("i32_to_" + n, DataType::int32(), t, 1));
    }
    return codegen::jit_compile(funcs);
  }();
  return module;
}

// `values` repeated to fill kLength elements of dtype `t`.
template <typename T>
Tensor filled(const std::vector<T>& values, DataType t) {
  Tensor out = Tensor::zeros({kLength}, t);
  auto* p = static_cast<T*>(out.data());
  for (int64_t i = 0; i < kLength; ++i) p[i] = values[size_t(i) % values.size()];
  return out;
}

std::vector<uint8_t> run_to_bytes(const std::string& kernel, const Tensor& in, DataType t) {
  Tensor out = Tensor::zeros({kLength}, t);
  kernels().function(kernel)(in, out);
  std::vector<uint8_t> bytes(static_cast<size_t>(kLength));
  std::memcpy(bytes.data(), out.data(), bytes.size());
  return bytes;
}

bool is_nan_code(uint32_t code, MiniFloatFormat f) { return std::isnan(minifloat_decode(code, f)); }

// The float32 values on which rounding to format f is decided.
std::vector<float> deciding_values(MiniFloatFormat f) {
  std::vector<double> points;
  const uint32_t codes = 1u << (f.total_bits() - 1);
  for (uint32_t c = 0; c < codes; ++c) {
    double v = minifloat_decode(c, f);
    if (!std::isfinite(v)) continue;
    points.push_back(v);
    double next = minifloat_decode(c + 1, f);
    if (std::isfinite(next) && c + 1 < codes) points.push_back((v + next) / 2);  // a tie
  }
  MiniFloatOverflow overflow = minifloat_overflow(f);
  points.push_back(overflow.threshold);
  points.push_back(overflow.threshold * 4);
  points.push_back(1e30);
  std::vector<float> values;
  for (double p : points) {
    for (double sign : {1.0, -1.0}) {
      float v = float(sign * p);
      values.push_back(v);
      values.push_back(std::nextafter(v, std::numeric_limits<float>::infinity()));
      values.push_back(std::nextafter(v, -std::numeric_limits<float>::infinity()));
    }
  }
  float inf = std::numeric_limits<float>::infinity();
  for (float v : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), 0.0f, -0.0f,
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()})
    values.push_back(v);
  return values;
}

void expect_codes(const std::vector<uint8_t>& got, const std::vector<double>& inputs,
                  MiniFloatFormat f, const std::string& what) {
  for (int64_t i = 0; i < kLength; ++i) {
    double x = inputs[size_t(i) % inputs.size()];
    uint32_t expected = minifloat_encode(x, f, /*saturate=*/true);
    if (is_nan_code(expected, f)) {
      EXPECT_TRUE(is_nan_code(got[size_t(i)], f)) << what << ": " << x;
    } else {
      ASSERT_EQ(int(got[size_t(i)]), int(expected)) << what << ": input " << x;
    }
  }
}

class MiniFloatCast : public ::testing::TestWithParam<Format> {};

TEST_P(MiniFloatCast, DecodesEveryCode) {
  MiniFloatFormat f = GetParam().dtype.minifloat_format();
  std::vector<uint8_t> codes;
  for (uint32_t c = 0; c < (1u << f.total_bits()); ++c) codes.push_back(uint8_t(c));
  Tensor in = filled(codes, GetParam().dtype);
  std::string base = "from_" + std::string(GetParam().name);
  for (const std::string& name : {base, base + "_x16"}) {
    Tensor out = Tensor::zeros({kLength}, DataType::float32());
    kernels().function(name)(in, out);
    const auto* got = static_cast<const float*>(out.data());
    for (int64_t i = 0; i < kLength; ++i) {
      uint8_t code = codes[size_t(i) % codes.size()];
      double expected = minifloat_decode(code, f);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(got[i])) << name << " code " << int(code);
      } else {
        ASSERT_EQ(got[i], float(expected)) << name << " code " << int(code);
        EXPECT_EQ(std::signbit(got[i]), std::signbit(expected)) << name << " code " << int(code);
      }
    }
  }
}

TEST_P(MiniFloatCast, EncodesLikeTheCodec) {
  MiniFloatFormat f = GetParam().dtype.minifloat_format();
  std::string name = GetParam().name;
  std::vector<float> values = deciding_values(f);
  ASSERT_LE(int64_t(values.size()), kLength * 4);
  // Chunks of kLength, so every deciding value is run.
  for (size_t start = 0; start < values.size(); start += size_t(kLength)) {
    std::vector<float> chunk(values.begin() + long(start),
                             values.begin() + long(std::min(values.size(), start + kLength)));
    std::vector<double> wide(chunk.begin(), chunk.end());
    for (std::string kernel : {"to_" + name, "to_" + name + "_x8"})
      expect_codes(run_to_bytes(kernel, filled(chunk, DataType::float32()), GetParam().dtype), wide,
                   f, kernel);
    expect_codes(run_to_bytes("to_" + name + "_from_f64", filled(wide, DataType::float64()),
                              GetParam().dtype),
                 wide, f, "from float64");
  }
}

TEST_P(MiniFloatCast, EncodesRandomBits) {
  MiniFloatFormat f = GetParam().dtype.minifloat_format();
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> any_bits;
  // Random float32 bits, and values scattered over the format's range.
  std::vector<float> values;
  for (int i = 0; i < kLength / 2; ++i) values.push_back(std::bit_cast<float>(any_bits(rng)));
  std::uniform_real_distribution<double> exponent(-20, 18);
  for (int i = 0; values.size() < size_t(kLength); ++i)
    values.push_back(float((i % 2 ? -1 : 1) * std::exp2(exponent(rng))));
  std::vector<double> wide(values.begin(), values.end());
  expect_codes(run_to_bytes("to_" + std::string(GetParam().name) + "_x8",
                            filled(values, DataType::float32()), GetParam().dtype),
               wide, f, "random");
}

TEST_P(MiniFloatCast, Float64IsRoundedOnce) {
  // Doubles just above a tie of the format, by less than float32 can hold: through float32
  // they would become the tie and round to even; rounded once they round away from it.
  MiniFloatFormat f = GetParam().dtype.minifloat_format();
  std::vector<double> values;
  for (uint32_t c = 1; c + 1 < (1u << (f.total_bits() - 1)); ++c) {
    double v = minifloat_decode(c, f), next = minifloat_decode(c + 1, f);
    if (!std::isfinite(next) || !std::isfinite(v)) continue;
    double tie = (v + next) / 2;
    values.push_back(tie + tie * 0x1p-40);
    values.push_back(-(tie - tie * 0x1p-40));
  }
  expect_codes(run_to_bytes("to_" + std::string(GetParam().name) + "_from_f64",
                            filled(values, DataType::float64()), GetParam().dtype),
               values, f, "float64");
}

TEST_P(MiniFloatCast, ToIntegerTruncatesTheValue) {
  MiniFloatFormat f = GetParam().dtype.minifloat_format();
  std::vector<uint8_t> codes;
  for (uint32_t c = 0; c < (1u << f.total_bits()); ++c)
    if (std::isfinite(minifloat_decode(c, f))) codes.push_back(uint8_t(c));
  Tensor out = Tensor::zeros({kLength}, DataType::int32());
  kernels().function("from_" + std::string(GetParam().name) + "_to_i32")(
      filled(codes, GetParam().dtype), out);
  const auto* got = static_cast<const int32_t*>(out.data());
  for (int64_t i = 0; i < kLength; ++i) {
    uint8_t code = codes[size_t(i) % codes.size()];
    EXPECT_EQ(got[i], int32_t(std::trunc(minifloat_decode(code, f)))) << "code " << int(code);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, MiniFloatCast, ::testing::ValuesIn(kFormats),
                         [](const ::testing::TestParamInfo<Format>& info) {
                           return std::string(info.param.name);
                         });

// E8M0 (exponent only): the codec on ONNX's landmarks, then compiled casts against the codec.
TEST(E8M0Codec, RoundsTheExponentAsOnnxCastDoes) {
  using R = E8M0Rounding;
  EXPECT_EQ(e8m0_encode(1.0, true, R::Up), 127u);
  EXPECT_EQ(e8m0_encode(-1.0, true, R::Up), 127u);  // the sign is dropped
  EXPECT_EQ(e8m0_encode(1.1, true, R::Up), 128u);
  EXPECT_EQ(e8m0_encode(1.9, true, R::Down), 127u);
  EXPECT_EQ(e8m0_encode(1.5, true, R::Nearest), 128u);
  EXPECT_EQ(e8m0_encode(1.49, true, R::Nearest), 127u);
  EXPECT_EQ(e8m0_encode(0.124, true, R::Up), 124u);  // 2^-3 = 0.125
  EXPECT_EQ(e8m0_encode(0.0, true, R::Up), 0u);
  // 2^-127 is a float32 subnormal (field 0, mantissa one half): up rounds to 2^-126.
  EXPECT_EQ(e8m0_encode(std::ldexp(1.0, -127), true, R::Up), 1u);
  EXPECT_EQ(e8m0_encode(std::ldexp(1.0, -127), true, R::Nearest), 0u);
  EXPECT_EQ(e8m0_encode(std::ldexp(1.5, 127), true, R::Up), 254u);  // saturates
  EXPECT_EQ(e8m0_encode(std::ldexp(1.5, 127), false, R::Up), 255u);
  EXPECT_EQ(e8m0_encode(INFINITY, true, R::Up), 255u);
  EXPECT_EQ(e8m0_encode(NAN, true, R::Down), 255u);
  EXPECT_EQ(e8m0_decode(127), 1.0);
  EXPECT_EQ(e8m0_decode(0), std::ldexp(1.0, -127));
  EXPECT_EQ(e8m0_decode(254), std::ldexp(1.0, 127));
  EXPECT_TRUE(std::isnan(e8m0_decode(255)));
}

TEST(E8M0Cast, DecodesEveryCode) {
  std::vector<uint8_t> codes;
  for (uint32_t c = 0; c < 256; ++c) codes.push_back(uint8_t(c));
  Tensor in = filled(codes, DataType::float8_e8m0fnu());
  for (const std::string name : {"from_e8m0", "from_e8m0_x16"}) {
    Tensor out = Tensor::zeros({kLength}, DataType::float32());
    kernels().function(name)(in, out);
    const auto* got = static_cast<const float*>(out.data());
    for (int64_t i = 0; i < kLength; ++i) {
      uint8_t code = codes[size_t(i) % codes.size()];
      if (code == 255)
        EXPECT_TRUE(std::isnan(got[i])) << name;
      else
        ASSERT_EQ(got[i], float(e8m0_decode(code))) << name << " code " << int(code);
    }
  }
}

TEST(E8M0Cast, EncodesLikeTheCodec) {
  // Every power of two of the range and its float32 neighbours, both signs, the values
  // between, zeros, subnormals, the largest floats, infinities, NaN and random bits.
  std::vector<float> values;
  for (int e = -149; e <= 127; ++e) {
    for (double sign : {1.0, -1.0}) {
      float v = float(sign * std::ldexp(1.0, e));
      values.push_back(v);
      values.push_back(std::nextafter(v, INFINITY));
      values.push_back(std::nextafter(v, -INFINITY));
      values.push_back(float(sign * std::ldexp(1.5, e)));
    }
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, std::numeric_limits<float>::max()})
    values.push_back(v);
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> any_bits;
  while (values.size() % size_t(kLength) != 0)
    values.push_back(std::bit_cast<float>(any_bits(rng)));
  const MiniFloatFormat f = MiniFloatFormat::e8m0();
  for (size_t start = 0; start < values.size(); start += size_t(kLength)) {
    std::vector<float> chunk(values.begin() + long(start), values.begin() + long(start + kLength));
    std::vector<double> wide(chunk.begin(), chunk.end());
    for (std::string kernel : {"to_e8m0", "to_e8m0_x8"})
      expect_codes(
          run_to_bytes(kernel, filled(chunk, DataType::float32()), DataType::float8_e8m0fnu()),
          wide, f, kernel);
    expect_codes(run_to_bytes("to_e8m0_from_f64", filled(wide, DataType::float64()),
                              DataType::float8_e8m0fnu()),
                 wide, f, "from float64");
  }
}

// int4, uint4, int2, uint2: one byte per element, sign- or zero-extended; a float is truncated
// and wraps into the low bits, as ml_dtypes converts.
class SubByteIntCast : public ::testing::TestWithParam<DataType> {};

int64_t wrapped(int64_t v, DataType t) { return wrap_to_bits(v, t); }

TEST_P(SubByteIntCast, FloatsTruncateAndWrap) {
  DataType t = GetParam();
  std::vector<float> values;
  for (float v = -20.0f; v <= 20.0f; v += 0.75f) values.push_back(v);
  for (std::string kernel : {"to_" + t.to_string(), "to_" + t.to_string() + "_x8"}) {
    std::vector<uint8_t> got = run_to_bytes(kernel, filled(values, DataType::float32()), t);
    for (int64_t i = 0; i < kLength; ++i) {
      float v = values[size_t(i) % values.size()];
      int64_t expected = wrapped(int64_t(std::trunc(v)), t);
      ASSERT_EQ(int64_t(t.is_int() ? int64_t(int8_t(got[size_t(i)])) : got[size_t(i)]), expected)
          << kernel << ": " << v;
    }
  }
}

TEST_P(SubByteIntCast, WidensFromItsByte) {
  DataType t = GetParam();
  std::vector<int8_t> stored;
  const int64_t lo = t.is_int() ? -(int64_t(1) << (t.bits - 1)) : 0;
  for (int64_t v = lo; v < lo + (int64_t(1) << t.bits); ++v) stored.push_back(int8_t(v));
  Tensor in = filled(stored, t);
  Tensor as_float = Tensor::zeros({kLength}, DataType::float32());
  kernels().function("from_" + t.to_string())(in, as_float);
  Tensor as_i8 = Tensor::zeros({kLength}, DataType::int8());
  kernels().function(t.to_string() + "_to_i8")(in, as_i8);
  for (int64_t i = 0; i < kLength; ++i) {
    int64_t v = t.is_int() ? stored[size_t(i) % stored.size()]
                           : int64_t(uint8_t(stored[size_t(i) % stored.size()]));
    EXPECT_EQ(static_cast<const float*>(as_float.data())[i], float(v));
    EXPECT_EQ(static_cast<const int8_t*>(as_i8.data())[i], int8_t(v));
    EXPECT_EQ(in.get_as_double(i), double(v));
  }
}

TEST_P(SubByteIntCast, IntegersKeepTheLowBits) {
  DataType t = GetParam();
  std::vector<int32_t> values;
  for (int32_t v = -40; v <= 40; ++v) values.push_back(v);
  std::vector<uint8_t> got =
      run_to_bytes("i32_to_" + t.to_string(), filled(values, DataType::int32()), t);
  for (int64_t i = 0; i < kLength; ++i) {
    int64_t expected = wrapped(values[size_t(i) % values.size()], t);
    ASSERT_EQ(t.is_int() ? int64_t(int8_t(got[size_t(i)])) : int64_t(got[size_t(i)]), expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, SubByteIntCast, ::testing::ValuesIn(kSubByteInts),
                         [](const ::testing::TestParamInfo<DataType>& info) {
                           return info.param.to_string();
                         });

}  // namespace
}  // namespace anvil
