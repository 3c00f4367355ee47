// The classical machine-learning family. ml.tree_ensemble runs as a runtime function of the
// VM (anvil/runtime/builtins.h): walking a tree is a chain of data-dependent branches, with
// no data-parallel form worth a compute.
#include "anvil/runtime/builtins.h"
#include "ir/op/families.h"
#include "ir/op/transform_util.h"

namespace anvil::ir {
namespace {

using namespace relation;

void expect_vector(const RelationArgs& args, size_t i, DataType dtype) {
  const TensorTypeNode& t = args.tensor(i);
  if (t.dtype != dtype || t.shape->size() != 1)
    throw_error(args.arg_name(i), " must be a ", dtype.to_string(), " vector, got ", describe(t));
}

// x [N, F] of a float type, the ensemble's tensors (see builtins::tree_ensemble), base_values
// [T] -> [N, T] of x's dtype.
Type tree_ensemble_relation(const RelationArgs& args) {
  const TensorTypeNode& x = args.tensor(0);
  if (x.dtype != DataType::float32() && x.dtype != DataType::float64() &&
      x.dtype != DataType::float16())
    throw_error(args.arg_name(0), " must be float32, float64 or float16, got ", describe(x));
  expect_rank(x, 2, args.arg_name(0));
  const TensorTypeNode& nodes = args.tensor(1);
  expect_rank(nodes, 2, args.arg_name(1));
  if (nodes.dtype != DataType::int64()) throw_error(args.arg_name(1), " must be int64");
  expect_dim_equal((*nodes.shape)[1], Dim(7), args.arg_name(1) + " dim 1 (the node fields)");
  expect_vector(args, 2, DataType::float64());
  expect_dim_equal((*args.tensor(2).shape)[0], (*nodes.shape)[0],
                   args.arg_name(2) + " dim 0 (one split per node)");
  expect_vector(args, 3, DataType::float64());
  expect_vector(args, 4, DataType::int64());
  expect_vector(args, 5, DataType::int64());
  expect_vector(args, 6, DataType::int64());
  expect_vector(args, 7, DataType::float64());
  expect_dim_equal((*args.tensor(7).shape)[0], (*args.tensor(6).shape)[0],
                   args.arg_name(7) + " dim 0 (one weight per leaf target)");
  expect_vector(args, 8, DataType::float64());
  expect_vector(args, 9, DataType::int64());
  expect_dim_equal((*args.tensor(9).shape)[0], Dim(2),
                   args.arg_name(9) + " (aggregate, post transform)");
  return TensorTypeNode::make({(*x.shape)[0], (*args.tensor(8).shape)[0]}, x.dtype);
}

}  // namespace

void register_ml_ops(OpTable& table) {
  table.add("ml.tree_ensemble")
      .describe(
          "A tree ensemble (ONNX TreeEnsemble, TreeEnsembleRegressor): each row walks every "
          "tree to a leaf, whose (target, weight) pairs are aggregated (average, sum, min, "
          "max), added to base_values and post-transformed (softmax, logistic, probit).")
      .inputs({"x", "nodes", "splits", "membership", "roots", "leaf_offsets", "leaf_targets",
               "leaf_weights", "base_values", "params"})
      .type_relation(tree_ensemble_relation)
      .fusion_pattern(OpPattern::Opaque)
      .set_extra("runtime_function", std::string(builtins::kTreeEnsemble));
}

}  // namespace anvil::ir
