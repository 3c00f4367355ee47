// FakeQuantizationToInteger: a quantized model in the QDQ format computes in
// float between a dequantize and a quantize; this pass turns the convolutions
// and dense layers among them into integer products, as a QLinearConv would:
//
//   quantize(act(conv(dequantize(x, sx, zx), dequantize(W, sw, zw)) + b), sy, zy)
//     -> clip(quantize(float(qnn.conv2d(x, W, zx, zw) + B) * M, 1, zy), lo, hi)
//
// with B = b in units of sx * sw (the int32 bias of the model when it gives one),
// M = sx * sw / sy per output channel computed in float32 as ONNX Runtime does,
// and act (relu or clip, optional) folded into the bounds lo, hi: quantize is
// monotone, so clamping before it equals clamping after it at the quantized
// bounds. The product then accumulates exactly in int32, and every op after it
// is elementwise, so fusion puts the requantization in the product's epilogue.
//
// The rewrite needs constant scales and zero points, a per-tensor output, a
// constant 8-bit weight quantized per tensor or per output channel, and a chain
// whose intermediate values nothing else reads. Everything else keeps its float
// form between the dequantize and the quantize, which is correct, only slower.
//
// An add or a multiply of two dequantized 8-bit tensors becomes qnn.add or
// qnn.mul, which round as ONNX Runtime's QLinearAdd and QLinearMul (the kernels
// its own QDQ fusion runs): quantize(dequantize(a) * dequantize(b)) by the
// letter of the spec rounds three times where they round once, and the steps
// it moves add up along a network (SiLU and squeeze-and-excitation multiply).
// A global average pool becomes an integer sum requantized once, as ONNX
// Runtime's QLinearGlobalAveragePool.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <unordered_map>

#include "anvil/ir/attrs/elemwise.h"
#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/attrs/nn_activation.h"
#include "anvil/ir/attrs/qnn.h"
#include "anvil/ir/builder.h"
#include "anvil/transform/passes.h"
#include "transform/pass_util.h"

namespace anvil::transform {
namespace {

using ir::Expr;

bool is_8bit(DataType t) { return t == DataType::uint8() || t == DataType::int8(); }

// A qnn.dequantize with constant scale and zero point.
struct Dequantized {
  Expr data;
  const Tensor* scale;
  const Tensor* zero_point;
  int64_t axis;
};

std::optional<Dequantized> match_dequantize(const Expr& e) {
  const ir::CallNode* call = ir::op_call(e, "qnn.dequantize");
  if (!call) return std::nullopt;
  const auto& attrs = detail::attrs_or_default<ir::QuantizeAttrs>(*call);
  const Tensor* scale = ir::constant_data(call->args[1]);
  const Tensor* zero_point = ir::constant_data(call->args[2]);
  if (!scale || !zero_point || attrs.block_size != 0) return std::nullopt;
  return Dequantized{call->args[0], scale, zero_point, attrs.axis};
}

// The values of a constant that is one value or one per `count` channels; nullopt otherwise.
std::optional<std::vector<double>> per_channel(const Tensor& t, int64_t count) {
  std::vector<double> values = ir::tensor_values(t);
  if (values.size() == 1) return std::vector<double>(size_t(count), values[0]);
  if (int64_t(values.size()) != count) return std::nullopt;
  for (int64_t d : t.shape_vector())
    if (d != 1 && d != count) return std::nullopt;
  return values;
}

// The activation input x of a per-tensor 8-bit dequantize: its data, scale and zero point.
struct QuantizedInput {
  Expr data;
  double scale;
  int64_t zero_point;
};

std::optional<QuantizedInput> quantized_input(const Expr& e) {
  std::optional<Dequantized> dq = match_dequantize(e);
  if (!dq || dq->scale->numel() != 1 || dq->zero_point->numel() != 1) return std::nullopt;
  std::optional<DataType> dtype = ir::tensor_dtype(dq->data);
  if (!dtype || !is_8bit(*dtype)) return std::nullopt;
  return QuantizedInput{dq->data, dq->scale->get_as_double(0),
                        int64_t(dq->zero_point->get_as_double(0))};
}

// A constant 8-bit weight quantized along `channel_axis` (or per tensor), with
// `channels` output channels.
struct QuantizedWeight {
  const Tensor* data;
  std::vector<double> scales;
  std::vector<double> zero_points;
};

std::optional<QuantizedWeight> quantized_weight(const Expr& e, int64_t channel_axis,
                                                int64_t channels) {
  std::optional<Dequantized> dq = match_dequantize(e);
  if (!dq) return std::nullopt;
  const Tensor* w = ir::constant_data(dq->data);
  if (!w || !is_8bit(w->dtype())) return std::nullopt;
  if (dq->scale->numel() > 1 && detail::normalize_axis(dq->axis, w->ndim()) != channel_axis)
    return std::nullopt;
  std::optional<std::vector<double>> scales = per_channel(*dq->scale, channels);
  std::optional<std::vector<double>> zero_points = per_channel(*dq->zero_point, channels);
  if (!scales || !zero_points) return std::nullopt;
  return QuantizedWeight{w, *scales, *zero_points};
}

// Integer bounds of the output before the activation is folded in.
struct Bounds {
  double lo, hi;
};

class FakeQuantizationRewriter : public detail::TypedMutator {
 public:
  Expr mutate_Function(const ir::FunctionNode* node, const Expr& self) override {
    if (node->is_primitive()) return self;
    if (uses_.empty()) uses_ = detail::count_uses(self);
    return TypedMutator::mutate_Function(node, self);
  }

