// FoldScaleAxis: a multiply by a per-channel constant next to a convolution or dense layer
// is folded into that layer's constant weights, so the multiply disappears. After the layer
// the scale runs along the output channels:
//   conv(x, w) * s            ->  conv(x, w * s)
//   (conv(x, w) + b) * s      ->  conv(x, w * s) + b * s      (bias_add or add of a constant)
//   relu(conv(x, w)) * s      ->  relu(conv(x, w * s))        (every s > 0)
//   (conv(x, w) * t) * s      ->  conv(x, w * (t * s))
// Before a convolution it runs along the input channels:
//   conv(relu(x * s + b), w)  ->  conv(relu(x + b / s), w * s) (every s > 0; relu, add optional)
// After SimplifyInference this removes the scale half of the batch norms around
// convolutions. Only nodes used by nothing but the chain are rewritten: a second user would
// need the unscaled value, and keeping both would compute the convolution twice.
#include <cmath>
#include <optional>
#include <unordered_map>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

// Where the channels of a rank-`rank` result lie.
struct ChannelAxis {
  int64_t axis = 0;
  int64_t channels = 0;
  int64_t rank = 0;
};

// The values of a constant that varies at most along `where` (all its other dims are 1 once
// right-aligned with the result), one per channel; nullopt for any other constant.
std::optional<std::vector<double>> per_channel_values(const Tensor& t, const ChannelAxis& where) {
  if (t.ndim() > where.rank) return std::nullopt;
  int64_t offset = where.rank - t.ndim();
  bool varies = false;
  for (int64_t j = 0; j < t.ndim(); ++j) {
    int64_t dim = t.shape()[size_t(j)];
    if (j + offset == where.axis && dim == where.channels) {
      varies = true;
    } else if (dim != 1) {
      return std::nullopt;
    }
  }
  std::vector<double> values = ir::tensor_values(t);
  if (!varies) return std::vector<double>(size_t(where.channels), values.at(0));
  return values;
}

// A constant laid out to broadcast along the channel axis: (C, 1, ..., 1).
Expr channel_constant(const std::vector<double>& values, const ChannelAxis& where, DataType dtype) {
  std::vector<int64_t> shape{where.channels};
  shape.insert(shape.end(), size_t(where.rank - where.axis - 1), 1);
  return ir::ConstantNode::make(ir::make_tensor(values, shape, dtype));
}

std::vector<double> times(std::vector<double> a, const std::vector<double>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] *= b[i];
  return a;
}

// The weight with element i multiplied by scales[(i / block) % scales.size()]: whole
// output-channel rows when block is the row size, input channels of OIHW when it is H * W.
Tensor scale_blocks(const Tensor& weight, const std::vector<double>& scales, size_t block) {
  size_t count = size_t(weight.numel());
  if (weight.dtype() == DataType::float32() && weight.is_contiguous()) {
    // The common case, on tens of millions of weights: no per-element dtype dispatch.
    Tensor scaled = Tensor::empty(weight.shape_vector(), weight.dtype());
    const float* in = weight.data_as<float>();
    float* out = scaled.data_as<float>();
    for (size_t start = 0, b = 0; start < count; start += block, ++b) {
      double scale = scales[b % scales.size()];
      for (size_t i = start; i < start + block; ++i) out[i] = float(double(in[i]) * scale);
    }
    return scaled;
  }
  std::vector<double> values = ir::tensor_values(weight);
  for (size_t i = 0; i < count; ++i) values[i] *= scales[(i / block) % scales.size()];
  return ir::make_tensor(values, weight.shape_vector(), weight.dtype());
}

// The weight with its leading (output-channel) rows multiplied by the scales.
Tensor scale_rows(const Tensor& weight, const std::vector<double>& scales) {
  return scale_blocks(weight, scales, size_t(weight.numel()) / scales.size());
}

// For multiply(a, b): the non-constant operand and the constant, or {null, null}.
std::pair<Expr, const Tensor*> split_constant_operand(const ir::CallNode& call) {
  if (call.args.size() != 2) return {nullptr, nullptr};
  if (const Tensor* t = ir::constant_data(call.args[1])) return {call.args[0], t};
  if (const Tensor* t = ir::constant_data(call.args[0])) return {call.args[1], t};
  return {nullptr, nullptr};
}

