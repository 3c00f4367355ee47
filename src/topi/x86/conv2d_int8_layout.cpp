// The layout strategy of qnn.conv2d on x86: uint8 data times int8 weights with
// a zero weight zero point becomes qnn.contrib_conv2d_NCHWc (conv2d_int8.cpp) on
// NCHW{ib}c data, the weight packed at compile time four input channels deep
// (OIHW{ib/4}i{ob}o4i). That op sums x * w with the input padded by the data's
// zero point zx; the sum the quantized convolution wants is of (x - zx) * w, so
// the rewrite adds the constant -zx * sum(w) of each output channel after it.
// Input channels that are no multiple of 4 (an RGB image) are padded to one with
// zero weights; output channels that fill no whole block are padded with zero
// weights and sliced off where a consumer needs NCHW.
#include <numeric>
#include <string>
#include <variant>

#include "anvil/ir/attrs/nn.h"
#include "anvil/ir/op.h"
#include "topi/x86/x86_util.h"

namespace anvil::topi::x86 {
namespace {

struct Int8ConvPlan {
  int64_t in_channels = 0, padded_in = 0, in_block = 0;
  int64_t out_channels = 0, out_block = 0, stored_out = 0;
  int64_t data_zero_point = 0;
};

const Tensor* constant_of(const ir::Expr& e) {
  const auto* c = ir::as<ir::ConstantNode>(e);
  return c ? &c->data : nullptr;
}

std::optional<std::vector<ir::Dim>> static_chw(const ir::Type& type, DataType dtype) {
  const auto* t = ir::as<ir::TensorTypeNode>(type);
  if (!t || !t->shape || t->shape->size() != 4 || t->dtype != dtype) return std::nullopt;
  const std::vector<ir::Dim>& dims = *t->shape;
  for (size_t i = 1; i < 4; ++i)
    if (!dims[i].is_static()) return std::nullopt;
  if (dims[0].is_any()) return std::nullopt;
  return dims;
}

std::variant<Int8ConvPlan, std::string> plan_int8_conv(const ir::CallNode& call,
                                                       const ir::Type& out_type, int lanes) {
  const ir::AttrsNode* raw = call.attrs ? call.attrs.get() : call.op()->def->default_attrs.get();
  const auto* a = dynamic_cast<const ir::Conv2DAttrs*>(raw);
  if (!a || call.args.size() != 4) return std::string("not a qnn.conv2d");
  if (a->data_layout != "NCHW" || a->kernel_layout != "OIHW" ||
      !(a->out_layout.empty() || a->out_layout == "NCHW"))
    return "layouts " + a->data_layout + "/" + a->kernel_layout + ": blocked from NCHW/OIHW only";
  if (a->groups != 1)
    return "groups " + std::to_string(a->groups) + ": grouped int8 convolutions are not blocked";
  auto in = static_chw(call.args[0]->checked_type, DataType::uint8());
  auto w = static_chw(call.args[1]->checked_type, DataType::int8());
  auto out = static_chw(out_type, DataType::int32());
  if (!in || !w || !out || !(*w)[0].is_static())
    return std::string("needs uint8 data and int8 weights, NCHW/OIHW with static channels");
  const Tensor* data_zp = constant_of(call.args[2]);
  const Tensor* weight_zp = constant_of(call.args[3]);
  if (!data_zp || !weight_zp) return std::string("the zero points are not constants");
  for (int64_t i = 0; i < weight_zp->numel(); ++i)
    if (weight_zp->get_as_double(i) != 0)
      return std::string("the weight zero point is not 0 (asymmetric weights)");
  Int8ConvPlan plan;
  plan.data_zero_point = int64_t(data_zp->get_as_double(0));
  plan.in_channels = (*in)[1].int_value();
  plan.padded_in = (plan.in_channels + 3) / 4 * 4;
  plan.in_block = plan.padded_in % 16 == 0 ? 16 : plan.padded_in % 8 == 0 ? 8 : 4;
  plan.out_channels = (*out)[1].int_value();
  const int64_t widest = lanes >= 16 ? 16 : 8;
  if (plan.out_channels % widest == 0) {
    plan.out_block = widest;
  } else if (plan.out_channels % 8 == 0) {
    plan.out_block = 8;
  } else {
    plan.out_block = widest;
  }
  plan.stored_out = (plan.out_channels + plan.out_block - 1) / plan.out_block * plan.out_block;
  return plan;
}

std::string check_int8_conv(const ir::CallNode& call, const ir::Type& out_type, int lanes) {
  auto plan = plan_int8_conv(call, out_type, lanes);
  return std::holds_alternative<std::string>(plan) ? std::get<std::string>(plan) : std::string();
}

// OIHW int8 -> (O'/ob, I'/ib, KH, KW, ib/4, ob*4): input channel c = 4q + r of block c / ib and
// output channel o of block o / ob go to [q, 4 (o % ob) + r]; channels past O and I are zero.
Tensor pack_int8_weight(const Tensor& weight, const Int8ConvPlan& p) {
  std::vector<int64_t> s = weight.shape_vector();
  const int64_t out = s[0], in = s[1], kh = s[2], kw = s[3];
  const int64_t ib = p.in_block, ob = p.out_block;
  Tensor packed =
      Tensor::zeros({p.stored_out / ob, p.padded_in / ib, kh, kw, ib / 4, ob * 4}, weight.dtype());
  const auto* src = static_cast<const int8_t*>(weight.data());
  auto* dst = static_cast<int8_t*>(packed.data());
  for (int64_t o = 0; o < out; ++o)
    for (int64_t c = 0; c < in; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x) {
          int64_t to = (((((o / ob) * (p.padded_in / ib) + c / ib) * kh + y) * kw + x) * (ib / 4) +
                        (c % ib) / 4) *
                           ob * 4 +
                       (o % ob) * 4 + c % 4;
          dst[to] = src[((o * in + c) * kh + y) * kw + x];
        }
  return packed;
}

LayoutRewrite rewrite_int8_conv(const LayoutArgs& args) {
  auto planned = plan_int8_conv(args.call, args.out_type, args.vector_lanes);
  if (const std::string* why = std::get_if<std::string>(&planned)) throw_error(*why);
  const Int8ConvPlan& plan = std::get<Int8ConvPlan>(planned);
  const Tensor* weight = constant_of(args.arg(1));
  if (!weight || !weight->is_contiguous())
    throw_error("the weight is not a constant (bind the params to pack it)");
  const auto& a = args.call.attrs_as<ir::Conv2DAttrs>();
  const std::string data_layout = "NCHW" + std::to_string(plan.in_block) + "c";

  ir::Expr zero_point = ir::ConstantNode::make(*constant_of(args.call.args[2]));
  ir::Expr data;
  if (plan.padded_in == plan.in_channels) {
    data = args.data_blocked(plan.in_block);
  } else {
    // The extra channels meet zero weights: any value would do; the zero point keeps the sum
    // of the padding band the same as that of the real channels.
    ir::Expr padded = ir::call_op(
        "nn.pad", {args.arg(0), zero_point},
        ir::make_op_attrs(
            "nn.pad",
            {{"pad_width",
              std::vector<int64_t>{0, 0, 0, plan.padded_in - plan.in_channels, 0, 0, 0, 0}}}));
    data = ir::call_op("layout_transform", {padded},
                       ir::make_op_attrs("layout_transform", {{"src_layout", std::string("NCHW")},
                                                              {"dst_layout", data_layout}}));
  }

  auto attrs = ir::make_attrs<ir::Conv2DAttrs>();
  attrs->strides = a.strides;
  attrs->padding = a.padding;
  attrs->dilation = a.dilation;
  attrs->channels = plan.stored_out;
  attrs->kernel_size = {weight->shape()[2], weight->shape()[3]};
  attrs->data_layout = data_layout;
  attrs->kernel_layout =
      "OIHW" + std::to_string(plan.in_block / 4) + "i" + std::to_string(plan.out_block) + "o4i";
  attrs->out_layout = "NCHW" + std::to_string(plan.out_block) + "c";
  ir::Expr packed = ir::ConstantNode::make(pack_int8_weight(*weight, plan));
  ir::Expr conv =
      ir::call_op("qnn.contrib_conv2d_NCHWc", {data, packed, zero_point}, ir::Attrs(attrs));
  if (plan.data_zero_point != 0) {
    // sum of (x - zx) * w = sum of x * w - zx * sum of w, per output channel.
    const int64_t taps = weight->numel() / plan.out_channels;
    const auto* w = static_cast<const int8_t*>(weight->data());
    Tensor correction = Tensor::zeros({1, plan.stored_out / plan.out_block, 1, 1, plan.out_block},
                                      DataType::int32());
    auto* c = static_cast<int32_t*>(correction.data());
    for (int64_t o = 0; o < plan.out_channels; ++o) {
      int64_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) sum += w[o * taps + t];
      c[o] = int32_t(-plan.data_zero_point * sum);
    }
    conv = ir::call_op("add", {conv, ir::ConstantNode::make(correction)});
  }
  return LayoutRewrite{conv, plan.out_block, plan.stored_out};
}

}  // namespace

void register_conv2d_int8_layout() {
  register_layout("qnn.conv2d",
                  LayoutStrategy{"x86.conv2d_int8", check_int8_conv, rewrite_int8_conv});
}

}  // namespace anvil::topi::x86
