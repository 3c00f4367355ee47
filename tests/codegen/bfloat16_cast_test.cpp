// float32 -> bfloat16 conversion in compiled code, on both back ends: the 16 dropped bits round
// to nearest with ties to even, overflow gives infinity and every NaN stays a NaN. Expected
// bit patterns are worked out by hand for the edge cases and by the reference rounding
// (support/half.h) for a sweep of random values.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/support/half.h"
#include "anvil/te/te.h"
#include "anvil/tir/schedule.h"
#include "anvil/tir/transform.h"
#include "support/test_util.h"

namespace anvil {
namespace {

using tir::Var;

constexpr int64_t kLength = 37;  // odd, so a vectorized loop has a remainder

// out[i] = bfloat16(in[i]) for an input of dtype `from`; vector_lanes > 1 vectorizes the loop.
tir::PrimFunc cast_kernel(const std::string& name, DataType from, DataType to, int vector_lanes) {
  te::Tensor in = te::placeholder({tir::make_int(kLength)}, from, "in");
  te::Tensor out = te::compute(
      {tir::make_int(kLength)}, [&](const std::vector<Var>& i) { return tir::cast(to, in(i[0])); },
      "out");
  tir::Schedule sch(te::create_prim_func({in, out}, name));
  if (vector_lanes > 1) {
    std::vector<tir::LoopRV> loops = sch.get_loops(sch.get_block("out"));
    std::vector<tir::LoopRV> parts = sch.split(loops[0], {nullptr, tir::make_int(vector_lanes)});
    sch.vectorize(parts[1]);
  }
  return tir::transform::lower(sch.func());
}

struct Backends {
  Module c, llvm;
};

const Backends& backends() {
  static testing::ScratchDir dir;
  static Backends both = [] {
    DataType f32 = DataType::float32(), bf16 = DataType::bfloat16();
    std::vector<tir::PrimFunc> kernels = {
        cast_kernel("to_bf16", f32, bf16, 1), cast_kernel("to_bf16_x8", f32, bf16, 8),
        cast_kernel("to_bf16_from_f64", DataType::float64(), bf16, 1),
        cast_kernel("from_bf16", bf16, f32, 1)};
    std::string path = (dir / "bf16_kernels.so").string();
    codegen::write_c_library(kernels, path);
    return Backends{Module::load_shared(path), codegen::jit_compile(kernels)};
  }();
  return both;
}

// The float32 bit patterns of `bits`, repeated to fill kLength elements.
Tensor float_tensor(const std::vector<uint32_t>& bits) {
  Tensor t = Tensor::zeros({kLength}, DataType::float32());
  auto* p = static_cast<uint32_t*>(t.data());
  for (int64_t i = 0; i < kLength; ++i) p[i] = bits[size_t(i) % bits.size()];
  return t;
}

std::vector<uint16_t> run_to_bf16(const Module& m, const std::string& kernel, const Tensor& in) {
  Tensor out = Tensor::zeros({kLength}, DataType::bfloat16());
  m.function(kernel)(in, out);
  std::vector<uint16_t> bits(static_cast<size_t>(kLength));
  std::memcpy(bits.data(), out.data(), bits.size() * sizeof(uint16_t));
  return bits;
}

bool is_bf16_nan(uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x7f) != 0; }

// Inputs and their correctly rounded bfloat16, derived by hand.
struct Case {
  uint32_t in;
  uint16_t expected;
};
const std::vector<Case> kCases = {
    {0x3ef5eeb0u, 0x3ef6},  // 0.48033667: above the halfway point, rounds up (not truncated)
    {0x3f807fffu, 0x3f80},  // just below halfway: down
    {0x3f808001u, 0x3f81},  // just above halfway: up
    {0x3f808000u, 0x3f80},  // a tie with an even last bit stays
    {0x3f818000u, 0x3f82},  // a tie with an odd last bit goes up to even
    {0xbef5eeb0u, 0xbef6},  // negative values round by magnitude
    {0xbf818000u, 0xbf82},  // negative tie to even
    {0x3f7fffffu, 0x3f80},  // the carry ripples into the exponent
    {0x7f7fffffu, 0x7f80},  // the largest float rounds up to infinity
    {0x7f800000u, 0x7f80},  // +inf
    {0xff800000u, 0xff80},  // -inf
    {0x00000000u, 0x0000},  // +0
    {0x80000000u, 0x8000},  // -0 keeps its sign
    {0x00018000u, 0x0002},  // a subnormal tie with an odd last bit
    {0x00008000u, 0x0000},  // a subnormal tie with an even last bit
    {0x3f800000u, 0x3f80},  // exact values are kept
};
// NaNs whose rounding would carry into the sign or exponent if they were rounded as numbers.
const std::vector<uint32_t> kNaNs = {0x7fc00000u, 0xffc00000u, 0x7f800001u,
                                     0x7fffffffu, 0xffffffffu, 0x7f80ffffu};

class Bfloat16Cast : public ::testing::TestWithParam<std::string> {
 protected:
  const Module& module() const { return GetParam() == "c" ? backends().c : backends().llvm; }
};

TEST_P(Bfloat16Cast, RoundsToNearestEven) {
  std::vector<uint32_t> inputs;
  for (const Case& c : kCases) inputs.push_back(c.in);
  for (const char* kernel : {"to_bf16", "to_bf16_x8"}) {
    std::vector<uint16_t> got = run_to_bf16(module(), kernel, float_tensor(inputs));
    for (int64_t i = 0; i < kLength; ++i) {
      const Case& c = kCases[size_t(i) % kCases.size()];
      EXPECT_EQ(got[size_t(i)], c.expected)
          << kernel << " element " << i << ": input 0x" << std::hex << c.in;
    }
  }
}

TEST_P(Bfloat16Cast, NaNStaysNaN) {
  for (const char* kernel : {"to_bf16", "to_bf16_x8"}) {
    std::vector<uint16_t> got = run_to_bf16(module(), kernel, float_tensor(kNaNs));
    for (int64_t i = 0; i < kLength; ++i) {
      uint32_t in = kNaNs[size_t(i) % kNaNs.size()];
      EXPECT_TRUE(is_bf16_nan(got[size_t(i)])) << kernel << " element " << i << ": input 0x"
                                               << std::hex << in << " gave 0x" << got[size_t(i)];
      EXPECT_EQ(got[size_t(i)] & 0x8000, (in >> 16) & 0x8000) << "the sign of NaN is kept";
    }
  }
}

TEST_P(Bfloat16Cast, RandomValuesMatchTheReferenceRounding) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int round = 0; round < 20; ++round) {
    std::vector<uint32_t> inputs;
    for (int64_t i = 0; i < kLength; ++i) inputs.push_back(any_bits(rng));
    std::vector<uint16_t> got = run_to_bf16(module(), "to_bf16_x8", float_tensor(inputs));
    for (int64_t i = 0; i < kLength; ++i) {
      uint16_t expected = float_to_bfloat16(std::bit_cast<float>(inputs[size_t(i)]));
      if (is_bf16_nan(expected)) {
        EXPECT_TRUE(is_bf16_nan(got[size_t(i)]));
      } else {
        EXPECT_EQ(got[size_t(i)], expected) << "input 0x" << std::hex << inputs[size_t(i)];
      }
    }
  }
}

