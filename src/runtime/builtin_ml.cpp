// Classical machine-learning runtime functions (anvil/runtime/builtins.h): tree ensembles.
// Walking a tree is a chain of data-dependent branches, one per level, so it runs as a
// runtime function rather than as a compute.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "anvil/runtime/builtins.h"
#include "anvil/support/error.h"
#include "runtime/builtin_registration.h"

namespace anvil::builtins {
namespace {

enum class Compare : int64_t { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };
enum class Aggregate : int64_t { kAverage, kSum, kMin, kMax };
enum class PostTransform : int64_t { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

struct TreeNode {
  int64_t feature;
  Compare mode;
  int64_t true_child, false_child;
  bool true_is_leaf, false_is_leaf, missing_goes_true;
  double split;
  std::vector<double> members;  // sorted; for kMember
};

std::vector<int64_t> int64_values(const Tensor& t, const char* what) {
  if (t.dtype() != DataType::int64()) throw_error("tree_ensemble: ", what, " must be int64");
  return std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + t.numel());
}

std::vector<double> float64_values(const Tensor& t, const char* what) {
  if (t.dtype() != DataType::float64()) throw_error("tree_ensemble: ", what, " must be float64");
  return std::vector<double>(t.data_as<double>(), t.data_as<double>() + t.numel());
}

bool goes_true(const TreeNode& node, double value) {
  if (std::isnan(value) && node.missing_goes_true) return true;
  switch (node.mode) {
    case Compare::kLeq:
      return value <= node.split;
    case Compare::kLt:
      return value < node.split;
    case Compare::kGte:
      return value >= node.split;
    case Compare::kGt:
      return value > node.split;
    case Compare::kEq:
      return value == node.split;
    case Compare::kNeq:
      return value != node.split;
    case Compare::kMember:  // (a NaN is no member; binary_search would find it everywhere)
      return !std::isnan(value) &&
             std::binary_search(node.members.begin(), node.members.end(), value);
  }
  return false;
}

// The inverse of the error function: an estimate refined by Newton steps on erf.
double erf_inverse(double y) {
  if (y <= -1) return -std::numeric_limits<double>::infinity();
  if (y >= 1) return std::numeric_limits<double>::infinity();
  const double a = 0.147, pi = 3.14159265358979323846;
  const double log_term = std::log((1 - y) * (1 + y));
  const double first = 2 / (pi * a) + log_term / 2;
  double x = std::copysign(std::sqrt(std::sqrt(first * first - log_term / a) - first), y);
  for (int step = 0; step < 3; ++step)
    x -= (std::erf(x) - y) / (2 / std::sqrt(pi) * std::exp(-x * x));
  return x;
}

void post_transform(PostTransform transform, std::vector<double>& scores) {
  switch (transform) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (double& s : scores) s = 1 / (1 + std::exp(-s));
      return;
    case PostTransform::kProbit:
      for (double& s : scores) s = std::sqrt(2.0) * erf_inverse(2 * s - 1);
      return;
    case PostTransform::kSoftmax:
    case PostTransform::kSoftmaxZero: {
      const bool keep_zeros = transform == PostTransform::kSoftmaxZero;
      double largest = -std::numeric_limits<double>::infinity();
      for (double s : scores)
        if (!keep_zeros || s != 0) largest = std::max(largest, s);
      double total = 0;
      for (double& s : scores) {
        s = keep_zeros && s == 0 ? 0 : std::exp(s - largest);
        total += s;
      }
      if (total > 0)
        for (double& s : scores) s /= total;
      return;
    }
  }
}

}  // namespace

