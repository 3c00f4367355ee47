// The MLC course's first end-to-end model at the tensor-IR level: linear0 and
// relu0 written as PrimFuncs in the text format with symbolic sizes, parsed,
// lowered, compiled with LLVM and called layer by layer on a 784 -> 128 -> 10
// MLP. The oracle is a plain C++ computation of the same network.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/parser.h"
#include "anvil/tir/transform.h"

namespace anvil {
namespace {

constexpr const char* kMlpKernels = R"(@T.prim_func
def linear0(x: T.handle, w: T.handle, b: T.handle, z: T.handle):
    T.func_attr({"global_symbol": "linear0", "tir.noalias": True})
    m, n = T.int64(), T.int64()
    X = T.match_buffer(x, (1, m), "float32")
    W = T.match_buffer(w, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    Z = T.match_buffer(z, (1, n), "float32")
    Y = T.alloc_buffer((1, n), "float32")
    for i, j, k in T.grid(1, n, m):
        with T.block("Y"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + X[vi, vk] * W[vj, vk]
    for i, j in T.grid(1, n):
        with T.block("Z"):
            vi, vj = T.axis.remap("SS", [i, j])
            Z[vi, vj] = Y[vi, vj] + B[vj]

@T.prim_func
def relu0(x: T.handle, y: T.handle):
    T.func_attr({"global_symbol": "relu0", "tir.noalias": True})
    n = T.int64()
    X = T.match_buffer(x, (1, n), "float32")
    Y = T.match_buffer(y, (1, n), "float32")
    for i, j in T.grid(1, n):
        with T.block("Y"):
            vi, vj = T.axis.remap("SS", [i, j])
            Y[vi, vj] = T.max(X[vi, vj], T.float32(0))
)";

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = Tensor::zeros(shape, DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

// z = x * w^T + b for x (1, m), w (n, m), b (n).
std::vector<float> linear_reference(const std::vector<float>& x, const Tensor& w, const Tensor& b) {
  int64_t n = w.shape()[0], m = w.shape()[1];
  const auto* pw = static_cast<const float*>(w.data());
  const auto* pb = static_cast<const float*>(b.data());
  std::vector<float> z(n);
  for (int64_t j = 0; j < n; ++j) {
    double acc = 0;
    for (int64_t k = 0; k < m; ++k) acc += double(x[k]) * pw[j * m + k];
    z[j] = float(acc + pb[j]);
  }
  return z;
}

TEST(MlcMlp, TextKernelsRunTheMlpLikePlainCpp) {
  std::vector<tir::PrimFunc> funcs = tir::parse_prim_funcs(kMlpKernels, "mlp.tir");
  ASSERT_EQ(funcs.size(), 2u);
  std::vector<tir::PrimFunc> lowered;
  for (const tir::PrimFunc& f : funcs) lowered.push_back(tir::transform::lower(f));
  Module module = codegen::jit_compile(lowered);
  PackedFunc linear0 = module.function("linear0");
  PackedFunc relu0 = module.function("relu0");

  std::mt19937 rng(0);
  Tensor x = random_tensor({1, 784}, rng);
  Tensor w0 = random_tensor({128, 784}, rng), b0 = random_tensor({128}, rng);
  Tensor w1 = random_tensor({10, 128}, rng), b1 = random_tensor({10}, rng);

  // One compiled linear0 serves both layers: its sizes are read from the tensors.
  Tensor lv0 = Tensor::zeros({1, 128}, DataType::float32());
  Tensor lv1 = Tensor::zeros({1, 128}, DataType::float32());
  Tensor out = Tensor::zeros({1, 10}, DataType::float32());
  linear0(x, w0, b0, lv0);
  relu0(lv0, lv1);
  linear0(lv1, w1, b1, out);

  const auto* px = static_cast<const float*>(x.data());
  std::vector<float> h = linear_reference(std::vector<float>(px, px + 784), w0, b0);
  for (float& v : h) v = std::max(v, 0.0f);
  std::vector<float> expect = linear_reference(h, w1, b1);
  const auto* po = static_cast<const float*>(out.data());
  for (int j = 0; j < 10; ++j) EXPECT_NEAR(po[j], expect[j], 1e-4 * (1 + std::fabs(expect[j])));
  const auto* ph = static_cast<const float*>(lv1.data());
  for (int j = 0; j < 128; ++j) EXPECT_NEAR(ph[j], h[j], 1e-4 * (1 + std::fabs(h[j])));
}

TEST(MlcMlp, MismatchedSizesAreReportedByTheKernel) {
  std::vector<tir::PrimFunc> funcs = tir::parse_prim_funcs(kMlpKernels, "mlp.tir");
  Module module = codegen::jit_compile({tir::transform::lower(funcs[0])});
  std::mt19937 rng(1);
  Tensor x = random_tensor({1, 784}, rng);
  Tensor w = random_tensor({128, 700}, rng), b = random_tensor({128}, rng);
  Tensor z = Tensor::zeros({1, 128}, DataType::float32());
  try {
    module.function("linear0")(x, w, b, z);
    FAIL() << "a 784-wide input against a 700-wide weight must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("linear0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil
