// Type relations of the classical machine-learning family.
#include <gtest/gtest.h>

#include "relation_test_util.h"

namespace anvil::ir {
namespace {

using testing::is_tensor;
using testing::pattern_of;
using testing::tensor_var;
using testing::type_error_mentions;

// A tree ensemble of `nodes` split nodes, `pairs` leaf (target, weight) pairs and `targets`
// targets over x.
Expr tree_ensemble(std::vector<Dim> x_shape, DataType x_dtype, Dim nodes, Dim pairs, Dim targets,
                   Dim node_fields = 7, DataType split_dtype = DataType::float64()) {
  return call_op("ml.tree_ensemble", {tensor_var("x", std::move(x_shape), x_dtype),
                                      tensor_var("nodes", {nodes, node_fields}, DataType::int64()),
                                      tensor_var("splits", {nodes}, split_dtype),
                                      tensor_var("membership", {0}, DataType::float64()),
                                      tensor_var("roots", {3}, DataType::int64()),
                                      tensor_var("leaf_offsets", {5}, DataType::int64()),
                                      tensor_var("leaf_targets", {pairs}, DataType::int64()),
                                      tensor_var("leaf_weights", {pairs}, DataType::float64()),
                                      tensor_var("base_values", {targets}, DataType::float64()),
                                      tensor_var("params", {2}, DataType::int64())});
}

TEST(MlTreeEnsemble, GivesOneScorePerRowAndTarget) {
  const Dim n = Dim::var("n");
  EXPECT_TRUE(is_tensor(infer_expr_type(tree_ensemble({n, 4}, DataType::float32(), 9, 6, 2)),
                        {n, 2}, DataType::float32()));
  EXPECT_TRUE(is_tensor(infer_expr_type(tree_ensemble({8, 3}, DataType::float64(), 1, 1, 5)),
                        {8, 5}, DataType::float64()));
  EXPECT_TRUE(is_tensor(infer_expr_type(tree_ensemble({2, 3}, DataType::float16(), 4, 4, 1)),
                        {2, 1}, DataType::float16()));
  EXPECT_EQ(pattern_of("ml.tree_ensemble"), OpPattern::Opaque);
}

TEST(MlTreeEnsemble, BadInputIsNamed) {
  EXPECT_TRUE(type_error_mentions(tree_ensemble({4}, DataType::float32(), 3, 2, 1), {"'x'"}));
  EXPECT_TRUE(type_error_mentions(tree_ensemble({4, 2}, DataType::int32(), 3, 2, 1),
                                  {"'x'", "float32, float64 or float16"}));
  EXPECT_TRUE(type_error_mentions(tree_ensemble({4, 2}, DataType::float32(), 3, 2, 1, 6),
                                  {"'nodes'", "node fields"}));
  EXPECT_TRUE(type_error_mentions(
      tree_ensemble({4, 2}, DataType::float32(), 3, 2, 1, 7, DataType::float32()),
      {"'splits'", "float64"}));
}

}  // namespace
}  // namespace anvil::ir
