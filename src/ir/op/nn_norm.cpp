// Normalization ops: batch/layer/group/instance norm, local response norm,
// softmax, log_softmax and hardmax, dropout, and the nll_loss of a
// log_softmax. Shapes, tuple outputs and fusion patterns follow TVM, so graphs
// print as in Relay (`%1 = %0.0` after a batch_norm) and the same inference
// simplifications apply.
#include "anvil/ir/attrs/nn_norm.h"

#include <optional>

#include "ir/op/dtype_check.h"
#include "ir/op/families.h"

namespace anvil::ir {

namespace {

using relation::DtypeClass;

// Input 0 as a floating-point tensor of known rank.
const TensorTypeNode& float_data(const RelationArgs& args) {
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  return args.tensor(0);
}

// Checks that input i is a vector of the data's dtype with one entry per
// channel of `axis` (gamma, beta, moving statistics).
void expect_channel_vector(const RelationArgs& args, size_t i, const TensorTypeNode& data,
                           int64_t axis) {
  const TensorTypeNode& param = args.tensor(i);
  if (param.dtype != data.dtype)
    throw_error(args.arg_name(i), " must have the dtype of data, got ", relation::describe(param),
                " for data ", relation::describe(data));
  relation::expect_rank(param, 1, args.arg_name(i));
  relation::expect_dim_equal((*param.shape)[0], (*data.shape)[axis],
                             str_cat(args.arg_name(i), " length (the channels along axis ", axis,
                                     " of data ", relation::describe(data), ")"));
}

void expect_epsilon(double epsilon) {
  // Written so that NaN fails too.
  if (!(epsilon >= 0)) throw_error("attribute 'epsilon' = ", epsilon, " must be non-negative");
}

Type batch_norm_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<BatchNormAttrs>();
  const TensorTypeNode& data = float_data(args);
  int64_t axis = relation::normalize_axis(attrs.axis, data.ndim());
  expect_epsilon(attrs.epsilon);
  for (size_t i = 1; i <= 4; ++i) expect_channel_vector(args, i, data, axis);
  // (normalized data, mean, variance) as in TVM; only field 0 matters for inference.
  Type stats = TensorTypeNode::make({(*data.shape)[axis]}, data.dtype);
  return TupleTypeNode::make({args.inputs[0], stats, stats});
}

// layer_norm, group_norm and instance_norm: data, gamma, beta -> data's type.
template <typename AttrsT>
Type affine_norm_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<AttrsT>();
  const TensorTypeNode& data = float_data(args);
  int64_t axis = relation::normalize_axis(attrs.axis, data.ndim());
  expect_epsilon(attrs.epsilon);
  expect_channel_vector(args, 1, data, axis);
  expect_channel_vector(args, 2, data, axis);
  return args.inputs[0];
}

Type instance_norm_relation(const RelationArgs& args) {
  const TensorTypeNode& data = float_data(args);
  // Statistics are taken over the axes after batch and channel; there must be some.
  if (data.ndim() < 3)
    throw_error(args.arg_name(0), " must have rank 3 or more (batch, channels, spatial...), got ",
                relation::describe(data));
  return affine_norm_relation<InstanceNormAttrs>(args);
}

Type group_norm_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<GroupNormAttrs>();
  const TensorTypeNode& data = float_data(args);
  int64_t axis = relation::normalize_axis(attrs.axis, data.ndim());
  if (attrs.num_groups <= 0)
    throw_error("attribute 'num_groups' = ", attrs.num_groups, " must be positive");
  std::optional<int64_t> channels = (*data.shape)[axis].as_int();
  if (channels && *channels % attrs.num_groups != 0)
    throw_error("the ", *channels, " channels along axis ", axis, " of data ",
                relation::describe(data),
                " must be divisible by attribute 'num_groups' = ", attrs.num_groups);
  return affine_norm_relation<GroupNormAttrs>(args);
}

Type lrn_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<LRNAttrs>();
  const TensorTypeNode& data = float_data(args);
  relation::normalize_axis(attrs.axis, data.ndim());
  if (attrs.size <= 0) throw_error("attribute 'size' = ", attrs.size, " must be positive");
  return args.inputs[0];
}

Type softmax_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<SoftmaxAttrs>();
  const TensorTypeNode& data = float_data(args);
  relation::normalize_axis(attrs.axis, data.ndim());
  return args.inputs[0];
}

