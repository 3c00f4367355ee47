// Accuracy of the LLVM back end's polynomial exp/log/tanh/erf/sigmoid against the C library in
// double precision, over a sample of every float32 binade, both signs and the special values;
// the vector and scalar code paths must agree bit for bit.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "codegen/c_test_kernels.h"

namespace anvil::codegen {
namespace {

using namespace tir;  // NOLINT
using testing::make_packed_kernel;
using testing::tensor_of;
using testing::tensor_param;
using testing::values_of;

constexpr int kLanes = 16;

// V[i] = op(A[i]) sixteen lanes at a time (the last partial group left alone), and S[i] =
// op(A[i]) one element at a time.
PrimFunc unary_kernel(const std::string& op, DataType dtype) {
  Var n = VarNode::make("n", DataType::int64()), o = VarNode::make("o", DataType::int64()),
      i = VarNode::make("i", DataType::int64());
  Buffer a = BufferNode::make("A", dtype, {n}), v = BufferNode::make("V", dtype, {n}),
         s = BufferNode::make("S", dtype, {n});
  PrimExpr lanes = ramp(o * kLanes, 1, kLanes);
  Stmt vector_loop =
      for_loop(o, 0, floordiv(n, kLanes),
               store(v, call_intrin(dtype.with_lanes(kLanes), op, {load(a, {lanes})}), {lanes}));
  Stmt scalar_loop = for_loop(i, 0, n, store(s, call_intrin(dtype, op, {load(a, {i})}), {i}));
  return make_packed_kernel(op + "_kernel",
                            {tensor_param(a, {n}), tensor_param(v, {n}), tensor_param(s, {n})},
                            seq_stmt({vector_loop, scalar_loop}));
}

// Every 1531st bit pattern (all binades, both signs, normal and subnormal) plus special values.
std::vector<float> sample_inputs() {
  std::vector<float> values;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 1531) {
    float f = std::bit_cast<float>(uint32_t(bits));
    if (!std::isnan(f)) values.push_back(f);
  }
  float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f,
                  -0.0f,
                  inf,
                  -inf,
                  std::numeric_limits<float>::quiet_NaN(),
                  1.0f,
                  -1.0f,
                  std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::max(),
                  -std::numeric_limits<float>::max(),
                  88.72f,
                  88.73f,
                  -87.5f,
                  -103.9f,
                  0.625f,
                  -0.625f,
                  1.25f,
                  3.92f,
                  -3.92f,
                  0.5f})
    values.push_back(f);
  while (values.size() % kLanes != 7) values.push_back(0.25f);  // leaves a partial vector group
  return values;
}

// |got - expected| in units of the float32 spacing at expected; infinite on a mismatch of
// special values.
double ulp_error(float got, double expected) {
  if (std::isnan(expected)) return std::isnan(got) ? 0 : INFINITY;
  float rounded = float(expected);
  if (std::isinf(rounded)) return got == rounded ? 0 : INFINITY;
  if (std::isnan(got) || std::isinf(got)) return INFINITY;
  int exponent = 0;
  std::frexp(rounded, &exponent);
  double spacing = std::ldexp(1.0, std::max(exponent, -125) - 24);
  return std::abs(double(got) - expected) / spacing;
}

struct Case {
  const char* op;
  std::function<double(double)> reference;
  double max_ulp;
};

class VectorMath : public ::testing::TestWithParam<Case> {};

TEST_P(VectorMath, MatchesTheCLibraryWithinBound) {
  const Case& c = GetParam();
  Module module = jit_compile({unary_kernel(c.op, DataType::float32())});
  std::vector<float> inputs = sample_inputs();
  int64_t n = int64_t(inputs.size());
  Tensor vector_out = Tensor::zeros({n}, DataType::float32());
  Tensor scalar_out = Tensor::zeros({n}, DataType::float32());
  module.function(std::string(c.op) + "_kernel")(tensor_of(inputs, DataType::float32(), {n}),
                                                 vector_out, scalar_out);
  std::vector<float> vector_values = values_of<float>(vector_out);
  std::vector<float> scalar_values = values_of<float>(scalar_out);
  double worst = 0;
  float worst_input = 0;
  int64_t vector_end = n / kLanes * kLanes;
  for (int64_t k = 0; k < n; ++k) {
    float x = inputs[size_t(k)], got = scalar_values[size_t(k)];
    if (k < vector_end) {
      ASSERT_EQ(std::bit_cast<uint32_t>(vector_values[size_t(k)]), std::bit_cast<uint32_t>(got))
          << c.op << "(" << x << "): vector and scalar code disagree";
    }
    double error = ulp_error(got, c.reference(double(x)));
    if (error > worst) {
      worst = error;
      worst_input = x;
    }
  }
  EXPECT_LE(worst, c.max_ulp) << c.op << " is off by " << worst << " ulp at x = " << worst_input;
  RecordProperty("max_ulp", std::to_string(worst));
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

INSTANTIATE_TEST_SUITE_P(
    Float32, VectorMath,
    ::testing::Values(Case{"exp", [](double x) { return std::exp(x); }, 1.0},
                      Case{"exp2", [](double x) { return std::exp2(x); }, 1.0},
                      Case{"log", [](double x) { return std::log(x); }, 1.0},
                      Case{"log2", [](double x) { return std::log2(x); }, 2.0},
                      Case{"log10", [](double x) { return std::log10(x); }, 2.0},
                      Case{"tanh", [](double x) { return std::tanh(x); }, 1.5},
                      Case{"sigmoid", sigmoid, 2.5},
                      Case{"erf", [](double x) { return std::erf(x); }, 1.5}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.op); });