Tensor tree_ensemble(const Tensor& x, const Tensor& nodes_tensor, const Tensor& splits_tensor,
                     const Tensor& membership_tensor, const Tensor& roots_tensor,
                     const Tensor& leaf_offsets_tensor, const Tensor& leaf_targets_tensor,
                     const Tensor& leaf_weights_tensor, const Tensor& base_values_tensor,
                     const Tensor& params_tensor) {
  const DataType dtype = x.dtype();
  if (dtype != DataType::float32() && dtype != DataType::float64() && dtype != DataType::float16())
    throw_error("tree_ensemble: x must be float32, float64 or float16, got ", dtype.to_string());
  if (x.ndim() != 2)
    throw_error("tree_ensemble: x must be [rows, features], got shape ",
                shape_to_string(x.shape()));
  const std::vector<int64_t> raw_nodes = int64_values(nodes_tensor, "nodes");
  const std::vector<double> splits = float64_values(splits_tensor, "splits");
  const std::vector<double> membership = float64_values(membership_tensor, "membership");
  const std::vector<int64_t> roots = int64_values(roots_tensor, "roots");
  const std::vector<int64_t> offsets = int64_values(leaf_offsets_tensor, "leaf_offsets");
  const std::vector<int64_t> targets = int64_values(leaf_targets_tensor, "leaf_targets");
  const std::vector<double> weights = float64_values(leaf_weights_tensor, "leaf_weights");
  const std::vector<double> base_values = float64_values(base_values_tensor, "base_values");
  const std::vector<int64_t> params = int64_values(params_tensor, "params");
  if (raw_nodes.size() % 7 != 0 || raw_nodes.size() / 7 != splits.size())
    throw_error("tree_ensemble: nodes must be [", splits.size(), ", 7] (one row per split), got ",
                raw_nodes.size(), " values");
  if (params.size() != 2 || params[0] < 0 || params[0] > 3 || params[1] < 0 || params[1] > 4)
    throw_error("tree_ensemble: params must be (aggregate 0-3, post transform 0-4)");
  if (offsets.empty() || offsets.front() != 0 || offsets.back() != int64_t(targets.size()) ||
      targets.size() != weights.size() || !std::is_sorted(offsets.begin(), offsets.end()))
    throw_error("tree_ensemble: leaf_offsets must rise from 0 to the ", targets.size(),
                " (target, weight) pairs");
  const int64_t features = x.shape()[1];
  const int64_t num_targets = int64_t(base_values.size());
  const int64_t num_leaves = int64_t(offsets.size()) - 1;
  for (int64_t t : targets)
    if (t < 0 || t >= num_targets)
      throw_error("tree_ensemble: leaf target ", t, " is outside the ", num_targets, " targets");

  std::vector<TreeNode> tree_nodes(splits.size());
  size_t member_cursor = 0;
  for (size_t i = 0; i < tree_nodes.size(); ++i) {
    const int64_t* row = &raw_nodes[i * 7];
    TreeNode& node = tree_nodes[i];
    node.feature = row[0];
    if (row[1] < 0 || row[1] > 6)
      throw_error("tree_ensemble: node ", i, " has mode ", row[1], ", not 0-6");
    node.mode = Compare(row[1]);
    node.true_child = row[2];
    node.true_is_leaf = row[3] != 0;
    node.false_child = row[4];
    node.false_is_leaf = row[5] != 0;
    node.missing_goes_true = row[6] != 0;
    node.split = splits[i];
    if (node.feature < 0 || node.feature >= features)
      throw_error("tree_ensemble: node ", i, " reads feature ", node.feature, " of x's ", features);
    for (auto [child, leaf] : {std::pair(node.true_child, node.true_is_leaf),
                               std::pair(node.false_child, node.false_is_leaf)})
      if (child < 0 || child >= (leaf ? num_leaves : int64_t(tree_nodes.size())))
        throw_error("tree_ensemble: node ", i, " has child ", leaf ? "leaf " : "node ", child,
                    ", out of range");
    if (node.mode == Compare::kMember) {
      while (member_cursor < membership.size() && !std::isnan(membership[member_cursor]))
        node.members.push_back(membership[member_cursor++]);
      if (member_cursor == membership.size())
        throw_error("tree_ensemble: membership has too few NaN-ended sets for the member nodes");
      ++member_cursor;
      std::sort(node.members.begin(), node.members.end());
    }
  }
  for (int64_t root : roots)
    if (root < 0 || root >= int64_t(tree_nodes.size()))
      throw_error("tree_ensemble: root ", root, " is outside the ", tree_nodes.size(), " nodes");

  const auto aggregate = Aggregate(params[0]);
  const auto transform = PostTransform(params[1]);
  const int64_t rows = x.shape()[0];
  Tensor out = Tensor::empty({rows, num_targets}, dtype);
  std::vector<double> row(static_cast<size_t>(features)), scores(static_cast<size_t>(num_targets));
  std::vector<bool> scored(static_cast<size_t>(num_targets));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t f = 0; f < features; ++f) row[size_t(f)] = x.get_as_double(r * features + f);
    std::fill(scores.begin(), scores.end(), 0.0);
    std::fill(scored.begin(), scored.end(), false);
    for (int64_t root : roots) {
      int64_t index = root;
      bool is_leaf = false;
      // A walk longer than the node count has met a cycle.
      for (size_t steps = 0; !is_leaf; ++steps) {
        if (steps > tree_nodes.size())
          throw_error("tree_ensemble: the tree at root ", root, " has a cycle");
        const TreeNode& node = tree_nodes[size_t(index)];
        const bool take_true = goes_true(node, row[size_t(node.feature)]);
        index = take_true ? node.true_child : node.false_child;
        is_leaf = take_true ? node.true_is_leaf : node.false_is_leaf;
      }
      for (int64_t p = offsets[size_t(index)]; p < offsets[size_t(index) + 1]; ++p) {
        const size_t t = size_t(targets[size_t(p)]);
        const double w = weights[size_t(p)];
        if (aggregate == Aggregate::kMin)
          scores[t] = scored[t] ? std::min(scores[t], w) : w;
        else if (aggregate == Aggregate::kMax)
          scores[t] = scored[t] ? std::max(scores[t], w) : w;
        else
          scores[t] += w;
        scored[t] = true;
      }
    }
    for (size_t t = 0; t < scores.size(); ++t) {
      if (aggregate == Aggregate::kAverage && !roots.empty()) scores[t] /= double(roots.size());
      scores[t] += base_values[t];
    }
    post_transform(transform, scores);
    for (int64_t t = 0; t < num_targets; ++t)
      out.set_from_double(r * num_targets + t, scores[size_t(t)]);
  }
  return out;
}

namespace {

const bool kRegistered = [] {
  detail::register_runtime_function(kTreeEnsemble, &tree_ensemble);
  return true;
}();

}  // namespace

}  // namespace anvil::builtins
