// Type relations of the linear-algebra family.
#include <gtest/gtest.h>

#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

Expr det(std::vector<Dim> shape, DataType dtype = DataType::float32()) {
  return call_op("linalg.det", {tensor_var("x", std::move(shape), dtype)});
}

TEST(LinalgDet, DropsTheMatrixDims) {
  const Dim n = Dim::var("n"), m = Dim::var("m");
  EXPECT_TRUE(is_tensor(infer_expr_type(det({3, 3})), {}, DataType::float32()));
  EXPECT_TRUE(is_tensor(infer_expr_type(det({2, 5, 4, 4}, DataType::float64())), {2, 5},
                        DataType::float64()));
  EXPECT_TRUE(is_tensor(infer_expr_type(det({n, m, m})), {n}, DataType::float32()));
  EXPECT_EQ(pattern_of("linalg.det"), OpPattern::Opaque);
}

TEST(LinalgDet, BadInputIsNamed) {
  EXPECT_TRUE(type_error_mentions(det({2, 3}), {"last two dims must be equal"}));
  EXPECT_TRUE(type_error_mentions(det({4}), {"rank 2 or more"}));
  EXPECT_TRUE(type_error_mentions(det({2, 2}, DataType::int32()), {"float32 or float64"}));
}

}  // namespace
}  // namespace anvil::ir