  Expr mutate_Call(const ir::CallNode* node, const Expr& self) override {
    if (ir::op_call(self, "qnn.quantize")) {
      if (Expr rewritten = rewrite_quantize(*node)) return rewritten;
    }
    return TypedMutator::mutate_Call(node, self);
  }

 private:
  bool single_use(const Expr& e) const {
    auto it = uses_.find(e.get());
    return it != uses_.end() && it->second == 1;
  }

  Expr rewrite_quantize(const ir::CallNode& quantize) {
    const Tensor* out_scale = ir::constant_data(quantize.args[1]);
    const Tensor* out_zp = ir::constant_data(quantize.args[2]);
    if (!out_scale || !out_zp || out_scale->numel() != 1 || out_zp->numel() != 1) return nullptr;
    DataType out = out_zp->dtype();
    if (!is_8bit(out) || ir::tensor_dtype(quantize.args[0]) != DataType::float32()) return nullptr;
    const double sy = out_scale->get_as_double(0), zy = out_zp->get_as_double(0);
    Bounds bounds{out.is_int() ? -128.0 : 0.0, out.is_int() ? 127.0 : 255.0};
    // quantize(v) as ONNX computes it, for clip bounds.
    auto quantized = [&](double v) { return std::nearbyint(double(float(v) / float(sy))) + zy; };

    Expr value = quantize.args[0];
    if (const ir::CallNode* relu = ir::op_call(value, "nn.relu")) {
      if (!single_use(value)) return nullptr;
      bounds.lo = std::max(bounds.lo, zy);
      value = relu->args[0];
    } else if (const ir::CallNode* clip = ir::op_call(value, "clip")) {
      if (!single_use(value)) return nullptr;
      const auto& attrs = detail::attrs_or_default<ir::ClipAttrs>(*clip);
      if (std::isfinite(attrs.a_min)) bounds.lo = std::max(bounds.lo, quantized(attrs.a_min));
      if (std::isfinite(attrs.a_max)) bounds.hi = std::min(bounds.hi, quantized(attrs.a_max));
      value = clip->args[0];
    }

    if (Expr binary = rewrite_binary(value, sy, zy, out)) return clamped(binary, bounds, out);
    if (Expr pooled = rewrite_global_average(value, sy, zy, out))
      return clamped(pooled, bounds, out);

    Expr bias;
    if (const ir::CallNode* add = ir::op_call(value, "nn.bias_add")) {
      if (!single_use(value)) return nullptr;
      bias = add->args[1];
      value = add->args[0];
    } else if (const ir::CallNode* add = ir::op_call(value, "add")) {
      if (!single_use(value)) return nullptr;
      bias = add->args[1];
      value = add->args[0];
    }
    if (!single_use(value)) return nullptr;

    Product p;
    if (!match_product(value, p)) return nullptr;
    std::vector<double> bias_units;
    if (bias && !bias_in_units(bias, p, bias_units)) return nullptr;

    // M = sx * sw / sy in float32, the requantization multiplier of each output channel.
    std::vector<double> multiplier(p.weight.scales.size());
    for (size_t c = 0; c < multiplier.size(); ++c)
      multiplier[c] = double(float(float(p.input.scale) * float(p.weight.scales[c])) / float(sy));

    Expr acc = build_product(p);
    if (!bias_units.empty())
      acc =
          ir::call_op("nn.bias_add", {acc, channel_vector(bias_units, DataType::int32(), p, false)},
                      ir::make_op_attrs("nn.bias_add", {{"axis", p.channel_axis}}));
    Expr result =
        requantized(acc, channel_vector(multiplier, DataType::float32(), p, true), zy, out);
    return clamped(result, bounds, out);
  }