// nn.nll_loss: predictions (N, C, d1, ...) of log-probabilities, integer
// targets (N, d1, ...) and one weight per class (C). The loss has the
// targets' shape without reduction, else it is a scalar.
Type nll_loss_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<NLLLossAttrs>();
  const TensorTypeNode& predictions = float_data(args);
  relation::expect_dtype_class(args, 1, DtypeClass::Integer);
  const TensorTypeNode& targets = args.tensor(1);
  if (predictions.ndim() < 2)
    throw_error(args.arg_name(0), " must have rank 2 or more (batch, classes, ...), got ",
                relation::describe(predictions));
  relation::expect_rank(targets, predictions.ndim() - 1, args.arg_name(1));
  const std::vector<Dim>& p = *predictions.shape;
  const std::vector<Dim>& t = *targets.shape;
  relation::expect_dim_equal(t[0], p[0], str_cat(args.arg_name(1), " dim 0 (the batch)"));
  for (size_t i = 1; i < t.size(); ++i)
    relation::expect_dim_equal(
        t[i], p[i + 1], str_cat(args.arg_name(1), " dim ", i, " (predictions dim ", i + 1, ")"));
  expect_channel_vector(args, 2, predictions, 1);
  if (attrs.reduction == "none") return TensorTypeNode::make(t, predictions.dtype);
  if (attrs.reduction == "sum" || attrs.reduction == "mean")
    return TensorTypeNode::make_scalar(predictions.dtype);
  throw_error("attribute 'reduction' = \"", attrs.reduction,
              "\" must be \"none\", \"sum\" or \"mean\"");
}

Type dropout_relation(const RelationArgs& args) {
  const auto& attrs = args.attrs_as<DropoutAttrs>();
  relation::expect_dtype_class(args, 0, DtypeClass::Float);
  if (!(attrs.rate >= 0 && attrs.rate < 1))
    throw_error("attribute 'rate' = ", attrs.rate, " must be in [0, 1)");
  // (output, mask) as in TVM, the mask in the data's dtype; inference uses field 0 only.
  return TupleTypeNode::make({args.inputs[0], args.inputs[0]});
}

}  // namespace

void register_nn_norm_ops(OpTable& table) {
  table.add("nn.batch_norm")
      .describe(
          "(data - moving_mean) / sqrt(moving_var + epsilon) * gamma + beta per channel; "
          "returns (out, mean, var)")
      .inputs({"data", "gamma", "beta", "moving_mean", "moving_var"})
      .attrs<BatchNormAttrs>()
      .type_relation(batch_norm_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.layer_norm")
      .describe("normalizes over axis, then scales by gamma and shifts by beta")
      .inputs({"data", "gamma", "beta"})
      .attrs<LayerNormAttrs>()
      .type_relation(affine_norm_relation<LayerNormAttrs>)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.group_norm")
      .describe("normalizes each group of channels of each sample, then gamma and beta per channel")
      .inputs({"data", "gamma", "beta"})
      .attrs<GroupNormAttrs>()
      .type_relation(group_norm_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.instance_norm")
      .describe("normalizes each channel of each sample, then gamma and beta per channel")
      .inputs({"data", "gamma", "beta"})
      .attrs<InstanceNormAttrs>()
      .type_relation(instance_norm_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.lrn")
      .describe("local response normalization across `size` neighbouring channels")
      .inputs({"data"})
      .attrs<LRNAttrs>()
      .type_relation(lrn_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.softmax")
      .describe("exp(x) / sum(exp(x)) along axis")
      .inputs({"data"})
      .attrs<SoftmaxAttrs>()
      .type_relation(softmax_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.log_softmax")
      .describe("x - log(sum(exp(x))) along axis")
      .inputs({"data"})
      .attrs<SoftmaxAttrs>()
      .type_relation(softmax_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.hardmax")
      .describe("1 at the first largest element along axis, 0 elsewhere")
      .inputs({"data"})
      .attrs<SoftmaxAttrs>()
      .type_relation(softmax_relation)
      .fusion_pattern(OpPattern::OutEWiseFusable);
  table.add("nn.nll_loss")
      .describe(
          "-predictions[n, target, d...] * weights[target], reduced by sum, weighted mean or none")
      .inputs({"predictions", "targets", "weights"})
      .attrs<NLLLossAttrs>()
      .type_relation(nll_loss_relation)
      .fusion_pattern(OpPattern::Opaque);
  table.add("nn.dropout")
      .describe("zeroes elements with probability rate while training; returns (out, mask)")
      .inputs({"data"})
      .attrs<DropoutAttrs>()
      .type_relation(dropout_relation)
      .fusion_pattern(OpPattern::Opaque);
}

}  // namespace anvil::ir
