// Normalization (BatchNormalization, InstanceNormalization,
// LayerNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
// LpNormalization), the Softmax family, Dropout, and the losses that follow a
// log-softmax (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss). Everything
// is imported for inference: training-mode nodes are rejected by name.
#include "frontend/onnx/converter_families.h"

namespace anvil::frontend::onnx_import {

using namespace ir;

namespace {

// Field `index` of a tuple-valued expression; a folded tuple of constants
// gives its constant directly, so later nodes can fold too.
Expr tuple_item(ConvertContext& ctx, const Expr& tuple, int index) {
  if (const auto* folded = as<TupleNode>(tuple)) return folded->fields.at(size_t(index));
  return ctx.typed(TupleGetItemNode::make(tuple, index));
}

// A constant of the given shape and dtype with every element `value`.
Expr filled(ConvertContext& ctx, std::vector<int64_t> shape, DataType dtype, double value) {
  Tensor t = Tensor::empty(std::move(shape), dtype);
  t.fill(value);
  return ctx.constant(t);
}

DataType dtype_of(ConvertContext& ctx, size_t i) { return ctx.input_tensor(i).dtype; }

// Axis in [-rank, rank) as a non-negative axis; fails naming the attribute otherwise.
int64_t node_axis(ConvertContext& ctx, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    ctx.fail("attribute 'axis' = ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// The dims from `first` to the last, as a reduction axis list.
std::vector<int64_t> trailing_axes(int64_t first, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first; a < rank; ++a) axes.push_back(a);
  return axes;
}

// ---------------------------------------------------------------- batch and instance norm

// BatchNormalization-14/15 with training_mode=1: normalized by the batch's own mean and
// (population) variance over every axis but the channels; outputs 1 and 2 are the running
// statistics moved toward them, momentum * running + (1 - momentum) * batch.
std::vector<Expr> batch_norm_training(ConvertContext& ctx) {
  const TensorTypeNode& x_type = ctx.input_tensor(0);
  std::vector<int64_t> axes;
  for (int64_t a = 0; a < x_type.ndim(); ++a)
    if (a != 1) axes.push_back(a);
  const Expr& x = ctx.input(0);
  Expr mean = ctx.op("mean", {x}, {{"axis", axes}, {"keepdims", true}});
  Expr variance = ctx.op("variance", {x, mean}, {{"axis", axes}, {"keepdims", true}});
  auto per_channel = [&](const Expr& e) {
    return ctx.op("reshape", {e}, {{"newshape", std::vector<int64_t>{-1}}});
  };
  Expr batch_mean = per_channel(mean), batch_var = per_channel(variance);
  Expr bn = ctx.op("nn.batch_norm", {x, ctx.input(1), ctx.input(2), batch_mean, batch_var},
                   {{"axis", int64_t(1)}, {"epsilon", ctx.attr_float("epsilon", 1e-5)}});
  const double momentum = ctx.attr_float("momentum", 0.9);
  auto moved = [&](size_t running, const Expr& batch) {
    return ctx.op(
        "add", {ctx.op("multiply", {ctx.input(running), filled(ctx, {}, x_type.dtype, momentum)}),
                ctx.op("multiply", {batch, filled(ctx, {}, x_type.dtype, 1 - momentum)})});
  };
  return {tuple_item(ctx, bn, 0), moved(3, batch_mean), moved(4, batch_var)};
}

std::vector<Expr> convert_batch_norm(ConvertContext& ctx) {
  if (ctx.attr_int("training_mode", 0) != 0) {
    if (ctx.opset() < 14) ctx.fail("training_mode exists from opset 14 on");
    return batch_norm_training(ctx);
  }
  if (ctx.opset() < 9 && ctx.attr_int("spatial", 1) == 0)
    ctx.fail("spatial=0 (statistics per activation rather than per channel) is not supported");
  // Before opset 14 the extra outputs exist only in training; from 14 only with training_mode.
  for (int i = 1; i < ctx.node().output_size(); ++i)
    if (ctx.output_requested(i))
      ctx.fail("output ", i, " ('", ctx.node().output(i),
               "') holds training statistics; only inference (output 0) is supported");
  Expr bn = ctx.op("nn.batch_norm",
                   {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                   {{"axis", int64_t(1)}, {"epsilon", ctx.attr_float("epsilon", 1e-5)}});
  return {tuple_item(ctx, bn, 0)};
}

std::vector<Expr> convert_instance_norm(ConvertContext& ctx) {
  return {ctx.op("nn.instance_norm", {ctx.input(0), ctx.input(1), ctx.input(2)},
                 {{"axis", int64_t(1)}, {"epsilon", ctx.attr_float("epsilon", 1e-5)}})};
}

// ---------------------------------------------------------------- layer norm

// Normalizes over the dims from `axis` on. The common transformer case (the
// last axis, per-feature scale and bias) is one nn.layer_norm; other axes,
// the Mean and InvStdDev outputs, and a stash_type other than the data's are
// built from mean, variance and elementwise ops as the ONNX function body is.
std::vector<Expr> convert_layer_norm(ConvertContext& ctx) {
  const Expr& x = ctx.input(0);
  const TensorTypeNode& x_type = ctx.input_tensor(0);
  int64_t rank = x_type.ndim();
  int64_t axis = node_axis(ctx, ctx.attr_int("axis", -1), rank);
  double epsilon = ctx.attr_float("epsilon", 1e-5);
  DataType stash = onnx_dtype(int32_t(ctx.attr_int("stash_type", 1)), "attribute 'stash_type'");
  bool has_bias = ctx.has_input(2);
  bool want_stats = ctx.output_requested(1) || ctx.output_requested(2);

  auto is_feature_vector = [&](size_t i) {
    const TensorTypeNode& t = ctx.input_tensor(i);
    return t.ndim() == 1 && (*t.shape)[0] == (*x_type.shape)[size_t(axis)];
  };
  Expr y;
  if (axis == rank - 1 && x_type.dtype == stash && is_feature_vector(1) &&
      (!has_bias || is_feature_vector(2))) {
    // Without a bias, beta is unused (center=false); gamma stands in for it.
    y = ctx.op("nn.layer_norm", {x, ctx.input(1), has_bias ? ctx.input(2) : ctx.input(1)},
               {{"axis", axis}, {"epsilon", epsilon}, {"center", has_bias}});
    if (!want_stats) return {y};
  }

  Expr xs = x_type.dtype == stash ? x : ctx.op("cast", {x}, {{"dtype", stash}});
  std::vector<int64_t> axes = trailing_axes(axis, rank);
  Expr mean = ctx.op("mean", {xs}, {{"axis", axes}, {"keepdims", true}});
  Expr variance = ctx.op("variance", {xs, mean}, {{"axis", axes}, {"keepdims", true}});
  Expr inv_std_dev = ctx.op("rsqrt", {ctx.op("add", {variance, filled(ctx, {}, stash, epsilon)})});
  if (!y) {
    Expr normalized = ctx.op("multiply", {ctx.op("subtract", {xs, mean}), inv_std_dev});
    if (x_type.dtype != stash) normalized = ctx.op("cast", {normalized}, {{"dtype", x_type.dtype}});
    y = ctx.op("multiply", {normalized, ctx.input(1)});
    if (has_bias) y = ctx.op("add", {y, ctx.input(2)});
  }
  return {y, mean, inv_std_dev};
}

// ---------------------------------------------------------------- group norm

// Opset 18 gives scale and bias per group, opset 21 per channel; nn.group_norm
// takes them per channel, so the opset-18 ones are repeated over each group.
ConverterFn convert_group_norm(bool per_channel_scale) {
  return [per_channel_scale](ConvertContext& ctx) -> std::vector<Expr> {
    int64_t groups = ctx.required_int("num_groups");
    const TensorTypeNode& x_type = ctx.input_tensor(0);
    if (x_type.ndim() < 2) ctx.fail("input X must have rank 2 or more, got ", x_type.ndim());
    Expr scale = ctx.input(1), bias = ctx.input(2);
    if (!per_channel_scale) {
      std::optional<int64_t> channels = (*x_type.shape)[1].as_int();
      if (!channels)
        ctx.fail(
            "the channel count of X must be known at import time to spread the per-group "
            "scale over channels");
      if (groups <= 0 || *channels % groups != 0)
        ctx.fail(*channels, " channels do not split into num_groups = ", groups, " groups");
      int64_t per_group = *channels / groups;
      scale = ctx.op("repeat", {scale}, {{"repeats", per_group}, {"axis", int64_t(0)}});
      bias = ctx.op("repeat", {bias}, {{"repeats", per_group}, {"axis", int64_t(0)}});
    }
    return {ctx.op("nn.group_norm", {ctx.input(0), scale, bias},
                   {{"num_groups", groups},
                    {"axis", int64_t(1)},
                    {"epsilon", ctx.attr_float("epsilon", 1e-5)}})};
  };
}

// ---------------------------------------------------------------- lrn, mvn, lp

std::vector<Expr> convert_lrn(ConvertContext& ctx) {
  return {ctx.op("nn.lrn", {ctx.input(0)},
                 {{"size", ctx.required_int("size")},
                  {"axis", int64_t(1)},
                  {"alpha", ctx.attr_float("alpha", 1e-4)},
                  {"beta", ctx.attr_float("beta", 0.75)},
                  {"bias", ctx.attr_float("bias", 1.0)}})};
}

// (X - mean) / (sqrt(variance) + 1e-9) over `axes`, the epsilon where the
// ONNX function body puts it.
std::vector<Expr> convert_mean_variance_norm(ConvertContext& ctx) {
  const Expr& x = ctx.input(0);
  std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
  Expr mean = ctx.op("mean", {x}, {{"axis", axes}, {"keepdims", true}});
  Expr variance = ctx.op("variance", {x, mean}, {{"axis", axes}, {"keepdims", true}});
  Expr std_dev =
      ctx.op("add", {ctx.op("sqrt", {variance}), filled(ctx, {}, dtype_of(ctx, 0), 1e-9)});
  return {ctx.op("divide", {ctx.op("subtract", {x, mean}), std_dev})};
}

// x divided by its L1 or L2 norm along axis.
std::vector<Expr> convert_lp_norm(ConvertContext& ctx) {
  int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) ctx.fail("attribute 'p' = ", p, " must be 1 or 2");
  const Expr& x = ctx.input(0);
  Expr norm =
      ctx.op(p == 1 ? "l1_norm" : "l2_norm", {x},
             {{"axis", std::vector<int64_t>{ctx.attr_int("axis", -1)}}, {"keepdims", true}});
  // A zero norm gives zeros, not 0/0 (the ONNX reference from onnx 1.20 on).
  const DataType t = ctx.input_tensor(0).dtype;
  Tensor zero = Tensor::empty({}, t);
  zero.set_from_double(0, 0);
  Expr zero_value = ctx.constant(zero);
  return {ctx.op("where",
                 {ctx.op("equal", {norm, zero_value}), zero_value, ctx.op("divide", {x, norm})})};
}

// ---------------------------------------------------------------- softmax family

// Softmax, LogSoftmax and Hardmax. From opset 13 they act along one axis
// (default -1); before, the input is seen as 2-D, the dims before axis
// (default 1) as rows and the dims from axis on as one row, which is what
// flatten gives.
ConverterFn softmax_like(const char* op, bool coerce_to_2d) {
  return [op, coerce_to_2d](ConvertContext& ctx) -> std::vector<Expr> {
    const Expr& x = ctx.input(0);
    const TensorTypeNode& x_type = ctx.input_tensor(0);
    int64_t rank = x_type.ndim();
    int64_t axis = node_axis(ctx, ctx.attr_int("axis", coerce_to_2d ? 1 : -1), rank);
    if (!coerce_to_2d || axis == rank - 1) return {ctx.op(op, {x}, {{"axis", axis}})};
    Expr rows = ctx.op("flatten", {x}, {{"axis", axis}});
    Expr y = ctx.op(op, {rows}, {{"axis", int64_t(1)}});
    if (std::optional<std::vector<int64_t>> shape = x_type.static_shape())
      return {ctx.op("reshape", {y}, {{"newshape", *shape}})};
    return {ctx.op("dyn.reshape", {y, ctx.op("shape_of", {x})})};
  };
}

// ---------------------------------------------------------------- dropout

// Inference: the data passes through and the mask keeps everything. The mask
// is bool from opset 10 and of the data's type before.
std::vector<Expr> convert_dropout(ConvertContext& ctx) {
  const Expr& x = ctx.input(0);
  double ratio = ctx.attr_float("ratio", 0.5);
  bool training = false;
  if (ctx.opset() >= 12) {
    if (std::optional<Tensor> r = ctx.input_constant(1)) ratio = r->get_as_double(0);
    if (ctx.has_input(2)) {
      std::optional<Tensor> mode = ctx.input_constant(2);
      if (!mode)
        ctx.fail(
            "training_mode (input 2) must be a constant to be imported; it is computed at "
            "run time");
      training = mode->get_as_double(0) != 0;
    }
  }
  // A ratio given at run time only matters in training; inference ignores it.
  if (training && ratio != 0)
    ctx.fail("training_mode=1 drops elements at random; only inference is supported");
  Expr dropout = ctx.op("nn.dropout", {x}, {{"rate", ratio >= 0 && ratio < 1 ? ratio : 0.5}});
  std::vector<Expr> outputs = {tuple_item(ctx, dropout, 0)};
  if (ctx.output_requested(1)) {
    DataType mask_dtype = ctx.opset() >= 10 ? DataType::boolean() : dtype_of(ctx, 0);
    if (std::optional<std::vector<int64_t>> shape = ctx.input_tensor(0).static_shape()) {
      outputs.push_back(filled(ctx, *shape, mask_dtype, 1));
    } else {
      outputs.push_back(ctx.op("cast", {tuple_item(ctx, dropout, 1)}, {{"dtype", mask_dtype}}));
    }
  }
  return outputs;
}

// ---------------------------------------------------------------- losses

// nn.nll_loss of log-probabilities; without weights every class weighs 1.
Expr nll_loss(ConvertContext& ctx, const Expr& log_prob, const TensorTypeNode& scores) {
  Expr weights;
  if (ctx.has_input(2)) {
    weights = ctx.input(2);
  } else {
    if (scores.ndim() < 2) ctx.fail("input 0 must have rank 2 or more (batch, classes, ...)");
    std::optional<int64_t> classes = (*scores.shape)[1].as_int();
    if (!classes)
      ctx.fail("the class count (input 0 dim 1) must be known when no weights are given");
    weights = filled(ctx, {*classes}, scores.dtype, 1);
  }
  std::vector<std::pair<std::string, AttrValue>> attrs = {
      {"reduction", ctx.attr_string("reduction", "mean")}};
  if (ctx.has_attr("ignore_index"))
    attrs.emplace_back("ignore_index", ctx.attr_int("ignore_index", 0));
  return ctx.op("nn.nll_loss", {log_prob, ctx.input(1), weights}, attrs);
}

std::vector<Expr> convert_nll_loss(ConvertContext& ctx) {
  return {nll_loss(ctx, ctx.input(0), ctx.input_tensor(0))};
}

// The loss of log_softmax over the classes (axis 1); output 1 is that log_softmax.
std::vector<Expr> convert_softmax_cross_entropy(ConvertContext& ctx) {
  Expr log_prob = ctx.op("nn.log_softmax", {ctx.input(0)}, {{"axis", int64_t(1)}});
  return {nll_loss(ctx, log_prob, ctx.input_tensor(0)), log_prob};
}

}  // namespace

void register_norm_converters(ConverterTable& table) {
  table.add("BatchNormalization", 1, convert_batch_norm);
  table.add("InstanceNormalization", 1, convert_instance_norm);
  // ONNX Runtime registers LayerNormalization at every opset (its transformer optimizer writes
  // it into opset-13 models); the standard op arrived in 17 with the same semantics.
  table.add("LayerNormalization", 1, convert_layer_norm);
  table.add("LayerNormalization", 17, convert_layer_norm);
  table.add("GroupNormalization", 18, convert_group_norm(false));
  table.add("GroupNormalization", 21, convert_group_norm(true));
  table.add("LRN", 1, convert_lrn);
  table.add("MeanVarianceNormalization", 9, convert_mean_variance_norm);
  table.add("LpNormalization", 1, convert_lp_norm);
  table.add("Softmax", 1, softmax_like("nn.softmax", true));
  table.add("Softmax", 13, softmax_like("nn.softmax", false));
  table.add("LogSoftmax", 1, softmax_like("nn.log_softmax", true));
  table.add("LogSoftmax", 13, softmax_like("nn.log_softmax", false));
  table.add("Hardmax", 1, softmax_like("nn.hardmax", true));
  table.add("Hardmax", 13, softmax_like("nn.hardmax", false));
  table.add("Dropout", 1, convert_dropout);
  table.add("NegativeLogLikelihoodLoss", 12, convert_nll_loss);
  table.add("SoftmaxCrossEntropyLoss", 12, convert_softmax_cross_entropy);
}

}  // namespace anvil::frontend::onnx_import
