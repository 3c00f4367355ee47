// Tensor expressions all the way to machine code: TE computes -> create_prim_func
// -> lower -> LLVM JIT, called through the packed API on odd shapes and
// compared with plain C++ loops.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/tensor.h"
#include "anvil/te/te.h"
#include "anvil/tir/transform.h"

namespace anvil {
namespace {

using tir::IterVar;
using tir::PrimExpr;
using tir::Var;

PrimExpr f32(double value) { return tir::make_const(DataType::float32(), value); }

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = Tensor::zeros(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

// D = relu(A x B) for A (m, k), B (k, n), with C = A x B an intermediate.
tir::PrimFunc matmul_relu(PrimExpr m, PrimExpr n, PrimExpr k_extent, const std::string& name) {
  te::Tensor a = te::placeholder({m, k_extent}, DataType::float32(), "A");
  te::Tensor b = te::placeholder({k_extent, n}, DataType::float32(), "B");
  IterVar k = te::reduce_axis(k_extent, "k");
  te::Tensor c = te::compute(
      {m, n},
      [&](const std::vector<Var>& i) { return tir::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
      "C");
  te::Tensor d = te::compute(
      {m, n}, [&](const std::vector<Var>& i) { return tir::max(c(i[0], i[1]), f32(0)); }, "D");
  return tir::transform::lower(te::create_prim_func({a, b, d}, name));
}

void expect_matmul_relu(const Tensor& a, const Tensor& b, const Tensor& d) {
  int64_t m = a.shape()[0], kk = a.shape()[1], n = b.shape()[1];
  const auto* pa = static_cast<const float*>(a.data());
  const auto* pb = static_cast<const float*>(b.data());
  const auto* pd = static_cast<const float*>(d.data());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t r = 0; r < kk; ++r) acc += double(pa[i * kk + r]) * pb[r * n + j];
      double expect = std::max(acc, 0.0);
      ASSERT_NEAR(pd[i * n + j], expect, 1e-4 * (1 + std::fabs(expect))) << i << "," << j;
    }
}

TEST(TeEndToEnd, MatmulReluOnOddStaticShapes) {
  const int64_t m = 37, n = 53, kk = 19;
  Module module = codegen::jit_compile({matmul_relu(m, n, kk, "matmul_relu")});
  std::mt19937 rng(7);
  Tensor a = random_tensor({m, kk}, rng), b = random_tensor({kk, n}, rng);
  Tensor d = Tensor::zeros({m, n}, DataType::float32());
  module.function("matmul_relu")(a, b, d);
  expect_matmul_relu(a, b, d);
}

TEST(TeEndToEnd, MatmulReluWithSymbolicShapesRunsOnSeveralSizes) {
  Var m = tir::VarNode::make("m"), n = tir::VarNode::make("n"), kk = tir::VarNode::make("k");
  Module module = codegen::jit_compile({matmul_relu(m, n, kk, "matmul_relu_dyn")});
  PackedFunc f = module.function("matmul_relu_dyn");
  std::mt19937 rng(11);
  for (auto [rows, cols, depth] :
       {std::tuple<int64_t, int64_t, int64_t>{37, 53, 19}, {1, 1, 1}, {5, 17, 64}}) {
    Tensor a = random_tensor({rows, depth}, rng), b = random_tensor({depth, cols}, rng);
    Tensor d = Tensor::zeros({rows, cols}, DataType::float32());
    f(a, b, d);
    expect_matmul_relu(a, b, d);
  }
}

TEST(TeEndToEnd, MismatchedShapeIsRefusedByTheKernel) {
  Module module = codegen::jit_compile({matmul_relu(4, 5, 6, "mm_checked")});
  std::mt19937 rng(3);
  Tensor a = random_tensor({4, 7}, rng), b = random_tensor({6, 5}, rng);
  Tensor d = Tensor::zeros({4, 5}, DataType::float32());
  try {
    module.function("mm_checked")(a, b, d);
    FAIL() << "a (4, 7) A must be refused where (4, 6) is declared";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mm_checked: argument 'A' dim 1"), std::string::npos)
        << e.what();
  }
}

TEST(TeEndToEnd, PaddedConvolutionMatchesPlainLoops) {
  // NCHW 3x3 convolution, zero padding 1, stride 1, with a padding compute in front.
  const int64_t c_in = 3, c_out = 5, h = 9, w = 11;
  te::Tensor data = te::placeholder({1, c_in, h, w}, DataType::float32(), "data");
  te::Tensor weight = te::placeholder({c_out, c_in, 3, 3}, DataType::float32(), "weight");
  te::Tensor pad = te::compute(
      {1, c_in, h + 2, w + 2},
      [&](const std::vector<Var>& i) {
        PrimExpr inside = tir::logical_and(tir::logical_and(i[2] >= 1, i[2] < h + 1),
                                           tir::logical_and(i[3] >= 1, i[3] < w + 1));
        return tir::call_intrin(DataType::float32(), "if_then_else",
                                {inside, data(i[0], i[1], i[2] - 1, i[3] - 1), f32(0)});
      },
      "pad");
  IterVar rc = te::reduce_axis(c_in, "rc"), ry = te::reduce_axis(3, "ry"),
          rx = te::reduce_axis(3, "rx");
  te::Tensor conv = te::compute({1, c_out, h, w},
                                [&](const std::vector<Var>& i) {
                                  return tir::sum(pad(i[0], rc.var, i[2] + ry.var, i[3] + rx.var) *
                                                      weight(i[1], rc.var, ry.var, rx.var),
                                                  {rc, ry, rx});
                                },
                                "conv", {"n", "f", "y", "x"});
  Module module = codegen::jit_compile(
      {tir::transform::lower(te::create_prim_func({data, weight, conv}, "conv3x3"))});
  std::mt19937 rng(5);
  Tensor x = random_tensor({1, c_in, h, w}, rng), k = random_tensor({c_out, c_in, 3, 3}, rng);
  Tensor y = Tensor::zeros({1, c_out, h, w}, DataType::float32());
  module.function("conv3x3")(x, k, y);
  const auto* px = static_cast<const float*>(x.data());
  const auto* pk = static_cast<const float*>(k.data());
  const auto* py = static_cast<const float*>(y.data());
  for (int64_t f = 0; f < c_out; ++f)
    for (int64_t r = 0; r < h; ++r)
      for (int64_t c = 0; c < w; ++c) {
        double acc = 0;
        for (int64_t ch = 0; ch < c_in; ++ch)
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              int64_t sr = r + ky - 1, sc = c + kx - 1;
              if (sr < 0 || sr >= h || sc < 0 || sc >= w) continue;
              acc += double(px[(ch * h + sr) * w + sc]) * pk[((f * c_in + ch) * 3 + ky) * 3 + kx];
            }
        ASSERT_NEAR(py[(f * h + r) * w + c], acc, 1e-4 * (1 + std::fabs(acc)))
            << f << "," << r << "," << c;
      }
}

}  // namespace
}  // namespace anvil
