// The layout strategy of qnn.conv2d on x86: uint8 data times int8 weights with
// a zero weight zero point becomes qnn.contrib_conv2d_NCHWc (qnn_conv.cpp) on
// NCHW{ib}c data, the weight packed at compile time four input channels deep
// (OIHW{ib/4}i{ob}o4i). That op sums x * w with the input padded by the data's
// zero point zx; the sum the quantized convolution wants is of (x - zx) * w, so
// the rewrite adds the constant -zx * sum(w) of each output channel after it.
// Input channels that are no multiple of 4 (an RGB image) are padded to one with
// zero weights; output channels that fill no whole block are padded with zero
// weights and sliced off where a consumer needs NCHW. qnn.dense is the same
// convolution, 1x1, its rows the pixels. Grouped convolutions whose groups are whole
// blocks (input channels a multiple of 4, output channels of 16, 8 or 4 a group) are the same
// op with `groups`: each output block reads its group's input blocks.
//
// Weights with a zero point zw (asymmetric, or uint8 weights: made int8 by w - 128 with
// zw - 128, so 128 is symmetric) add a term -zw * S per output, S the sum of the (padded) input
// window of the pixel: S comes from a second, one-block convolution of the same data by
// weights of 1 (every lane of its block the same S), multiplied by zw in the epilogue; grouped
// and depthwise convolutions sum their own windows, a full second convolution.
//
// int8 data (ONNX Runtime's quantize_static writes int8 activations by default) is made
// uint8 by flipping its sign bit, x + 128, and its zero point moves by 128 with it: the
// differences x - zx the convolution sums are unchanged, so the result is bit for bit the
// same. The flip is elementwise and fuses into the producer (the previous layer's
// requantization).
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <variant>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/builder.h"
#include "anvil/ir/op.h"
#include "topi/x86/dot_conv.h"
#include "topi/x86/families.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

struct Int8ConvPlan {
  int64_t in_channels = 0, padded_in = 0, in_block = 0;
  int64_t out_channels = 0, out_block = 0, stored_out = 0;
  int64_t groups = 1, weight_in = 0;  // weight_in: the input channels each output reads
  int64_t data_zero_point = 0;        // the uint8 data's (for int8 data, its own + 128)
  bool signed_data = false;           // int8 data, flipped into uint8
  bool depthwise = false;             // one input channel per output channel: in_block == out_block
  bool unsigned_weights = false;      // uint8 weights, shifted into int8 by -128 at packing
  std::vector<int64_t> weight_zero_points;  // per output channel, after the shift; empty: all 0
};

std::optional<std::vector<ir::Dim>> static_chw(const ir::Type& type, DataType dtype) {
  const auto* t = ir::as<ir::TensorTypeNode>(type);
  if (!t || !t->shape || t->shape->size() != 4 || t->dtype != dtype) return std::nullopt;
  const std::vector<ir::Dim>& dims = *t->shape;
  for (size_t i = 1; i < 4; ++i)
    if (!dims[i].is_static()) return std::nullopt;
  if (dims[0].is_any()) return std::nullopt;
  return dims;
}

// The data's side of a plan, shared by convolutions and dense layers: int8 data is flipped
// into uint8 and its zero point moves with it.
Int8ConvPlan with_data(Int8ConvPlan plan, const Tensor& zero_point, DataType data_type) {
  plan.signed_data = data_type == DataType::int8();
  plan.data_zero_point = int64_t(zero_point.get_as_double(0)) + (plan.signed_data ? 128 : 0);
  return plan;
}

// The weights' side of a plan: uint8 weights become int8 (w - 128) with their zero point, and
// the zero points that are left (one per output channel) are kept when any is not 0. Returns
// a reason when the plan cannot take them.
std::string with_weights(Int8ConvPlan& plan, DataType weight_type, const Tensor& zero_point) {
  plan.unsigned_weights = weight_type == DataType::uint8();
  const int64_t shift = plan.unsigned_weights ? 128 : 0;
  const int64_t count = zero_point.numel();
  if (count != 1 && count != plan.out_channels)
    return "a weight zero point of " + std::to_string(count) + " values for " +
           std::to_string(plan.out_channels) + " output channels";
  bool any = false;
  std::vector<int64_t> zero_points(size_t(plan.out_channels));
  for (int64_t o = 0; o < plan.out_channels; ++o) {
    zero_points[size_t(o)] = int64_t(zero_point.get_as_double(count == 1 ? 0 : o)) - shift;
    any |= zero_points[size_t(o)] != 0;
  }
  if (any) plan.weight_zero_points = std::move(zero_points);
  return "";
}

