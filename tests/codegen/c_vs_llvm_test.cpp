// The C back end against the LLVM back end: the same lowered kernels, compiled by both, give the
// same results on the same inputs (and fail with the same messages).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "anvil/codegen/c.h"
#include "anvil/codegen/llvm.h"
#include "anvil/runtime/module.h"
#include "anvil/support/error.h"
#include "codegen/c_test_kernels.h"
#include "support/test_util.h"

namespace anvil {
namespace {

struct Backends {
  Module c, llvm;
};

const Backends& backends() {
  static testing::ScratchDir dir;
  static Backends both = [] {
    std::vector<tir::PrimFunc> kernels = testing::all_test_kernels();
    kernels.push_back(testing::lowered_dense_relu_kernel());
    kernels.push_back(testing::lowered_scale_shift_kernel());
    std::string path = (dir / "c_kernels.so").string();
    codegen::write_c_library(kernels, path);
    return Backends{Module::load_shared(path), codegen::jit_compile(kernels)};
  }();
  return both;
}

// A tensor argument filled with random values in [lo, hi] (rounded to the element type), or a
// scalar argument.
struct TensorArg {
  DataType dtype;
  std::vector<int64_t> shape;
  double lo = -4, hi = 4;
};
using Arg = std::variant<TensorArg, Value>;

std::vector<Value> make_args(const std::vector<Arg>& specs, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Value> out;
  for (const Arg& spec : specs) {
    if (const auto* scalar = std::get_if<Value>(&spec)) {
      out.push_back(*scalar);
      continue;
    }
    const auto& t = std::get<TensorArg>(spec);
    Tensor tensor = Tensor::zeros(t.shape, t.dtype);
    std::uniform_real_distribution<double> dist(t.lo, t.hi);
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      double v = dist(rng);
      tensor.set_from_double(i, t.dtype.is_float() ? v : std::floor(v));
    }
    out.push_back(tensor);
  }
  return out;
}

// The error message of a call, or nullopt when it succeeds.
std::optional<std::string> call(const Module& m, const std::string& name,
                                const std::vector<Value>& args) {
  try {
    m.function(name).call(args);
  } catch (const Error& e) {
    std::string message = e.what();
    // The prefix names the library or JIT session; the kernel's own text follows "failed: ".
    size_t at = message.find("failed: ");
    return at == std::string::npos ? message : message.substr(at + 8);
  }
  return std::nullopt;
}

// Distance in units in the last place between two floats of one sign (large otherwise).
int64_t ulp_distance(float a, float b) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return INT64_MAX;
  return std::abs(int64_t(ia) - int64_t(ib));
}

// How far float32 results of the two back ends may lie apart: LLVM contracts a * b + c into fused
// multiply-adds and expands some math functions itself, while the C back end's portable build
// (no -march) rounds every operation and calls libm.
struct Tolerance {
  int64_t ulps = 0;
  double relative = 0;  // |c - llvm| <= relative * (1 + |c|)
};
constexpr Tolerance kExact{};
constexpr Tolerance kContracted{0, 1e-6};
constexpr Tolerance kLibm{4, 1e-6};
constexpr Tolerance kAccumulated{0, 2e-5};  // sums of products in [-1, 1], contracted or not

// Runs kernel name with the same arguments under both back ends and compares every tensor
// afterwards.
void expect_same(const std::string& name, const std::vector<Arg>& specs,
                 Tolerance tolerance = kExact) {
  SCOPED_TRACE(name);
  std::vector<Value> c_args = make_args(specs, 7), llvm_args = make_args(specs, 7);
  std::optional<std::string> c_error = call(backends().c, name, c_args);
  std::optional<std::string> llvm_error = call(backends().llvm, name, llvm_args);
  ASSERT_EQ(c_error, llvm_error);
  // After a failure, what parallel tasks wrote before it depends on their scheduling.
  if (c_error) return;
  for (size_t k = 0; k < specs.size(); ++k) {
    if (!std::holds_alternative<TensorArg>(specs[k])) continue;
    const Tensor& c = c_args[k].as_tensor();
    const Tensor& llvm = llvm_args[k].as_tensor();
    if (c.dtype() == DataType::float32() && (tolerance.ulps > 0 || tolerance.relative > 0)) {
      auto cv = testing::values_of<float>(c), lv = testing::values_of<float>(llvm);
      for (size_t i = 0; i < cv.size(); ++i) {
        bool close = ulp_distance(cv[i], lv[i]) <= tolerance.ulps ||
                     std::abs(double(cv[i]) - double(lv[i])) <=
                         tolerance.relative * (1 + std::abs(double(cv[i])));
        ASSERT_TRUE(close) << "argument " << k << " element " << i << ": " << cv[i] << " vs "
                           << lv[i];
      }
    } else {
      ASSERT_EQ(std::memcmp(c.data(), llvm.data(), size_t(c.nbytes())), 0)
          << "argument " << k << " differs";
    }
  }
}

