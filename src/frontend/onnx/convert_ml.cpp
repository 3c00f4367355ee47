// The ai.onnx.ml domain: Binarizer and ArrayFeatureExtractor are plain tensor math;
// TreeEnsemble and TreeEnsembleRegressor become ml.tree_ensemble, a runtime function of the VM
// whose ensemble travels as constant tensors. (Its string and map ops are not converted.)
#include <map>
#include <set>

#include "frontend/onnx/convert_nn.h"
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {
namespace {

using ir::Expr;

// Binarizer: 1 where x > threshold, else 0, in x's dtype.
std::vector<Expr> convert_binarizer(ConvertContext& ctx) {
  const DataType t = ctx.input_tensor(0).dtype;
  Expr above =
      ctx.op("greater", {ctx.input(0), scalar_constant(ctx, ctx.attr_float("threshold", 0.0), t)});
  return {ctx.op("cast", {above}, {{"dtype", t}})};
}

// ArrayFeatureExtractor: the elements of the last axis at the (flattened) indices; a 1-D
// input gives one row (1, n), as ONNX Runtime does.
std::vector<Expr> convert_array_feature_extractor(ConvertContext& ctx) {
  const ir::TensorTypeNode& x = ctx.input_tensor(0);
  Expr indices = ctx.op("reshape", {ctx.input(1)}, {{"newshape", std::vector<int64_t>{-1}}});
  indices = ctx.op("cast", {indices}, {{"dtype", DataType::int64()}});
  Expr picked = ctx.op("take", {ctx.input(0), indices}, {{"axis", int64_t(-1)}});
  if (x.ndim() == 1) picked = ctx.op("expand_dims", {picked}, {{"axis", int64_t(0)}});
  return {picked};
}

// ---------------------------------------------------------------- tree ensembles

// An ensemble in ml.tree_ensemble's form (builtins::tree_ensemble): split nodes, leaves with
// their (target, weight) pairs, roots.
struct Ensemble {
  std::vector<int64_t> nodes;  // 7 fields a split node
  std::vector<double> splits, membership;
  std::vector<int64_t> roots;
  std::vector<std::vector<std::pair<int64_t, double>>> leaves;
  std::vector<double> base_values;
  int64_t aggregate = 1, post_transform = 0;

  void add_node(int64_t feature, int64_t mode, int64_t true_child, bool true_leaf,
                int64_t false_child, bool false_leaf, bool missing_true, double split) {
    nodes.insert(nodes.end(), {feature, mode, true_child, true_leaf ? 1 : 0, false_child,
                               false_leaf ? 1 : 0, missing_true ? 1 : 0});
    splits.push_back(split);
  }
};

Tensor float64_tensor(const std::vector<double>& values) {
  Tensor t = Tensor::empty({int64_t(values.size())}, DataType::float64());
  std::copy(values.begin(), values.end(), t.data_as<double>());
  return t;
}

Expr tree_ensemble_call(ConvertContext& ctx, Expr x, const Ensemble& e) {
  std::vector<int64_t> offsets{0}, targets;
  std::vector<double> weights;
  for (const auto& leaf : e.leaves) {
    for (auto [target, weight] : leaf) {
      if (target < 0 || target >= int64_t(e.base_values.size()))
        ctx.fail("a leaf names target ", target, ", outside the ", e.base_values.size(),
                 " targets (n_targets)");
      targets.push_back(target);
      weights.push_back(weight);
    }
    offsets.push_back(int64_t(targets.size()));
  }
  Tensor nodes = Tensor::empty({int64_t(e.splits.size()), 7}, DataType::int64());
  std::copy(e.nodes.begin(), e.nodes.end(), nodes.data_as<int64_t>());
  std::vector<Expr> args{std::move(x),
                         ctx.constant(nodes),
                         ctx.constant(float64_tensor(e.splits)),
                         ctx.constant(float64_tensor(e.membership)),
                         ints_constant(ctx, e.roots),
                         ints_constant(ctx, offsets),
                         ints_constant(ctx, targets),
                         ctx.constant(float64_tensor(weights)),
                         ctx.constant(float64_tensor(e.base_values)),
                         ints_constant(ctx, {e.aggregate, e.post_transform})};
  return ctx.op("ml.tree_ensemble", args);
}

// The values of a tensor attribute as doubles (empty when it is absent).
std::vector<double> tensor_attr_values(ConvertContext& ctx, const std::string& name) {
  if (!ctx.has_attr(name)) return {};
  Tensor t = ctx.attr_tensor(name);
  std::vector<double> values(size_t(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) values[size_t(i)] = t.get_as_double(i);
  return values;
}

// Checks that a per-node attribute has one value per node.
template <typename T>
void expect_per_node(ConvertContext& ctx, const std::vector<T>& values, const char* name,
                     size_t count, const char* of_what) {
  if (values.size() != count)
    ctx.fail("attribute '", name, "' has ", values.size(), " values for ", count, " ", of_what);
}

// TreeEnsemble (ai.onnx.ml 5): the nodes are already split nodes and leaves apart.
std::vector<Expr> convert_tree_ensemble(ConvertContext& ctx) {
  Ensemble e;
  const std::vector<int64_t> features = ctx.attr_ints("nodes_featureids");
  const size_t n = features.size();
  const std::vector<double> modes = tensor_attr_values(ctx, "nodes_modes");
  const std::vector<double> splits = tensor_attr_values(ctx, "nodes_splits");
  const std::vector<int64_t> true_ids = ctx.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> true_leafs = ctx.attr_ints("nodes_trueleafs");
  const std::vector<int64_t> false_ids = ctx.attr_ints("nodes_falsenodeids");
  const std::vector<int64_t> false_leafs = ctx.attr_ints("nodes_falseleafs");
  std::vector<int64_t> missing = ctx.attr_ints("nodes_missing_value_tracks_true");
  if (missing.empty()) missing.assign(n, 0);
  expect_per_node(ctx, modes, "nodes_modes", n, "nodes");
  expect_per_node(ctx, splits, "nodes_splits", n, "nodes");
  expect_per_node(ctx, true_ids, "nodes_truenodeids", n, "nodes");
  expect_per_node(ctx, true_leafs, "nodes_trueleafs", n, "nodes");
  expect_per_node(ctx, false_ids, "nodes_falsenodeids", n, "nodes");
  expect_per_node(ctx, false_leafs, "nodes_falseleafs", n, "nodes");
  expect_per_node(ctx, missing, "nodes_missing_value_tracks_true", n, "nodes");
  for (size_t i = 0; i < n; ++i)
    e.add_node(features[i], int64_t(modes[i]), true_ids[i], true_leafs[i] != 0, false_ids[i],
               false_leafs[i] != 0, missing[i] != 0, splits[i]);
  e.membership = tensor_attr_values(ctx, "membership_values");
  e.roots = ctx.attr_ints("tree_roots");
  const std::vector<int64_t> leaf_targets = ctx.attr_ints("leaf_targetids");
  const std::vector<double> leaf_weights = tensor_attr_values(ctx, "leaf_weights");
  expect_per_node(ctx, leaf_weights, "leaf_weights", leaf_targets.size(), "leaves");
  for (size_t i = 0; i < leaf_targets.size(); ++i)
    e.leaves.push_back({{leaf_targets[i], leaf_weights[i]}});
  const int64_t n_targets = ctx.attr_int("n_targets", 0);
  if (n_targets <= 0) ctx.fail("attribute 'n_targets' must be positive, got ", n_targets);
  e.base_values.assign(size_t(n_targets), 0.0);
  e.aggregate = ctx.attr_int("aggregate_function", 1);
  e.post_transform = ctx.attr_int("post_transform", 0);
  if (e.aggregate < 0 || e.aggregate > 3)
    ctx.fail("attribute 'aggregate_function' = ", e.aggregate, " is not 0-3");
  if (e.post_transform < 0 || e.post_transform > 4)
    ctx.fail("attribute 'post_transform' = ", e.post_transform, " is not 0-4");
  return {tree_ensemble_call(ctx, ctx.input(0), e)};
}

int64_t index_of(ConvertContext& ctx, const std::vector<std::string>& names,
                 const std::string& value, const char* attr) {
  auto it = std::find(names.begin(), names.end(), value);
  if (it == names.end()) ctx.fail("attribute '", attr, "' = '", value, "' is not supported");
  return int64_t(it - names.begin());
}

// TreeEnsembleRegressor (ai.onnx.ml 1 and 3): nodes and leaves share (tree id, node id)
// numbering and a leaf may carry several targets; they are split apart here, and a tree that
// is a single leaf gets a root whose two children are that leaf.
std::vector<Expr> convert_tree_ensemble_regressor(ConvertContext& ctx) {
  static const std::vector<std::string> kModes = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE",
                                                  "BRANCH_GT",  "BRANCH_EQ", "BRANCH_NEQ"};
  Ensemble e;
  const std::vector<int64_t> tree_ids = ctx.attr_ints("nodes_treeids");
  const size_t n = tree_ids.size();
  const std::vector<int64_t> node_ids = ctx.attr_ints("nodes_nodeids");
  const std::vector<int64_t> features = ctx.attr_ints("nodes_featureids");
  const std::vector<std::string> modes = ctx.attr_strings("nodes_modes");
  std::vector<double> values = ctx.has_attr("nodes_values_as_tensor")
                                   ? tensor_attr_values(ctx, "nodes_values_as_tensor")
                                   : ctx.attr_floats("nodes_values");
  if (values.empty()) values.assign(n, 0.0);
  const std::vector<int64_t> true_ids = ctx.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> false_ids = ctx.attr_ints("nodes_falsenodeids");
  std::vector<int64_t> missing = ctx.attr_ints("nodes_missing_value_tracks_true");
  if (missing.empty()) missing.assign(n, 0);
  expect_per_node(ctx, node_ids, "nodes_nodeids", n, "nodes");
  expect_per_node(ctx, features, "nodes_featureids", n, "nodes");
  expect_per_node(ctx, modes, "nodes_modes", n, "nodes");
  expect_per_node(ctx, values, "nodes_values", n, "nodes");
  expect_per_node(ctx, true_ids, "nodes_truenodeids", n, "nodes");
  expect_per_node(ctx, false_ids, "nodes_falsenodeids", n, "nodes");
  expect_per_node(ctx, missing, "nodes_missing_value_tracks_true", n, "nodes");

  // Each (tree, node) becomes a split node (with its comparison's code) or a leaf, numbered
  // apart.
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, bool>> index;  // -> (index, leaf)
  std::vector<int64_t> mode_codes(n, -1);
  int64_t splits = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool leaf = modes[i] == "LEAF";
    if (!leaf) mode_codes[i] = index_of(ctx, kModes, modes[i], "nodes_modes");
    const int64_t id = leaf ? int64_t(e.leaves.size()) : splits++;
    if (leaf) e.leaves.emplace_back();
    if (!index.emplace(std::pair(tree_ids[i], node_ids[i]), std::pair(id, leaf)).second)
      ctx.fail("tree ", tree_ids[i], " has node ", node_ids[i], " twice");
  }
  auto child = [&](int64_t tree, int64_t node) {
    auto it = index.find({tree, node});
    if (it == index.end()) ctx.fail("tree ", tree, " has no node ", node);
    return it->second;
  };
  std::map<int64_t, std::pair<int64_t, bool>> roots;  // the node no other node points to
  std::map<int64_t, std::set<std::pair<int64_t, bool>>> children;
  for (size_t i = 0; i < n; ++i) {
    if (mode_codes[i] < 0) continue;  // a leaf
    auto [true_child, true_leaf] = child(tree_ids[i], true_ids[i]);
    auto [false_child, false_leaf] = child(tree_ids[i], false_ids[i]);
    e.add_node(features[i], mode_codes[i], true_child, true_leaf, false_child, false_leaf,
               missing[i] != 0, values[i]);
    children[tree_ids[i]].insert({true_child, true_leaf});
    children[tree_ids[i]].insert({false_child, false_leaf});
  }
  for (size_t i = 0; i < n; ++i) {
    std::pair<int64_t, bool> me = index.at({tree_ids[i], node_ids[i]});
    if (!children[tree_ids[i]].count(me) && !roots.emplace(tree_ids[i], me).second)
      ctx.fail("tree ", tree_ids[i], " has more than one root");
  }
  for (auto [tree, root] : roots) {
    if (!root.second) {
      e.roots.push_back(root.first);
      continue;
    }
    e.roots.push_back(int64_t(e.splits.size()));
    e.add_node(0, 0, root.first, true, root.first, true, false, 0.0);
  }

  const std::vector<int64_t> target_trees = ctx.attr_ints("target_treeids");
  const std::vector<int64_t> target_nodes = ctx.attr_ints("target_nodeids");
  const std::vector<int64_t> target_ids = ctx.attr_ints("target_ids");
  const std::vector<double> target_weights =
      ctx.has_attr("target_weights_as_tensor") ? tensor_attr_values(ctx, "target_weights_as_tensor")
                                               : ctx.attr_floats("target_weights");
  expect_per_node(ctx, target_nodes, "target_nodeids", target_trees.size(), "targets");
  expect_per_node(ctx, target_ids, "target_ids", target_trees.size(), "targets");
  expect_per_node(ctx, target_weights, "target_weights", target_trees.size(), "targets");
  for (size_t i = 0; i < target_trees.size(); ++i) {
    auto [leaf, is_leaf] = child(target_trees[i], target_nodes[i]);
    if (!is_leaf)
      ctx.fail("target ", i, " names node ", target_nodes[i], " of tree ", target_trees[i],
               ", which is not a leaf");
    e.leaves[size_t(leaf)].push_back({target_ids[i], target_weights[i]});
  }
  const int64_t n_targets = ctx.attr_int("n_targets", 1);
  if (n_targets <= 0) ctx.fail("attribute 'n_targets' must be positive, got ", n_targets);
  e.base_values = ctx.has_attr("base_values_as_tensor")
                      ? tensor_attr_values(ctx, "base_values_as_tensor")
                      : ctx.attr_floats("base_values");
  if (e.base_values.empty()) e.base_values.assign(size_t(n_targets), 0.0);
  expect_per_node(ctx, e.base_values, "base_values", size_t(n_targets), "targets");
  e.aggregate = index_of(ctx, {"AVERAGE", "SUM", "MIN", "MAX"},
                         ctx.attr_string("aggregate_function", "SUM"), "aggregate_function");
  e.post_transform = index_of(ctx, {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"},
                              ctx.attr_string("post_transform", "NONE"), "post_transform");
  // The result is float32 whatever the features: float64 ones are compared as they are and
  // the scores rounded at the end, integer ones are compared as float32.
  Expr x = ctx.input(0);
  const DataType dtype = ctx.input_tensor(0).dtype;
  if (dtype != DataType::float32() && dtype != DataType::float64())
    x = ctx.op("cast", {x}, {{"dtype", DataType::float32()}});
  Expr y = tree_ensemble_call(ctx, x, e);
  if (dtype == DataType::float64()) y = ctx.op("cast", {y}, {{"dtype", DataType::float32()}});
  return {y};
}

}  // namespace

void register_ml_converters(ConverterTable& table) {
  const std::string ml = "ai.onnx.ml";
  table.add("Binarizer", 1, convert_binarizer, ml);
  table.add("ArrayFeatureExtractor", 1, convert_array_feature_extractor, ml);
  table.add("TreeEnsemble", 5, convert_tree_ensemble, ml);
  table.add("TreeEnsembleRegressor", 1, convert_tree_ensemble_regressor, ml);
}

}  // namespace anvil::frontend::onnx_import