// Channel counts decide the blocks; shared by convolutions and dense layers.
Int8ConvPlan plan_blocks(int64_t in_channels, int64_t out_channels, int lanes) {
  Int8ConvPlan plan;
  plan.in_channels = in_channels;
  plan.padded_in = plan.weight_in = (in_channels + 3) / 4 * 4;
  plan.in_block = plan.padded_in % 16 == 0 ? 16 : plan.padded_in % 8 == 0 ? 8 : 4;
  plan.out_channels = out_channels;
  const int64_t widest = lanes >= 16 ? 16 : 8;
  plan.out_block = out_channels % widest == 0 ? widest : out_channels % 8 == 0 ? 8 : widest;
  plan.stored_out = (out_channels + plan.out_block - 1) / plan.out_block * plan.out_block;
  return plan;
}

// Groups of whole blocks: each group's input channels a multiple of 4 (the dot product's
// depth) and its output channels of 16, 8 or 4 (a 128-bit block: ResNeXt's narrowest groups),
// so a block never straddles two groups.
std::variant<Int8ConvPlan, std::string> plan_grouped(int64_t in_channels, int64_t out_channels,
                                                     int64_t groups, int lanes) {
  const std::string what = "groups " + std::to_string(groups) + ": ";
  if (groups <= 0 || in_channels % groups != 0 || out_channels % groups != 0)
    return what + "the channels do not divide into the groups";
  const int64_t in_per_group = in_channels / groups, out_per_group = out_channels / groups;
  if (in_per_group % 4 != 0)
    return what + std::to_string(in_per_group) + " input channels a group, no multiple of 4";
  Int8ConvPlan plan;
  plan.groups = groups;
  plan.in_channels = plan.padded_in = in_channels;
  plan.weight_in = in_per_group;
  plan.in_block = in_per_group % 16 == 0 ? 16 : in_per_group % 8 == 0 ? 8 : 4;
  plan.out_channels = plan.stored_out = out_channels;
  plan.out_block = lanes >= 16 && out_per_group % 16 == 0 ? 16
                   : out_per_group % 8 == 0               ? 8
                   : out_per_group % 4 == 0               ? 4
                                                          : 0;
  if (plan.out_block == 0)
    return what + std::to_string(out_per_group) +
           " output channels a group, no block of 4, 8 or 16";
  return plan;
}

std::variant<Int8ConvPlan, std::string> plan_int8_conv(const ir::CallNode& call,
                                                       const ir::Type& out_type, int lanes) {
  const ir::AttrsNode* raw = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  const auto* a = dynamic_cast<const ir::Conv2DAttrs*>(raw);
  if (!a || call.args.size() != 4) return std::string("not a qnn.conv2d");
  if (a->data_layout != "NCHW" || a->kernel_layout != "OIHW" ||
      !(a->out_layout.empty() || a->out_layout == "NCHW"))
    return "layouts " + a->data_layout + "/" + a->kernel_layout + ": blocked from NCHW/OIHW only";

  auto in = static_chw(call.args[0]->checked_type, DataType::uint8());
  if (!in) in = static_chw(call.args[0]->checked_type, DataType::int8());
  auto w = static_chw(call.args[1]->checked_type, DataType::int8());
  if (!w) w = static_chw(call.args[1]->checked_type, DataType::uint8());
  auto out = static_chw(out_type, DataType::int32());
  if (!in || !w || !out || !(*w)[0].is_static())
    return std::string("needs 8-bit data and weights, NCHW/OIHW with static channels");
  const Tensor* data_zp = ir::constant_data(call.args[2]);
  const Tensor* weight_zp = ir::constant_data(call.args[3]);
  if (!data_zp || !weight_zp) return std::string("the zero points are not constants");
  const int64_t in_channels = (*in)[1].int_value(), out_channels = (*out)[1].int_value();
  const DataType data_type = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type)->dtype;
  const DataType weight_type = ir::as<ir::TensorTypeNode>(call.args[1]->checked_type)->dtype;
  Int8ConvPlan plan;
  if (a->groups == 1) {
    plan = plan_blocks(in_channels, out_channels, lanes);
  } else if (a->groups != in_channels || out_channels != in_channels) {
    auto grouped = plan_grouped(in_channels, out_channels, a->groups, lanes);
    if (const std::string* why = std::get_if<std::string>(&grouped)) return *why;
    plan = std::get<Int8ConvPlan>(grouped);
  } else {
    plan.depthwise = true;
    plan.in_channels = plan.padded_in = plan.out_channels = plan.stored_out = in_channels;
    plan.in_block = plan.out_block = lanes >= 16 && in_channels % 16 == 0 ? 16
                                     : in_channels % 8 == 0               ? 8
                                                                          : 0;
    if (plan.in_block == 0)
      return "depthwise over " + std::to_string(in_channels) + " channels: no block of 8 or 16";
  }
  std::string why = with_weights(plan, weight_type, *weight_zp);
  if (!why.empty()) return why;
  return with_data(plan, *data_zp, data_type);
}

