// bf16_dot2_accumulate on every back end: vdpbf16ps where the target has AVX-512 BF16, the
// widening fused multiply-adds elsewhere, and the C back end's fmaf. Each lane must equal
// acc + a[1] * b[2l + 1] + a[0] * b[2l] worked out in float on the host (the products of two
// bfloat16 values are exact in float, so only the two additions round).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/runtime/module.h"
#include "anvil/support/half.h"
#include "codegen/c_test_kernels.h"
#include "support/test_util.h"

namespace anvil::codegen {
namespace {

using namespace tir;  // NOLINT
using testing::make_packed_kernel;
using testing::tensor_of;
using testing::tensor_param;
using testing::values_of;

constexpr int64_t kRows = 5;

// out[r, :] = bf16_dot2_accumulate(acc[r, :], a[r, 0:2], b[r, 0:2 lanes]) for r < kRows.
PrimFunc dot2_kernel(int lanes) {
  const std::string name = "dot2_x" + std::to_string(lanes);
  Var r = VarNode::make("r", DataType::int64());
  auto flat = [](const char* n, DataType t, int64_t extent) {
    return BufferNode::make(n, t, {make_int(extent)});
  };
  Buffer acc = flat("acc", DataType::float32(), kRows * lanes),
         a = flat("a", DataType::bfloat16(), kRows * 2),
         b = flat("b", DataType::bfloat16(), kRows * 2 * lanes),
         out = flat("out", DataType::float32(), kRows * lanes);
  PrimExpr row = ramp(PrimExpr(r) * lanes, 1, lanes);
  PrimExpr dot =
      call_intrin(DataType::float32().with_lanes(uint16_t(lanes)), "bf16_dot2_accumulate",
                  {load(acc, {row}), load(a, {ramp(PrimExpr(r) * 2, 1, 2)}),
                   load(b, {ramp(PrimExpr(r) * (2 * lanes), 1, 2 * lanes)})});
  Stmt body = for_loop(r, 0, kRows, store(out, dot, {row}));
  return make_packed_kernel(
      name,
      {tensor_param(acc, {make_int(kRows * lanes)}), tensor_param(a, {make_int(kRows * 2)}),
       tensor_param(b, {make_int(kRows * 2 * lanes)}),
       tensor_param(out, {make_int(kRows * lanes)})},
      body);
}

const std::vector<int> kLanes = {4, 8, 16};

std::vector<PrimFunc> kernels() {
  std::vector<PrimFunc> funcs;
  for (int lanes : kLanes) funcs.push_back(dot2_kernel(lanes));
  return funcs;
}

std::vector<uint16_t> random_bf16(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  std::vector<uint16_t> bits(n);
  for (uint16_t& b : bits) b = float_to_bfloat16(value(rng));
  return bits;
}

// Runs every kernel of m on random operands and compares each lane with the float formula.
void expect_dot2_matches(const Module& m, const std::string& what) {
  std::mt19937 rng(7);
  for (int lanes : kLanes) {
    const size_t n = size_t(kRows * lanes);
    std::uniform_real_distribution<float> value(-50.0f, 50.0f);
    std::vector<float> acc(n);
    for (float& x : acc) x = value(rng);
    std::vector<uint16_t> a = random_bf16(size_t(kRows * 2), rng), b = random_bf16(2 * n, rng);
    Tensor t_acc = tensor_of(acc, DataType::float32(), {int64_t(n)});
    Tensor t_a = tensor_of(a, DataType::bfloat16(), {kRows * 2});
    Tensor t_b = tensor_of(b, DataType::bfloat16(), {int64_t(2 * n)});
    Tensor t_out = Tensor::zeros({int64_t(n)}, DataType::float32());
    m.function("dot2_x" + std::to_string(lanes))(t_acc, t_a, t_b, t_out);
    std::vector<float> out = values_of<float>(t_out);
    for (int64_t r = 0; r < kRows; ++r)
      for (int l = 0; l < lanes; ++l) {
        const size_t i = size_t(r * lanes + l), j = size_t(r * 2 * lanes + 2 * l);
        const float a0 = bfloat16_to_float(a[size_t(r * 2)]),
                    a1 = bfloat16_to_float(a[size_t(r * 2 + 1)]);
        const float b0 = bfloat16_to_float(b[j]), b1 = bfloat16_to_float(b[j + 1]);
        const float expected = std::fma(a0, b0, std::fma(a1, b1, acc[i]));
        // One rounding of each addition; a unit that sums both products before rounding may
        // differ by an ulp of the magnitudes involved.
        const float scale = std::fabs(acc[i]) + std::fabs(a0 * b0) + std::fabs(a1 * b1);
        ASSERT_NEAR(out[i], expected, 2e-7f * scale)
            << what << ": lanes " << lanes << ", row " << r << ", lane " << l;
      }
  }
}

bool host_has_bf16() {
  for (const std::string& attr : Target::host().mattrs)
    if (attr == "+avx512bf16") return true;
  return false;
}

TEST(Bf16Dot2, HostCodeMatchesTheFormula) {
  expect_dot2_matches(jit_compile(kernels()), host_has_bf16() ? "vdpbf16ps" : "host fallback");
}

TEST(Bf16Dot2, FallbackWithoutAvx512Bf16MatchesTheFormula) {
  expect_dot2_matches(jit_compile(kernels(), Target::parse("llvm -mattr=-avx512bf16")), "fallback");
}

TEST(Bf16Dot2, CBackEndMatchesTheFormula) {
  ::anvil::testing::ScratchDir dir;
  const std::string path = (dir / "dot2.so").string();
  write_c_library(kernels(), path);
  expect_dot2_matches(Module::load_shared(path), "C");
}

// The instruction where the target has it (checked in the assembly even on a host without
// it: cross-compiling), and none where it is turned off.
TEST(Bf16Dot2, UsesVdpbf16psOnlyWhereTheTargetHasIt) {
  const std::string with = emit_assembly(kernels(), Target::parse("llvm -mcpu=znver4"));
  EXPECT_NE(with.find("vdpbf16ps"), std::string::npos);
  EXPECT_NE(with.find("zmm"), std::string::npos);
  const std::string without =
      emit_assembly(kernels(), Target::parse("llvm -mcpu=znver4 -mattr=-avx512bf16"));
  EXPECT_EQ(without.find("vdpbf16ps"), std::string::npos);
  EXPECT_NE(without.find("vfmadd"), std::string::npos);
}

}  // namespace
}  // namespace anvil::codegen