TEST(VectorMathCode, VectorsStayInRegistersWithoutLibmCalls) {
  for (const char* op : {"exp", "log", "tanh", "sigmoid", "erf"}) {
    std::string ir =
        emit_llvm_ir({unary_kernel(op, DataType::float32())}, Target::parse("llvm -mcpu=znver4"));
    for (const char* libm : {"@expf", "@logf", "@tanhf", "@erff"})
      EXPECT_EQ(ir.find(libm), std::string::npos) << op << " calls " << libm;
    EXPECT_NE(ir.find("<16 x float>"), std::string::npos) << op;
  }
}

TEST(VectorMathCode, Float64UsesTheCLibrary) {
  Module module = jit_compile({unary_kernel("exp", DataType::float64())});
  std::vector<double> inputs;
  for (int k = -40; k < 40; ++k) inputs.push_back(k * 0.37);
  int64_t n = int64_t(inputs.size());
  Tensor vector_out = Tensor::zeros({n}, DataType::float64());
  Tensor scalar_out = Tensor::zeros({n}, DataType::float64());
  module.function("exp_kernel")(tensor_of(inputs, DataType::float64(), {n}), vector_out,
                                scalar_out);
  for (int64_t k = 0; k < n; ++k) {
    EXPECT_EQ(values_of<double>(scalar_out)[size_t(k)], std::exp(inputs[size_t(k)]));
    EXPECT_EQ(values_of<double>(vector_out)[size_t(k)], std::exp(inputs[size_t(k)]));
  }
}

}  // namespace
}  // namespace anvil::codegen

namespace anvil::codegen {
namespace {

// round_to_int32 (the requantization's rounding conversion): ties to even on 16 lanes (one
// vcvtps2dq {rn-sae} on AVX-512), 8 lanes and scalars (a round and a conversion), against
// std::nearbyint. (The C back end's form runs in the int8 kernels' tests.)
TEST(RoundToInt32, TiesToEvenOnEveryPath) {
  std::vector<float> inputs;
  for (int k = -40; k <= 40; ++k) inputs.push_back(float(k) * 0.25f);  // every other a tie
  for (float f : {2147483520.0f, -2147483648.0f, 1e-30f, -0.0f, 8388607.5f, -8388608.5f})
    inputs.push_back(f);
  while (inputs.size() % 16 != 0) inputs.push_back(0.5f);
  const int64_t n = int64_t(inputs.size());
  for (int lanes : {16, 8, 1}) {
    SCOPED_TRACE(lanes);
    Var o = VarNode::make("o", DataType::int64());
    Buffer a = BufferNode::make("A", DataType::float32(), {make_int(n)});
    Buffer r = BufferNode::make("R", DataType::int32(), {make_int(n)});
    PrimExpr at = lanes == 1 ? PrimExpr(o) : ramp(o * lanes, 1, lanes);
    Stmt body = for_loop(o, 0, n / lanes,
                         store(r,
                               call_intrin(DataType::int32().with_lanes(uint16_t(lanes)),
                                           "round_to_int32", {load(a, {at})}),
                               {at}));
    PrimFunc kernel =
        make_packed_kernel("rounding", {tensor_param(a, {n}), tensor_param(r, {n})}, body);
    Tensor out = Tensor::zeros({n}, DataType::int32());
    jit_compile({kernel}).function("rounding")(tensor_of(inputs, DataType::float32(), {n}), out);
    std::vector<int32_t> got = values_of<int32_t>(out);
    for (int64_t k = 0; k < n; ++k)
      EXPECT_EQ(got[size_t(k)], int32_t(std::nearbyint(inputs[size_t(k)])))
          << "input " << inputs[size_t(k)];
  }
}

}  // namespace
}  // namespace anvil::codegen