std::string check_int8_conv(const ir::CallNode& call, const ir::Type& out_type, int lanes) {
  auto plan = plan_int8_conv(call, out_type, lanes);
  return std::holds_alternative<std::string>(plan) ? std::get<std::string>(plan) : std::string();
}

// int8 data as uint8, x + 128: the bits cast (wrapping) and the sign bit flipped, when the plan
// says so. (Two plain elementwise ops, which vectorize inside the producer's epilogue.)
ir::Expr as_unsigned(const ir::Expr& data, const Int8ConvPlan& plan) {
  if (!plan.signed_data) return data;
  Tensor sign_bit = Tensor::empty({}, DataType::uint8());
  sign_bit.set_from_double(0, 128);
  ir::Expr bits =
      ir::call_op("cast", {data}, ir::make_op_attrs("cast", {{"dtype", DataType::uint8()}}));
  return ir::call_op("bitwise_xor", {bits, ir::ConstantNode::make(sign_bit)});
}

// The uint8 zero point the blocked convolution pads with.
ir::Expr unsigned_zero_point(const Int8ConvPlan& plan) {
  Tensor zero_point = Tensor::empty({}, DataType::uint8());
  zero_point.set_from_double(0, double(plan.data_zero_point));
  return ir::ConstantNode::make(zero_point);
}

// OIHW int8 -> (O'/ob, I'/ib, KH, KW, ib/4, ob*4): input channel c = 4q + r of block c / ib and
// output channel o of block o / ob go to [q, 4 (o % ob) + r]; channels past O and I are zero.
Tensor pack_int8_weight(const Tensor& weight, const Int8ConvPlan& p) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], kh = s[2], kw = s[3];
  const int64_t ib = p.in_block, ob = p.out_block;
  Tensor packed =
      Tensor::zeros({p.stored_out / ob, p.weight_in / ib, kh, kw, ib / 4, ob * 4}, weight.dtype());
  const auto* src = static_cast<const int8_t*>(weight.data());
  auto* dst = static_cast<int8_t*>(packed.data());
  ANVIL_ICHECK(weight.dtype() == DataType::int8(), "int8 weights expected, got ",
               weight.dtype().to_string());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < in; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) {
          int64_t to = (((((o / ob) * (p.weight_in / ib) + c / ib) * kh + y) * kw + x) * (ib / 4) +
                        (c % ib) / 4) *
                           ob * 4 +
                       (o % ob) * 4 + c % 4;
          dst[to] = src[((o * in + c) * kh + y) * kw + x];
        }
  return packed;
}

// NCHW uint8 data in NCHW{in_block}c, its channels padded to the plan's (with the zero point:
// the extra channels meet zero weights, so any value would do).
ir::Expr blocked_data(const ir::Expr& nchw, const ir::Expr& zero_point, const Int8ConvPlan& plan) {
  ir::Expr data = nchw;
  if (plan.padded_in != plan.in_channels)
    data = ir::call_op(
        "nn.pad", {data, zero_point},
        ir::make_op_attrs(
            "nn.pad",
            {{"pad_width",
              std::vector<int64_t>{0, 0, 0, plan.padded_in - plan.in_channels, 0, 0, 0, 0}}}));
  return ir::transform_layout(data, "NCHW", ir::blocked_layout(plan.in_block));
}