  // An int32 accumulator into the output's type as QLinearConv requantizes it:
  // round(float(acc) * multiplier) + zy, saturated.
  static Expr requantized(const Expr& acc, const Expr& multiplier, double zy, DataType out) {
    const DataType f32 = DataType::float32();
    Expr scaled = ir::call_op(
        "multiply",
        {ir::call_op("cast", {acc}, ir::make_op_attrs("cast", {{"dtype", f32}})), multiplier});
    return ir::call_op("qnn.quantize",
                       {scaled, ir::scalar_constant(1.0, f32), ir::scalar_constant(zy, out)});
  }

  // The quantized value clipped to bounds where they are narrower than its type's.
  static Expr clamped(const Expr& q, const Bounds& bounds, DataType out) {
    double type_lo = out.is_int() ? -128.0 : 0.0, type_hi = out.is_int() ? 127.0 : 255.0;
    if (bounds.lo <= type_lo && bounds.hi >= type_hi) return q;
    return ir::call_op("clip", {q},
                       ir::make_op_attrs("clip", {{"a_min", bounds.lo}, {"a_max", bounds.hi}}));
  }

  // add or multiply of dequantize(a), dequantize(b), per-tensor 8-bit values of the output's
  // type, as qnn.add or qnn.mul; null when the value is anything else.
  Expr rewrite_binary(const Expr& value, double sy, double zy, DataType out) {
    const ir::CallNode* call = ir::op_call(value, "add");
    const char* qnn_op = "qnn.add";
    if (!call) {
      call = ir::op_call(value, "multiply");
      qnn_op = "qnn.mul";
    }
    if (!call || !single_use(value)) return nullptr;
    std::optional<QuantizedInput> a = quantized_input(call->args[0]);
    std::optional<QuantizedInput> b = quantized_input(call->args[1]);
    if (!a || !b || ir::tensor_dtype(a->data) != out || ir::tensor_dtype(b->data) != out)
      return nullptr;
    return ir::call_op(qnn_op, {mutate(a->data), mutate(b->data)},
                       ir::make_op_attrs(qnn_op, {{"lhs_scale", a->scale},
                                                  {"lhs_zero_point", a->zero_point},
                                                  {"rhs_scale", b->scale},
                                                  {"rhs_zero_point", b->zero_point},
                                                  {"out_scale", sy},
                                                  {"out_zero_point", int64_t(zy)}}));
  }