// Integer weights would change meaning once rounded, so only float weights take a scale.
bool float_weight(const Tensor* weight) { return weight && weight->dtype().is_float(); }

bool same_type(const Expr& a, const Expr& b) {
  return a->checked_type && b->checked_type && ir::types_equal(a->checked_type, b->checked_type);
}

// Who uses each node: the call and argument position, or {nullptr, -1} for any other user
// (a tuple, a function result, ...).
using UserMap =
    std::unordered_map<const ir::ExprNode*, std::vector<std::pair<const ir::CallNode*, int>>>;

UserMap collect_users(const Expr& function) {
  UserMap users;
  const auto* fn = ir::as<ir::FunctionNode>(function);
  users[fn->body.get()].push_back({nullptr, -1});
  ir::post_order_visit(function, [&](const Expr& e) {
    if (const auto* call = ir::as<ir::CallNode>(e)) {
      for (size_t i = 0; i < call->args.size(); ++i)
        users[call->args[i].get()].push_back({call, int(i)});
      return;
    }
    auto other = [&](const Expr& child) { users[child.get()].push_back({nullptr, -1}); };
    if (const auto* tuple = ir::as<ir::TupleNode>(e)) {
      for (const Expr& field : tuple->fields) other(field);
    } else if (const auto* item = ir::as<ir::TupleGetItemNode>(e)) {
      other(item->tuple);
    } else if (const auto* nested = ir::as<ir::FunctionNode>(e)) {
      other(nested->body);
    } else if (const auto* let = ir::as<ir::LetNode>(e)) {
      other(let->value);
      other(let->body);
    } else if (const auto* branch = ir::as<ir::IfNode>(e)) {
      other(branch->cond);
      other(branch->then_branch);
      other(branch->else_branch);
    } else if (const auto* loop = ir::as<ir::WhileNode>(e)) {
      for (const Expr& value : loop->init) other(value);
      other(loop->cond);
      other(loop->body);
    } else if (const auto* seq = ir::as<ir::SeqExprNode>(e)) {
      for (const ir::BindingBlock& block : seq->blocks)
        for (const ir::Binding& b : block.bindings) other(b.value);
      other(seq->body);
    }
  });
  return users;
}

// A plain NCHW convolution with a constant float OIHW weight.
bool is_plain_conv2d(const ir::CallNode& call) {
  if (!call.op() || call.op()->name != "nn.conv2d" || call.args.size() != 2) return false;
  const auto& attrs = detail::attrs_or_default<ir::Conv2DAttrs>(call);
  const Tensor* weight = ir::constant_data(call.args[1]);
  return attrs.data_layout == "NCHW" && attrs.kernel_layout == "OIHW" &&
         (attrs.out_layout.empty() || attrs.out_layout == "NCHW") && float_weight(weight) &&
         weight->ndim() == 4;
}

// The OIHW weight with its input channels (axis 1) multiplied by the scales.
Tensor scale_input_channels(const Tensor& weight, const std::vector<double>& scales) {
  return scale_blocks(weight, scales, size_t(weight.shape()[2] * weight.shape()[3]));
}

// conv(relu(x * s + b), w) with every s > 0 equals conv(relu(x + b / s), w * s) with s
// applied to w's input channels; the relu and the add are optional. Zero padding stays
// zero in both forms because the scale is linear.
struct InputScale {
  Expr scaled_input;           // the rewritten input of the convolutions
  std::vector<double> scales;  // one per input channel
};