TEST_P(Bfloat16Cast, FromFloat64RoundsAndWidensExactly) {
  // float64 inputs that are exact float32 values, so one rounding step decides the result.
  Tensor in = Tensor::zeros({kLength}, DataType::float64());
  auto* p = static_cast<double*>(in.data());
  for (int64_t i = 0; i < kLength; ++i)
    p[i] = double(std::bit_cast<float>(kCases[size_t(i) % kCases.size()].in));
  std::vector<uint16_t> got = run_to_bf16(module(), "to_bf16_from_f64", in);
  for (int64_t i = 0; i < kLength; ++i)
    EXPECT_EQ(got[size_t(i)], kCases[size_t(i) % kCases.size()].expected) << "element " << i;

  // Widening back to float32 appends 16 zero bits.
  Tensor bf = Tensor::zeros({kLength}, DataType::bfloat16());
  auto* b = static_cast<uint16_t*>(bf.data());
  for (int64_t i = 0; i < kLength; ++i) b[i] = kCases[size_t(i) % kCases.size()].expected;
  Tensor widened = Tensor::zeros({kLength}, DataType::float32());
  module().function("from_bf16")(bf, widened);
  const auto* w = static_cast<const uint32_t*>(widened.data());
  for (int64_t i = 0; i < kLength; ++i) EXPECT_EQ(w[i], uint32_t(b[i]) << 16) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, Bfloat16Cast, ::testing::Values("c", "llvm"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace anvil
