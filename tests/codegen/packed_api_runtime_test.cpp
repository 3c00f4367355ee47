// The entry checks of make_packed_api at run time: a JIT-compiled kernel is
// called with good arguments (result checked against plain C++) and with each
// kind of bad argument (the anvil::Error must carry the documented message).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "anvil/codegen/llvm.h"
#include "anvil/runtime/module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/support/error.h"
#include "anvil/tir/transform.h"

namespace anvil {
namespace {

using tir::Buffer;
using tir::BufferNode;
using tir::PrimExpr;
using tir::Var;
using tir::VarNode;

// matvec(A: f32[m, n], B: f32[n], C: f32[m], alpha: f32): C = alpha * (A @ B),
// written in lowered form over a flat view of A that shares its data pointer.
tir::PrimFunc matvec_func() {
  Var m = VarNode::make("m"), n = VarNode::make("n");
  Var a_handle = VarNode::make("A", DataType::handle());
  Var b_handle = VarNode::make("B", DataType::handle());
  Var c_handle = VarNode::make("C", DataType::handle());
  Var alpha = VarNode::make("alpha", DataType::float32());
  Buffer a = BufferNode::make("A", DataType::float32(), {m, n});
  Buffer b = BufferNode::make("B", DataType::float32(), {n});
  Buffer c = BufferNode::make("C", DataType::float32(), {m});
  Buffer a_flat = BufferNode::make_full(a->data, DataType::float32(), {m * n}, {}, tir::make_int(0),
                                        "A", "global", 64);
  Var i = VarNode::make("i"), j = VarNode::make("j");
  tir::Stmt update =
      tir::store(c, tir::load(c, {i}) + tir::load(a_flat, {i * n + j}) * tir::load(b, {j}), {i});
  tir::Stmt row = tir::seq_stmt({tir::store(c, tir::make_const(DataType::float32(), 0), {i}),
                                 tir::for_loop(j, 0, n, update),
                                 tir::store(c, tir::load(c, {i}) * alpha, {i})});
  tir::Stmt body = tir::for_loop(i, 0, m, row);
  ir::DictAttrs attrs = ir::DictAttrs{}.with("global_symbol", std::string("matvec"));
  return tir::PrimFuncNode::make({a_handle, b_handle, c_handle, alpha},
                                 {{a_handle, a}, {b_handle, b}, {c_handle, c}}, body, attrs);
}

class PackedApiRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    module_ = new Module(codegen::jit_compile({tir::transform::make_packed_api(matvec_func())}));
  }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }

  static Tensor filled(std::vector<int64_t> shape, DataType dtype = DataType::float32()) {
    Tensor t = Tensor::empty(std::move(shape), dtype);
    for (int64_t k = 0; k < t.numel(); ++k) t.set_from_double(k, double(k % 7) - 2);
    return t;
  }

  // Calls matvec and returns the error message ("" when the call succeeds).
  template <typename... Args>
  static std::string failure_of(Args&&... args) {
    try {
      module_->function("matvec")(std::forward<Args>(args)...);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  static Module* module_;
};

Module* PackedApiRuntime::module_ = nullptr;

// The kernel's own message is the end of the runtime's "kernel 'matvec' ... failed: ..." line.
#define EXPECT_KERNEL_MESSAGE(actual, expected)                                \
  do {                                                                         \
    std::string got = (actual), want = std::string(": ") + (expected);         \
    EXPECT_TRUE(got.size() >= want.size() &&                                   \
                got.compare(got.size() - want.size(), want.size(), want) == 0) \
        << "message: " << got << "\nexpected to end with: " << want;           \
  } while (0)

TEST_F(PackedApiRuntime, GoodArgumentsComputeTheProduct) {
  Tensor a = filled({3, 5}), b = filled({5}), c = Tensor::zeros({3}, DataType::float32());
  EXPECT_EQ(failure_of(a, b, c, 0.5), "");
  for (int64_t r = 0; r < 3; ++r) {
    double expected = 0;
    for (int64_t k = 0; k < 5; ++k) expected += a.get_as_double(r * 5 + k) * b.get_as_double(k);
    EXPECT_FLOAT_EQ(c.get_as_double(r), float(0.5 * expected)) << "row " << r;
  }
}

TEST_F(PackedApiRuntime, WrongArgumentCount) {
  Tensor a = filled({3, 5}), b = filled({5}), c = filled({3});
  EXPECT_KERNEL_MESSAGE(failure_of(a, b, c), "matvec: expected 4 arguments");
}

TEST_F(PackedApiRuntime, WrongArgumentKinds) {
  Tensor a = filled({3, 5}), b = filled({5}), c = filled({3});
  EXPECT_KERNEL_MESSAGE(failure_of(a, int64_t(1), c, 0.5), "matvec: argument 'B' must be a tensor");
  EXPECT_KERNEL_MESSAGE(failure_of(a, b, c, int64_t(2)),
                        "matvec: argument 'alpha' must be a float");
}

TEST_F(PackedApiRuntime, WrongRank) {
  Tensor a = filled({15}), b = filled({5}), c = filled({3});
  EXPECT_KERNEL_MESSAGE(failure_of(a, b, c, 0.5), "matvec: argument 'A' must have rank 2");
}

TEST_F(PackedApiRuntime, WrongDtype) {
  Tensor a = filled({3, 5}, DataType::float64()), b = filled({5}), c = filled({3});
  EXPECT_KERNEL_MESSAGE(failure_of(a, b, c, 0.5), "matvec: argument 'A' must be float32");
  Tensor c_int = filled({3}, DataType::int32());
  EXPECT_KERNEL_MESSAGE(failure_of(filled({3, 5}), b, c_int, 0.5),
                        "matvec: argument 'C' must be float32");
}

TEST_F(PackedApiRuntime, MismatchedShapes) {
  Tensor a = filled({3, 5}), c = filled({3});
  EXPECT_KERNEL_MESSAGE(failure_of(a, filled({6}), c, 0.5),
                        "matvec: argument 'B' dim 0 must be n (= A dim 1)");
  EXPECT_KERNEL_MESSAGE(failure_of(a, filled({5}), filled({4}), 0.5),
                        "matvec: argument 'C' dim 0 must be m (= A dim 0)");
}

TEST_F(PackedApiRuntime, NonCompactStrides) {
  // Every other column of a 3 x 10 matrix: shape (3, 5), strides (10, 2).
  std::vector<float> storage(30, 1.0f);
  Tensor a = Tensor::wrap(storage.data(), {3, 5}, DataType::float32(), {10, 2});
  EXPECT_KERNEL_MESSAGE(failure_of(a, filled({5}), filled({3}), 0.5),
                        "matvec: argument 'A' must be compact (row-major strides)");
  // Explicit strides that happen to be compact are accepted.
  Tensor compact = Tensor::wrap(storage.data(), {3, 5}, DataType::float32(), {5, 1});
  EXPECT_EQ(failure_of(compact, filled({5}), filled({3}), 0.5), "");
}

}  // namespace
}  // namespace anvil