class ScaleAxisFolder : public detail::TypedMutator {
 public:
  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    if (users_.empty()) users_ = collect_users(self);
    return TypedMutator::mutate_Function(node, self);
  }

  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    if (ir::op_call(self, "multiply")) {
      auto [input, scale] = split_constant_operand(*node);
      if (input && same_type(self, input)) {
        if (std::optional<ChannelAxis> where = find_anchor(input)) {
          if (std::optional<std::vector<double>> scales = per_channel_values(*scale, *where)) {
            if (Expr folded = fold(input, *scales, *where)) return folded;
          }
        }
      }
    }
    if (is_plain_conv2d(*node) && detail::attrs_or_default<ir::Conv2DAttrs>(*node).groups == 1) {
      if (const InputScale* in = input_scale(node->args[0])) {
        Tensor weight = scale_input_channels(*ir::constant_data(node->args[1]), in->scales);
        return ir::CallNode::make(node->callee,
                                  {in->scaled_input, ir::ConstantNode::make(std::move(weight))},
                                  node->attrs);
      }
    }
    return TypedMutator::mutate_Call(node, self);
  }

 private:
  bool single_use(const Expr& e) const {
    auto it = users_.find(e.get());
    return it != users_.end() && it->second.size() == 1 && it->second[0].first;
  }

  // The input scale that the convolutions reading `top` can take over, computed once per
  // input; null when the input is not a scaled value or a user cannot take it.
  const InputScale* input_scale(const Expr& top) {
    auto cached = input_scales_.find(top.get());
    if (cached != input_scales_.end()) return cached->second ? &*cached->second : nullptr;
    std::optional<InputScale>& slot = input_scales_[top.get()];
    slot = find_input_scale(top);
    return slot ? &*slot : nullptr;
  }

  std::optional<InputScale> find_input_scale(const Expr& top) {
    // Every user must be a convolution that reads top as its data and can scale its weights.
    auto users = users_.find(top.get());
    if (users == users_.end()) return std::nullopt;
    for (const auto& [call, index] : users->second) {
      if (!call || index != 0 || !is_plain_conv2d(*call) ||
          detail::attrs_or_default<ir::Conv2DAttrs>(*call).groups != 1)
        return std::nullopt;
    }
    std::optional<std::vector<int64_t>> shape = ir::static_shape(top);
    if (!shape || shape->size() != 4) return std::nullopt;
    ChannelAxis where{1, (*shape)[1], 4};

    Expr below = top;
    const ir::CallNode* relu = ir::op_call(top, "nn.relu");
    if (relu) below = relu->args[0];
    const ir::CallNode* add = ir::op_call(below, "add");
    const Tensor* shift = nullptr;
    Expr scaled = below;
    if (add) {
      if (relu && !single_use(below)) return std::nullopt;
      auto [inner, constant] = split_constant_operand(*add);
      if (!inner || !constant || !same_type(below, inner)) return std::nullopt;
      shift = constant;
      scaled = inner;
    }
    const ir::CallNode* multiply = ir::op_call(scaled, "multiply");
    if (!multiply || (scaled != top && !single_use(scaled))) return std::nullopt;
    auto [x, scale] = split_constant_operand(*multiply);
    if (!x || !scale || !same_type(scaled, x)) return std::nullopt;

    std::optional<std::vector<double>> scales = per_channel_values(*scale, where);
    if (!scales) return std::nullopt;
    for (double s : *scales) {
      // The relu needs positive scales and the shift is divided by them.
      if ((relu && !(s > 0)) || (shift && (s == 0 || !std::isfinite(s)))) return std::nullopt;
    }
    Expr result = mutate(x);
    if (shift) {
      std::optional<std::vector<double>> values = per_channel_values(*shift, where);
      if (!values) return std::nullopt;
      for (size_t c = 0; c < values->size(); ++c) (*values)[c] /= (*scales)[c];
      Expr new_shift = channel_constant(*values, where, shift->dtype());
      bool constant_first = ir::constant_data(add->args[0]) != nullptr;
      result = ir::CallNode::make(add->callee,
                                  constant_first ? std::vector<Expr>{new_shift, result}
                                                 : std::vector<Expr>{result, new_shift},
                                  add->attrs);
    }
    if (relu) result = ir::CallNode::make(relu->callee, {result}, relu->attrs);
    result->checked_type = top->checked_type;
    return InputScale{result, std::move(*scales)};
  }

  // Follows the chain below a scaled value down to the convolution or dense layer whose
  // weights can take the scale; nullopt when there is none.
  std::optional<ChannelAxis> find_anchor(const Expr& e) const {
    const auto* call = ir::as<ir::CallNode>(e);
    if (!call || !call->op() || !single_use(e)) return std::nullopt;
    std::optional<std::vector<int64_t>> shape = ir::static_shape(e);
    if (!shape) return std::nullopt;
    int64_t rank = int64_t(shape->size());
    const std::string& name = call->op()->name;
    if (name == "nn.conv2d") {
      if (!is_plain_conv2d(*call) || rank != 4) return std::nullopt;
      return ChannelAxis{1, (*shape)[1], rank};
    }
    if (name == "nn.dense") {
      const Tensor* weight = ir::constant_data(call->args[1]);
      if (!float_weight(weight) || weight->ndim() != 2 || rank < 1) return std::nullopt;
      return ChannelAxis{rank - 1, (*shape)[size_t(rank - 1)], rank};
    }
    if (name == "nn.relu") return find_anchor(call->args[0]);
    if (name == "nn.bias_add" || name == "add" || name == "multiply") {
      auto [input, constant] =
          name == "nn.bias_add"
              ? std::pair<Expr, const Tensor*>(call->args[0], ir::constant_data(call->args[1]))
              : split_constant_operand(*call);
      if (!input || !constant || !same_type(e, input)) return std::nullopt;
      std::optional<ChannelAxis> where = find_anchor(input);
      if (!where) return std::nullopt;
      if (name == "nn.bias_add") {
        const auto& attrs = detail::attrs_or_default<ir::BiasAddAttrs>(*call);
        if (detail::normalize_axis(attrs.axis, rank) != where->axis) return std::nullopt;
        if (constant->ndim() != 1 || constant->numel() != where->channels) return std::nullopt;
      } else if (!per_channel_values(*constant, *where)) {
        return std::nullopt;
      }
      return where;
    }
    return std::nullopt;
  }

  // The chain below e rebuilt with its result multiplied by scales; null when a relu would
  // see a scale that is not positive.
  Expr fold(const Expr& e, const std::vector<double>& scales, const ChannelAxis& where) {
    const auto* call = ir::as<ir::CallNode>(e);
    const std::string& name = call->op()->name;
    if (name == "nn.conv2d" || name == "nn.dense") {
      Tensor weight = *ir::constant_data(call->args[1]);
      Expr data;
      // The same convolution may also take over a scale of its input.
      bool one_group =
          name == "nn.conv2d" && detail::attrs_or_default<ir::Conv2DAttrs>(*call).groups == 1;
      if (const InputScale* in = one_group ? input_scale(call->args[0]) : nullptr) {
        data = in->scaled_input;
        weight = scale_input_channels(weight, in->scales);
      } else {
        data = mutate(call->args[0]);
      }
      Expr scaled = ir::ConstantNode::make(scale_rows(weight, scales));
      return ir::CallNode::make(call->callee, {data, scaled}, call->attrs);
    }
    if (name == "nn.relu") {
      for (double s : scales)
        if (!(s > 0)) return nullptr;
      Expr inner = fold(call->args[0], scales, where);
      return inner ? ir::CallNode::make(call->callee, {inner}, call->attrs) : nullptr;
    }
    if (name == "nn.bias_add") {
      const Tensor& bias = *ir::constant_data(call->args[1]);
      Expr inner = fold(call->args[0], scales, where);
      if (!inner) return nullptr;
      std::vector<double> scaled = times(ir::tensor_values(bias), scales);
      Expr new_bias =
          ir::ConstantNode::make(ir::make_tensor(scaled, {where.channels}, bias.dtype()));
      return ir::CallNode::make(call->callee, {inner, new_bias}, call->attrs);
    }
    auto [input, constant] = split_constant_operand(*call);
    std::vector<double> values = *per_channel_values(*constant, where);
    if (name == "multiply") return fold(input, times(values, scales), where);
    // add: the added constant is scaled with everything else.
    Expr inner = fold(input, scales, where);
    if (!inner) return nullptr;
    Expr shift = channel_constant(times(values, scales), where, constant->dtype());
    bool constant_first = ir::constant_data(call->args[0]) != nullptr;
    std::vector<Expr> args =
        constant_first ? std::vector<Expr>{shift, inner} : std::vector<Expr>{inner, shift};
    return ir::CallNode::make(call->callee, std::move(args), call->attrs);
  }

  UserMap users_;
  std::unordered_map<const ir::ExprNode*, std::optional<InputScale>> input_scales_;
};

}  // namespace

ir::IRModule fold_scale_axis(const ir::IRModule& mod) {
  return detail::mutate_graph_functions(mod, [] { return ScaleAxisFolder(); });
}

}  // namespace anvil::transform