  // global_avg_pool2d(dequantize(x)) of a per-tensor 8-bit NCHW x, as ONNX Runtime's
  // QLinearGlobalAveragePool computes it: the integer sum over H x W less N * zx, times
  // M = sx / (sy * N) in float32, rounded, plus zy. Null when the value is anything else.
  Expr rewrite_global_average(const Expr& value, double sy, double zy, DataType out) {
    const ir::CallNode* pool = ir::op_call(value, "nn.global_avg_pool2d");
    if (!pool || !single_use(value)) return nullptr;
    const auto& attrs = detail::attrs_or_default<ir::GlobalPool2DAttrs>(*pool);
    if (attrs.layout != "NCHW" || !(attrs.out_layout.empty() || attrs.out_layout == "NCHW"))
      return nullptr;
    std::optional<QuantizedInput> x = quantized_input(pool->args[0]);
    auto shape = x ? ir::static_shape(x->data) : std::nullopt;
    if (!x || !shape || shape->size() != 4 || ir::tensor_dtype(x->data) != out) return nullptr;
    const int64_t pixels = (*shape)[2] * (*shape)[3];
    if (pixels <= 0 || pixels > (int64_t(1) << 23)) return nullptr;  // int32 sums stay exact
    const DataType i32 = DataType::int32(), f32 = DataType::float32();
    Expr sum = ir::call_op(
        "sum",
        {ir::call_op("cast", {mutate(x->data)}, ir::make_op_attrs("cast", {{"dtype", i32}}))},
        ir::make_op_attrs("sum", {{"axis", std::vector<int64_t>{2, 3}}, {"keepdims", true}}));
    Expr centered =
        ir::call_op("subtract", {sum, ir::scalar_constant(double(pixels * x->zero_point), i32)});
    const float multiplier = float(x->scale) / (float(sy) * float(pixels));
    return requantized(centered, ir::scalar_constant(double(multiplier), f32), zy, out);
  }

  // A float product of a quantized activation and a constant quantized weight.
  struct Product {
    const ir::CallNode* call = nullptr;
    QuantizedInput input;
    QuantizedWeight weight;
    Tensor weight_data;    // as qnn takes it: OIHW for conv, (N, K) for dense
    int64_t channel_axis;  // of the output
    int64_t out_rank;
    bool dense;
  };

  bool match_product(const Expr& value, Product& p) {
    auto out_shape = ir::static_shape(value);
    if (!out_shape) return false;
    p.out_rank = int64_t(out_shape->size());
    if (const ir::CallNode* conv = ir::op_call(value, "nn.conv2d")) {
      const auto& attrs = detail::attrs_or_default<ir::Conv2DAttrs>(*conv);
      if (attrs.data_layout != "NCHW" || attrs.kernel_layout != "OIHW" ||
          !(attrs.out_layout.empty() || attrs.out_layout == "NCHW"))
        return false;
      auto in = quantized_input(conv->args[0]);
      if (!in) return false;
      int64_t channels = (*out_shape)[1];
      auto w = quantized_weight(conv->args[1], 0, channels);
      if (!w) return false;
      p = Product{conv, *in, *w, *w->data, 1, p.out_rank, false};
      return true;
    }
    const ir::CallNode* dense = ir::op_call(value, "nn.dense");
    const ir::CallNode* matmul = ir::op_call(value, "nn.matmul");
    if (matmul) {
      const auto& attrs = detail::attrs_or_default<ir::MatmulAttrs>(*matmul);
      if (attrs.transpose_a) return false;
      // (K, N) weights per column are (N, K) per row once transposed.
      auto in = quantized_input(matmul->args[0]);
      if (!in) return false;
      int64_t channels = out_shape->back();
      auto w = quantized_weight(matmul->args[1], attrs.transpose_b ? 0 : 1, channels);
      if (!w) return false;
      Tensor nk = attrs.transpose_b ? *w->data : transposed(*w->data);
      p = Product{matmul, *in, *w, nk, p.out_rank - 1, p.out_rank, true};
      return true;
    }
    if (!dense) return false;
    auto in = quantized_input(dense->args[0]);
    if (!in) return false;
    auto w = quantized_weight(dense->args[1], 0, out_shape->back());
    if (!w) return false;
    p = Product{dense, *in, *w, *w->data, p.out_rank - 1, p.out_rank, true};
    return true;
  }