const DataType f32 = DataType::float32();
const DataType i64 = DataType::int64();

TEST(CVersusLlvm, ElementwiseAndReduction) {
  expect_same("add_scalar", {TensorArg{f32, {37}}, TensorArg{f32, {37}}, Value(0.75)});
  expect_same("row_sum", {TensorArg{f32, {7, 29}}, TensorArg{f32, {7}}});
}

TEST(CVersusLlvm, IntegerDivision) {
  for (int64_t d : {3, -4, 7}) {
    std::vector<Arg> specs = {TensorArg{i64, {64}, -50, 50}};
    for (int k = 0; k < 4; ++k) specs.push_back(TensorArg{i64, {64}});
    for (int k = 0; k < 2; ++k) specs.push_back(TensorArg{DataType::int32(), {64}});
    specs.push_back(Value(d));
    expect_same("div_mod", specs);
  }
}

TEST(CVersusLlvm, VectorsAndParallelLoops) {
  expect_same("vector_affine", {TensorArg{f32, {32}}, TensorArg{f32, {32}}}, kContracted);
  expect_same("vector_affine", {TensorArg{f32, {30}}, TensorArg{f32, {30}}});  // fails alike
  expect_same("shift_lanes", {TensorArg{DataType::int32(), {8}, -100, 100}});
  expect_same("parallel_scale", {TensorArg{f32, {33, 17}}, TensorArg{f32, {33, 17}}, Value(1.5)},
              kContracted);
  expect_same("parallel_sqrt", {TensorArg{f32, {100}, 0, 9}, TensorArg{f32, {100}}});
  expect_same("parallel_sqrt", {TensorArg{f32, {100}, -9, 9}, TensorArg{f32, {100}}});
  expect_same("nested_parallel", {TensorArg{f32, {13, 8}}, TensorArg{f32, {13, 8}}, Value(10.0)});
  expect_same("nested_parallel", {TensorArg{f32, {13, 8}}, TensorArg{f32, {13, 8}}, Value(0.0)});
}

TEST(CVersusLlvm, AllocationsAndAsserts) {
  expect_same("row_softmax", {TensorArg{f32, {4, 300}}, TensorArg{f32, {4, 300}}}, kLibm);
  expect_same("checked_scale", {TensorArg{f32, {10}}, TensorArg{f32, {10}}, Value(int64_t(10))});
  expect_same("checked_scale", {TensorArg{f32, {10}}, TensorArg{f32, {10}}, Value(int64_t(9))});
}

TEST(CVersusLlvm, HalfTypesMathAndSelects) {
  expect_same("half_cast", {TensorArg{f32, {50}, -300, 300}, TensorArg{DataType::float16(), {50}},
                            TensorArg{f32, {50}}, TensorArg{DataType::bfloat16(), {50}}});
  std::vector<Arg> math = {TensorArg{f32, {64}, -6, 6}};
  for (int k = 0; k < 5; ++k) math.push_back(TensorArg{f32, {64}});
  expect_same("math", math, kLibm);
  expect_same("select_mix",
              {TensorArg{f32, {20}}, TensorArg{f32, {20}}, TensorArg{DataType::boolean(), {20}},
               TensorArg{DataType::int8(), {20}}});
}

TEST(CVersusLlvm, KernelsFromTheLoweringPipeline) {
  expect_same("dense_relu",
              {TensorArg{f32, {33, 17}, -1, 1}, TensorArg{f32, {17, 24}, -1, 1},
               TensorArg{f32, {24}, -1, 1}, TensorArg{f32, {33, 24}}},
              kAccumulated);
  expect_same("dense_relu", {TensorArg{f32, {33, 17}}, TensorArg{f32, {17, 23}},
                             TensorArg{f32, {24}}, TensorArg{f32, {33, 24}}});  // fails alike
  for (int64_t n : {0, 3, 64, 65})
    expect_same("scale_shift", {TensorArg{f32, {n}}, TensorArg{f32, {n}}}, kContracted);
}

}  // namespace
}  // namespace anvil