// OIHW (C, 1, KH, KW) -> (C/b, 1, KH, KW, 1, b).
Tensor pack_depthwise_weight(const Tensor& weight, int64_t block) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t channels = s[0], taps = s[2] * s[3];
  Tensor packed = Tensor::zeros({channels / block, 1, s[2], s[3], 1, block}, weight.dtype());
  const auto* src = static_cast<const int8_t*>(weight.data());
  auto* dst = static_cast<int8_t*>(packed.data());
  ANVIL_ICHECK(weight.dtype() == DataType::int8(), "int8 weights expected, got ",
               weight.dtype().to_string());
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t t = 0; t < taps; ++t)
      dst[((c / block) * taps + t) * block + c % block] = src[c * taps + t];
  return packed;
}

// The weight as int8: uint8 weights shifted by -128 (their zero point moved in the plan).
Tensor signed_weight(const Tensor& weight, const Int8ConvPlan& plan) {
  if (!plan.unsigned_weights) return weight;
  Tensor shifted = Tensor::empty(weight.shape_vector(), DataType::int8());
  const auto* src = static_cast<const uint8_t*>(weight.data());
  auto* dst = static_cast<int8_t*>(shifted.data());
  for (int64_t i = 0; i < weight.numel(); ++i) dst[i] = int8_t(int(src[i]) - 128);
  return shifted;
}

// qnn.contrib_conv2d_NCHWc (or the depthwise op) of blocked data by the int8 OIHW weight,
// packed for the plan: the sum of x * w, x padded with zx, in NCHW{out_block}c.
ir::Expr blocked_product(const ir::Expr& data, const Tensor& weight, const ir::Expr& zero_point,
                         const Int8ConvPlan& plan, const ir::Conv2DAttrs* conv) {
  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  if (conv) {
    attrs->strides = conv->strides;
    attrs->padding = conv->padding;
    attrs->dilation = conv->dilation;
  }
  attrs->channels = plan.stored_out;
  attrs->kernel_size = {weight.shape()[2], weight.shape()[3]};
  attrs->data_layout = "NCHW" + std::to_string(plan.in_block) + "c";
  attrs->kernel_layout =
      "OIHW" + std::to_string(plan.in_block / 4) + "i" + std::to_string(plan.out_block) + "o4i";
  attrs->out_layout = "NCHW" + std::to_string(plan.out_block) + "c";
  if (plan.depthwise) {
    attrs->groups = plan.in_channels;
    attrs->kernel_layout = "OIHW1i" + std::to_string(plan.out_block) + "o";
    ir::Expr packed = ir::ConstantNode::make(pack_depthwise_weight(weight, plan.out_block));
    return ir::call_op("qnn.contrib_depthwise_conv2d_NCHWc", {data, packed, zero_point},
                       ir::Attrs(attrs));
  }
  attrs->groups = plan.groups;
  ir::Expr packed = ir::ConstantNode::make(pack_int8_weight(weight, plan));
  return ir::call_op("qnn.contrib_conv2d_NCHWc", {data, packed, zero_point}, ir::Attrs(attrs));
}

// With weight zero points zw: the term zw[o] * S of each output (to subtract), S the sum of the
// input window the output reads, padding included (zx there, as the convolution reads it): the
// same convolution by weights of 1. A plain convolution's window is every input channel, the
// same for all outputs, so one output block of it serves all (each lane holds S, broadcast
// over the channel chunks); grouped and depthwise windows differ by group, so S takes the
// convolution's own shape there (twice the work, still the blocked kernel).
ir::Expr weight_zero_point_term(const ir::Expr& data, const Tensor& weight,
                                const ir::Expr& zero_point, const Int8ConvPlan& plan,
                                const ir::Conv2DAttrs* conv) {
  const bool shared = plan.groups == 1 && !plan.depthwise;
  Int8ConvPlan ones_plan = plan;
  std::vector<int64_t> shape = weight.shape_vector();
  if (shared) {
    ones_plan.out_channels = ones_plan.stored_out = plan.out_block;
    shape[0] = plan.out_block;
  }
  Tensor ones = Tensor::empty(shape, DataType::int8());
  std::fill_n(static_cast<int8_t*>(ones.data()), ones.numel(), int8_t(1));
  Tensor zw =
      Tensor::zeros({1, plan.stored_out / plan.out_block, 1, 1, plan.out_block}, DataType::int32());
  auto* z = static_cast<int32_t*>(zw.data());
  for (int64_t o = 0; o < plan.out_channels; ++o)
    z[o] = int32_t(plan.weight_zero_points[size_t(o)]);
  return ir::call_op("multiply", {blocked_product(data, ones, zero_point, ones_plan, conv),
                                  ir::ConstantNode::make(zw)});
}