  static Tensor transposed(const Tensor& w) {
    int64_t rows = w.shape()[0], cols = w.shape()[1];
    std::vector<double> values = ir::tensor_values(w), t(values.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[size_t(c * rows + r)] = values[size_t(r * cols + c)];
    return ir::make_tensor(t, {cols, rows}, w.dtype());
  }

  // The bias in units of sx * sw[c], rounded; the model's int32 values when it
  // dequantizes an int32 bias with exactly that scale.
  static bool bias_in_units(const Expr& bias, const Product& p, std::vector<double>& units) {
    size_t channels = p.weight.scales.size();
    std::vector<double> real;
    if (std::optional<Dequantized> dq = match_dequantize(bias)) {
      const Tensor* b = ir::constant_data(dq->data);
      if (!b || b->dtype() != DataType::int32()) return false;
      auto values = per_channel(*b, int64_t(channels));
      auto scales = per_channel(*dq->scale, int64_t(channels));
      auto zero_points = per_channel(*dq->zero_point, int64_t(channels));
      if (!values || !scales || !zero_points) return false;
      real.resize(channels);
      for (size_t c = 0; c < channels; ++c)
        real[c] = ((*values)[c] - (*zero_points)[c]) * float((*scales)[c]);
    } else if (const Tensor* b = ir::constant_data(bias)) {
      if (!b->dtype().is_float()) return false;
      auto values = per_channel(*b, int64_t(channels));
      if (!values || b->ndim() > p.out_rank) return false;
      // A constant that broadcasts along anything but the channels is not a bias.
      if (b->numel() > 1 && b->ndim() > 1 &&
          b->shape()[size_t(b->ndim() - (p.out_rank - p.channel_axis))] != int64_t(channels))
        return false;
      real = *values;
    } else {
      return false;
    }
    units.resize(channels);
    for (size_t c = 0; c < channels; ++c) {
      double unit = double(float(p.input.scale) * float(p.weight.scales[c]));
      double v = std::nearbyint(real[c] / unit);
      if (!(std::fabs(v) < 2147483647.0)) return false;
      units[c] = v;
    }
    return true;
  }

  Expr build_product(const Product& p) {
    Expr data = mutate(p.input.data);
    DataType in_dtype = *ir::tensor_dtype(p.input.data);
    Expr data_zp = ir::scalar_constant(double(p.input.zero_point), in_dtype);
    const std::vector<double>& wz = p.weight.zero_points;
    bool one_zp = std::all_of(wz.begin(), wz.end(), [&](double z) { return z == wz[0]; });
    Expr weight_zp = one_zp ? ir::scalar_constant(wz[0], p.weight_data.dtype())
                            : Expr(ir::ConstantNode::make(ir::make_tensor(wz, {int64_t(wz.size())},
                                                                          p.weight_data.dtype())));
    Expr weight = ir::ConstantNode::make(p.weight_data);
    if (!p.dense) {
      Ref<ir::AttrsNode> attrs = detail::attrs_or_default<ir::Conv2DAttrs>(*p.call).clone();
      attrs->set_field("out_dtype", ir::AttrValue());
      return ir::call_op("qnn.conv2d", {data, weight, data_zp, weight_zp}, ir::Attrs(attrs));
    }
    return ir::call_op("qnn.dense", {data, weight, data_zp, weight_zp});
  }

  // One value per output channel, shaped to broadcast along the channel axis.
  static Expr channel_vector(const std::vector<double>& values, DataType dtype, const Product& p,
                             bool broadcast) {
    bool uniform =
        std::all_of(values.begin(), values.end(), [&](double v) { return v == values[0]; });
    if (uniform && broadcast) return ir::scalar_constant(values[0], dtype);
    std::vector<int64_t> shape{int64_t(values.size())};
    if (broadcast) shape.insert(shape.end(), size_t(p.out_rank - p.channel_axis - 1), 1);
    return ir::ConstantNode::make(ir::make_tensor(values, shape, dtype));
  }

  std::unordered_map<const ir::ExprNode*, int> uses_;
};

}  // namespace

ir::IRModule fake_quantization_to_integer(const ir::IRModule& mod) {
  return detail::mutate_graph_functions(mod, [] { return FakeQuantizationRewriter(); });
}

}  // namespace anvil::transform