// The sum of (x - zx) * (w - zw) in NCHW{out_block}c, stored_out channels: the blocked product,
// plus zx * (K * zw - sum(w)) per output channel (K the window's size), minus zw * S with
// weight zero points (weight_zero_point_term).
ir::Expr blocked_int8_conv(const ir::Expr& data, const Tensor& raw_weight,
                           const ir::Expr& zero_point, const Int8ConvPlan& plan,
                           const ir::Conv2DAttrs* conv) {
  const Tensor weight = signed_weight(raw_weight, plan);
  ir::Expr out = blocked_product(data, weight, zero_point, plan, conv);
  const bool asymmetric = !plan.weight_zero_points.empty();
  if (plan.data_zero_point != 0 || asymmetric) {
    const int64_t taps = weight.numel() / plan.out_channels;
    const auto* w = static_cast<const int8_t*>(weight.data());
    Tensor correction = Tensor::zeros({1, plan.stored_out / plan.out_block, 1, 1, plan.out_block},
                                      DataType::int32());
    auto* c = static_cast<int32_t*>(correction.data());
    for (int64_t o = 0; o < plan.out_channels; ++o) {
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) sum += w[o * taps + t];
      const int64_t zw = asymmetric ? plan.weight_zero_points[size_t(o)] : 0;
      c[o] = int32_t(plan.data_zero_point * (zw * taps - sum));
    }
    if (std::any_of(c, c + correction.numel(), [](int32_t v) { return v != 0; }))
      out = ir::call_op("add", {out, ir::ConstantNode::make(correction)});
  }
  if (!asymmetric) return out;
  return ir::call_op("subtract",
                     {out, weight_zero_point_term(data, weight, zero_point, plan, conv)});
}

LayoutRewrite rewrite_int8_conv(const LayoutArgs& args) {
  auto planned = plan_int8_conv(args.call, args.out_type, args.vector_lanes);
  if (const std::string* why = std::get_if<std::string>(&planned)) throw_error(*why);
  const Int8ConvPlan& plan = std::get<Int8ConvPlan>(planned);
  const Tensor& weight = constant_weight(args);
  ir::Expr zero_point = unsigned_zero_point(plan);
  ir::Expr data = plan.padded_in == plan.in_channels
                      ? as_unsigned(args.data_blocked(plan.in_block), plan)
                      : blocked_data(as_unsigned(args.arg(0), plan), zero_point, plan);
  return LayoutRewrite{
      blocked_int8_conv(data, weight, zero_point, plan, &args.call.attrs_as<ir::Conv2DAttrs>()),
      plan.out_block, plan.stored_out};
}

// qnn.dense (..., K) x (N, K): the rows (every leading index) as pixels of a 1x1 convolution
// over K channels.
std::string check_int8_dense(const ir::CallNode& call, const ir::Type&, int) {
  const auto* data = ir::as<ir::TensorTypeNode>(call.args[0]->checked_type);
  const auto* weight = ir::as<ir::TensorTypeNode>(call.args[1]->checked_type);
  if (!data || !weight || !dense_output_shape(*data, 1))
    return "needs (..., K) data with a static K and at most one symbolic leading dim";
  auto is_8bit = [](DataType t) { return t == DataType::uint8() || t == DataType::int8(); };
  if (!is_8bit(data->dtype) || !is_8bit(weight->dtype) || !weight->shape ||
      weight->shape->size() != 2 || !(*weight->shape)[0].is_static())
    return "needs 8-bit data and (N, K) 8-bit weights";
  if (!ir::constant_data(call.args[2]) || !ir::constant_data(call.args[3]))
    return "the zero points are not constants";
  Int8ConvPlan plan;
  plan.out_channels = (*weight->shape)[0].int_value();
  return with_weights(plan, weight->dtype, *ir::constant_data(call.args[3]));
}

LayoutRewrite rewrite_int8_dense(const LayoutArgs& args) {
  std::string why = check_int8_dense(args.call, args.out_type, args.vector_lanes);
  if (!why.empty()) throw_error(why);
  const Tensor& weight = constant_weight(args);
  const int64_t n = weight.shape()[0], k = weight.shape()[1];
  Int8ConvPlan plan =
      with_data(plan_blocks(k, n, args.vector_lanes), *ir::constant_data(args.call.args[2]),
                ir::as<ir::TensorTypeNode>(args.call.args[0]->checked_type)->dtype);
  why = with_weights(plan, weight.dtype(), *ir::constant_data(args.call.args[3]));
  if (!why.empty()) throw_error(why);
  ir::Expr zero_point = unsigned_zero_point(plan);
  auto reshape = [](const ir::Expr& e, std::vector<int64_t> shape) {
    return ir::call_op("reshape", {e}, ir::make_op_attrs("reshape", {{"newshape", shape}}));
  };
  const auto* data_type = ir::as<ir::TensorTypeNode>(args.call.args[0]->checked_type);
  const std::vector<int64_t> out_shape = *dense_output_shape(*data_type, n);
  // The rows are the convolution's batch, which its schedule tiles kRowTile at a time: a static
  // row count that is no multiple is padded (with the zero point) and the extra rows are
  // sliced off again (197 tokens of a ViT: 200).
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < out_shape.size(); ++d)
    rows = out_shape[d] < 0 ? -1 : rows * out_shape[d];
  const int64_t padded_rows =
      rows > kRowTile && rows % kRowTile != 0 ? (rows + kRowTile - 1) / kRowTile * kRowTile : rows;
  // Input channels are padded to the plan's too (the extra ones meet zero weights).
  ir::Expr rows_in = as_unsigned(reshape(args.arg(0), {-1, k, 1, 1}), plan);
  if (padded_rows != rows || plan.padded_in != k)
    rows_in = ir::call_op(
        "nn.pad", {rows_in, zero_point},
        ir::make_op_attrs("nn.pad",
                          {{"pad_width", std::vector<int64_t>{0, padded_rows - rows, 0,
                                                              plan.padded_in - k, 0, 0, 0, 0}}}));
  // With one pixel, NCHW{b}c holds (rows, channels) row-major: the layout changes are reshapes,
  // and the requantization after the layer reads its int32 rows contiguously.
  ir::Expr data = reshape(rows_in, {-1, plan.padded_in / plan.in_block, 1, 1, plan.in_block});
  ir::Expr out = blocked_int8_conv(data, weight.view({n, k, 1, 1}), zero_point, plan, nullptr);
  out = reshape(out, {-1, plan.stored_out});
  auto slice = [](const ir::Expr& e, int64_t axis, int64_t end) {
    return ir::call_op("strided_slice", {e},
                       ir::make_op_attrs("strided_slice", {{"begin", std::vector<int64_t>{0}},
                                                           {"end", std::vector<int64_t>{end}},
                                                           {"axes", std::vector<int64_t>{axis}}}));
  };
  if (plan.stored_out != n) out = slice(out, 1, n);
  if (padded_rows != rows) out = slice(out, 0, rows);
  return LayoutRewrite{reshape(out, out_shape)};
}

}  // namespace

void register_qnn_strategies() {
  const std::vector<DataType> int8 = {DataType::uint8(), DataType::int8()};
  register_strategy("qnn.conv2d", "x86",
                    {.name = "x86.conv2d_int8",
                     .precisions = int8,
                     .layout_role = LayoutRole::Anchor,
                     .layout = {check_int8_conv, rewrite_int8_conv}});
  register_strategy("qnn.dense", "x86",
                    {.name = "x86.dense_int8",
                     .precisions = int8,
                     .layout_role = LayoutRole::Anchor,
                     .layout = {check_int8_dense, rewrite_int8_dense}});
  // Between blocked int8 convolutions: the quantized adds and products broadcast like float
  // ones, and (de)quantization with one scale and zero point is elementwise.
  for (const char* op : {"qnn.add", "qnn.mul"})
    register_strategy(op, "x86",
                      {.name = "x86.follow_binary",
                       .layout_role = LayoutRole::Follows,
                       .follow = FollowRule::BroadcastBinary});
  for (const char* op : {"qnn.quantize", "qnn.dequantize"})
    register_strategy(op, "x86",
                      {.name = "x86.follow_scalar_parameters",
                       .layout_role = LayoutRole::Follows,
                       .follow = FollowRule::ScalarParameters});
}

}  // namespace anvil::topi::x86
